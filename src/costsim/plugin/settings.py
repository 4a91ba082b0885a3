"""The plugin's settings under ``[tool.costsim]`` in ``pyproject.toml``, read only when it is on.

The switch itself is a pytest ini option (``costsim = true`` under ``[tool.pytest.ini_options]``,
or ``--costsim``), so a run without costsim never reads a file on its behalf.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from costsim.api.gates import Budget, parse_tolerances
from costsim.errors import ConfigError

__all__ = ["DriftMode", "PluginSettings", "validated"]

DriftMode = Literal["warn", "fail", "ignore"]


class PluginSettings(BaseModel):
    """The keys of ``[tool.costsim]`` the plugin uses (other keys belong to the CLI)."""

    model_config = ConfigDict(extra="ignore", frozen=True, strict=True)

    budgets: list[Any] = Field(default_factory=list)
    unpriced_fallback: str | None = None
    """Tolerances a cost gate falls back to on a test with unpriced calls, e.g.
    ``"prompt_tokens:5%,output_tokens:10%"`` (default: both token counts at the cost tolerance)."""
    drift: DriftMode | None = None
    calibration: str | None = None
    """The token estimator's calibration saved by ``costsim calibrate --save`` (relative to the
    pyproject.toml); the CLI reads the same key."""
    costsim: bool | None = None
    """In costsim 0.1 this key turned the plugin on; that is now ``[tool.pytest.ini_options]``'s."""

    def pattern_budgets(self) -> list[tuple[str, Budget]]:
        found = []
        for index, entry in enumerate(self.budgets):
            where = f"[tool.costsim] budgets[{index}]"
            if not isinstance(entry, dict):
                raise ConfigError(
                    f"{where} must be a table such as "
                    '{pattern = "tests/agents/*", prompt_tokens = 50000}'
                )
            if not isinstance(entry.get("pattern"), str):
                raise ConfigError(f"{where} needs a 'pattern' string (a test id glob)")
            found.append((entry["pattern"], Budget.parse(entry, where)))
        return found

    def calibration_file(self, project: Path) -> Path | None:
        """The saved calibration, checked now (a bad file is a usage error before any test
        runs); None: the shipped one."""
        from costsim.api.gates import calibration_path, read_calibration

        calibration = calibration_path(project, self.calibration)
        if calibration is not None:
            read_calibration(calibration)
        return calibration

    def fallback(self) -> dict[str, float] | None:
        """The token tolerances a cost gate falls back to (never cost, never none)."""
        if self.unpriced_fallback is None:
            return None
        tolerances = parse_tolerances(self.unpriced_fallback)
        if not tolerances or "cost" in tolerances:
            raise ConfigError(
                f"[tool.costsim] unpriced_fallback {self.unpriced_fallback!r} must name token "
                "or call tolerances (e.g. 'prompt_tokens:5%'), not cost: the cost is what is "
                "unknown"
            )
        return tolerances


def validated(path: Path, table: dict[str, Any]) -> PluginSettings:
    """``[tool.costsim]`` of ``path`` (its ``table``), checked."""
    try:
        settings = PluginSettings.model_validate(table)
    except ValidationError as exc:
        error = exc.errors()[0]
        key = ".".join(str(part) for part in error["loc"]) or "[tool.costsim]"
        raise ConfigError(
            f"{path}: [tool.costsim] {key}: {error['msg']} (got {error.get('input')!r})"
        ) from None
    try:
        settings.fallback()
        settings.pattern_budgets()
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from None
    return settings
