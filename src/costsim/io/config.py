"""``[tool.costsim]`` in the nearest ``pyproject.toml``: settings the command line reads.

Only what the CLI needs is read here (the pytest plugin reads its own settings through pytest).
"""

from __future__ import annotations

import difflib
import tomllib
from pathlib import Path
from typing import Any

from costsim.errors import ConfigError

__all__ = [
    "KNOWN_KEYS",
    "calibration_path",
    "find_pyproject",
    "secrets_ignore",
    "tool_config",
    "tool_table",
]


KNOWN_KEYS = (
    "budgets",
    "cache",
    "calibration",
    "costsim",
    "drift",
    "jobs",
    "scheduler",
    "secrets",
    "unpriced_fallback",
)
"""Every setting of ``[tool.costsim]``: the commands' (``jobs``, ``cache``, ``scheduler``,
``calibration``, ``secrets``) and the pytest plugin's (``budgets``, ``unpriced_fallback``,
``drift``; ``costsim`` is costsim 0.1's switch, which the plugin explains)."""


def find_pyproject(start: Path) -> Path | None:
    """The ``pyproject.toml`` in ``start`` or the nearest folder above it."""
    for folder in (start, *start.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            return candidate
    return None


def tool_config(start: Path | None = None) -> tuple[Path | None, dict[str, Any]]:
    """(the file, its ``[tool.costsim]`` table); an empty table when there is none."""
    path = find_pyproject((start or Path.cwd()).resolve())
    if path is None:
        return None, {}
    return path, tool_table(path)


def tool_table(path: Path) -> dict[str, Any]:
    """The ``[tool.costsim]`` table of the pyproject.toml at ``path`` (empty when absent)."""
    if not path.is_file():
        return {}
    try:
        document = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: cannot be read as TOML ({exc})") from None
    table = document.get("tool", {}).get("costsim", {})
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.costsim] must be a table")
    for key in table:
        if key not in KNOWN_KEYS:
            close = difflib.get_close_matches(key, KNOWN_KEYS, n=1)
            hint = f"did you mean {close[0]!r}?" if close else f"known: {', '.join(KNOWN_KEYS)}"
            raise ConfigError(
                f"{path}: [tool.costsim] has no setting {key!r} ({hint}); a setting costsim "
                "does not know would be ignored, and a gate it was meant to set would not run"
            )
    return table


def secrets_ignore(start: Path | None = None) -> tuple[str, ...]:
    """Rule ids listed under ``[tool.costsim] secrets.ignore``."""
    path, table = tool_config(start)
    secrets = table.get("secrets", {})
    ignore = secrets.get("ignore", []) if isinstance(secrets, dict) else None
    if not isinstance(ignore, list) or not all(isinstance(item, str) for item in ignore):
        raise ConfigError(
            f"{path}: [tool.costsim] secrets.ignore must be a list of rule names, "
            f"such as ['bot-management-cookie']"
        )
    return tuple(ignore)


def calibration_path(pyproject: Path | None, value: object) -> Path | None:
    """``[tool.costsim] calibration`` of ``pyproject``: the saved calibration's path (relative
    to the pyproject.toml's folder); None when not set. Anything but a path string, an empty
    one included, is a :class:`ConfigError` (the CLI and the pytest plugin read it alike)."""
    if value is None or pyproject is None:
        return None
    if not isinstance(value, str) or not value:
        raise ConfigError(
            f"{pyproject}: [tool.costsim] calibration must be the path of a file saved by "
            "'costsim calibrate --save'"
        )
    return pyproject.parent / value
