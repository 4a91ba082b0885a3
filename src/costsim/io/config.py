"""``[tool.costsim]`` in the nearest ``pyproject.toml``: settings the command line reads.

Only what the CLI needs is read here (the pytest plugin reads its own settings through pytest).
"""

from __future__ import annotations

import difflib
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from costsim.errors import ConfigError

__all__ = [
    "KNOWN_KEYS",
    "SettingsError",
    "calibration_path",
    "checked_table",
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
    "warm",
)
"""Every setting of ``[tool.costsim]``: the commands' (``jobs``, ``cache``, ``scheduler``,
``calibration``, ``secrets``) and the pytest plugin's (``budgets``, ``unpriced_fallback``,
``drift``, ``warm``; ``costsim`` is costsim 0.1's switch, which the plugin explains)."""


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


class SettingsError(ConfigError):
    """Everything wrong in one ``[tool.costsim]`` table, reported at once (as a scenario
    file's problems are): one sentence each, naming the file."""

    def __init__(self, path: Path | None, problems: list[str]) -> None:
        self.problems = problems
        place = f"{path}: " if path is not None else ""
        if len(problems) == 1:
            message = f"{place}[tool.costsim] {problems[0]}"
        else:
            message = f"{place}[tool.costsim] has {len(problems)} problems\n" + "\n".join(
                f"  {place}[tool.costsim] {problem}" for problem in problems
            )
        super().__init__(message)


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


_BUDGET_EXAMPLE = '{pattern = "tests/agents/*", prompt_tokens = 50000}'


def _budget_problems(value: object) -> list[str]:
    if not isinstance(value, list):
        return [f"budgets must be a list of tables such as {_BUDGET_EXAMPLE}"]
    problems = []
    for index, entry in enumerate(value):
        if not isinstance(entry, dict):
            problems.append(f"budgets[{index}] must be a table such as {_BUDGET_EXAMPLE}")
        elif not isinstance(entry.get("pattern"), str):
            problems.append(f"budgets[{index}] needs a 'pattern' string (a test id glob)")
    return problems


def _secrets_problems(value: object) -> list[str]:
    ignore = value.get("ignore", []) if isinstance(value, dict) else None
    if not isinstance(ignore, list) or not all(isinstance(item, str) for item in ignore):
        return ["secrets.ignore must be a list of rule names, such as ['bot-management-cookie']"]
    return []


def _one(test: Callable[[object], bool], message: str) -> Callable[[object], list[str]]:
    return lambda value: [] if test(value) else [message]


_CHECKS: dict[str, Callable[[object], list[str]]] = {
    "budgets": _budget_problems,
    "cache": _one(lambda v: isinstance(v, bool), "cache must be true or false"),
    "calibration": _one(
        lambda v: isinstance(v, str) and bool(v),
        "calibration must be the path of a file saved by 'costsim calibrate --save'",
    ),
    "costsim": _one(lambda v: isinstance(v, bool), "costsim must be true or false"),
    "drift": _one(lambda v: v in ("warn", "fail", "ignore"), "drift must be warn, fail or ignore"),
    "jobs": _one(_whole, "jobs must be a whole number of at least 1"),
    "scheduler": _one(lambda v: isinstance(v, str), "scheduler must be an address string"),
    "secrets": _secrets_problems,
    "unpriced_fallback": _one(
        lambda v: isinstance(v, str),
        "unpriced_fallback must be a string such as 'prompt_tokens:5%'",
    ),
    "warm": _one(lambda v: v in ("steady", "first"), "warm must be steady or first"),
}
"""What each setting of :data:`KNOWN_KEYS` must be, checked when the table is read (the
commands and the pytest plugin check their meaning further where they use them)."""


def _problems(table: dict[str, Any]) -> dict[str, list[str]]:
    """Each setting's problems, by key."""
    problems: dict[str, list[str]] = {}
    for key, value in table.items():
        check = _CHECKS.get(key)
        if check is not None:
            found = [f"{problem} (got {value!r})" for problem in check(value)]
        else:
            close = difflib.get_close_matches(key, KNOWN_KEYS, n=1)
            hint = f"did you mean {close[0]!r}?" if close else f"known: {', '.join(KNOWN_KEYS)}"
            found = [
                f"has no setting {key!r} ({hint}); a setting costsim does not know would be "
                "ignored, and a gate it was meant to set would not run"
            ]
        if found:
            problems[key] = found
    return problems


def checked_table(path: Path) -> tuple[dict[str, Any], list[str]]:
    """The ``[tool.costsim]`` table of ``path`` without its settings that are not known or
    not of their kind, and what is wrong with those (a user who reads everything wrong at
    once fixes the file once); a file that is not TOML is a :class:`ConfigError`."""
    if not path.is_file():
        return {}, []
    try:
        document = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: cannot be read as TOML ({exc})") from None
    table = document.get("tool", {}).get("costsim", {})
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.costsim] must be a table")
    problems = _problems(table)
    kept = {key: value for key, value in table.items() if key not in problems}
    return kept, [problem for found in problems.values() for problem in found]


def tool_table(path: Path) -> dict[str, Any]:
    """The ``[tool.costsim]`` table of the pyproject.toml at ``path`` (empty when absent),
    every setting known and of its kind (else a :class:`SettingsError` with every problem)."""
    table, problems = checked_table(path)
    if problems:
        raise SettingsError(path, problems)
    return table


def secrets_ignore(start: Path | None = None) -> tuple[str, ...]:
    """Rule ids listed under ``[tool.costsim] secrets.ignore`` (checked by :func:`tool_table`)."""
    _, table = tool_config(start)
    secrets = table.get("secrets", {})
    return tuple(secrets.get("ignore", []))


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
