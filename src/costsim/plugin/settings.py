"""The plugin's settings under ``[tool.costsim]`` in ``pyproject.toml``, read only when it is on.

The switch itself is a pytest ini option (``costsim = true`` under ``[tool.pytest.ini_options]``,
or ``--costsim``), so a run without costsim never reads a file on its behalf.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from costsim.api.gates import Budget, SettingsError, parse_tolerances
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
    warm: str | None = None
    """Warm starts of requests the code now sends differently: steady or first (see
    ``--costsim-warm``)."""
    calibration: str | None = None
    """The token estimator's calibration saved by ``costsim calibrate --save`` (relative to the
    pyproject.toml); the CLI reads the same key."""
    costsim: bool | None = None
    """In costsim 0.1 this key turned the plugin on; that is now ``[tool.pytest.ini_options]``'s."""

    def pattern_budgets(self) -> list[tuple[str, Budget]]:
        """Each ``budgets`` entry's pattern and budget (:func:`tool_table` checked that each
        is a table with a pattern; a budget key that is not one raises here)."""
        return [
            (entry["pattern"], Budget.parse(entry, f"[tool.costsim] budgets[{index}]"))
            for index, entry in enumerate(self.budgets)
        ]

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
        try:
            tolerances = parse_tolerances(self.unpriced_fallback)
        except ConfigError as exc:
            raise ConfigError(f"[tool.costsim] unpriced_fallback: {exc}") from None
        if not tolerances or "cost" in tolerances:
            raise ConfigError(
                f"[tool.costsim] unpriced_fallback {self.unpriced_fallback!r} must name token "
                "or call tolerances (e.g. 'prompt_tokens:5%'), not cost: the cost is what is "
                "unknown"
            )
        return tolerances


def validated(
    path: Path, table: dict[str, Any], problems: list[str] | None = None
) -> PluginSettings:
    """``[tool.costsim]`` of ``path`` (its ``table``, checked by kind; ``problems``: what that
    check found), checked for meaning: every problem at once."""
    problems = list(problems or ())
    try:
        settings = PluginSettings.model_validate(table)
    except ValidationError as exc:
        problems.extend(_problem(error) for error in exc.errors())
        raise SettingsError(path, problems) from None
    for check in (settings.fallback, *_budget_checks(settings)):
        try:
            check()
        except ConfigError as exc:
            problems.append(str(exc).removeprefix("[tool.costsim] "))
    if problems:
        raise SettingsError(path, problems)
    return settings


def _budget_checks(settings: PluginSettings) -> list[Callable[[], Budget]]:
    return [
        partial(Budget.parse, entry, f"[tool.costsim] budgets[{index}]")
        for index, entry in enumerate(settings.budgets)
    ]


def _problem(error: Any) -> str:
    key = ".".join(str(part) for part in error["loc"]) or "[tool.costsim]"
    return f"{key}: {error['msg']} (got {error.get('input')!r})"
