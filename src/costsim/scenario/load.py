"""Read scenario files; every error names the file, the key path and the offending value."""

from __future__ import annotations

import glob
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from costsim.errors import ConfigError
from costsim.scenario.model import Scenario, StrategyEntry
from costsim.strategies.registry import Step, Variant, make_step

__all__ = ["LoadedScenario", "find_scenarios", "load_scenario", "prepare_scenario"]

SCENARIO_SUFFIXES = (".yaml", ".yml")


@dataclass(frozen=True, slots=True)
class LoadedScenario:
    path: Path
    """The scenario file; for a scenario built in Python, ``<cwd>/(scenario)``: patterns are
    relative to its folder."""
    scenario: Scenario
    cassettes: tuple[Path, ...]
    variants: tuple[Variant, ...]

    def agent_files(self) -> dict[str, tuple[Path, ...]]:
        return {
            name: tuple(_expand(self.path, rule.cassettes, f"agents.{name}.cassettes"))
            for name, rule in self.scenario.agents.items()
            if rule.cassettes
        }


def find_scenarios(paths: list[Path]) -> list[Path]:
    """Scenario files among ``paths``; a folder contributes its top-level YAML files."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found.extend(
                sorted(p for p in path.iterdir() if p.suffix in SCENARIO_SUFFIXES and p.is_file())
            )
        elif path.is_file():
            found.append(path)
        else:
            raise ConfigError(f"{path}: no such scenario file or folder")
    if not found:
        raise ConfigError(f"no scenario files (*.yaml) in {', '.join(map(str, paths))}")
    return found


def _location(loc: tuple[Any, ...]) -> str:
    return ".".join(str(part) for part in loc) or "(top level)"


def _expand(scenario: Path, patterns: list[str], where: str) -> list[Path]:
    files: list[Path] = []
    for index, pattern in enumerate(patterns):
        full = scenario.parent / pattern
        matches = sorted(Path(p) for p in glob.glob(str(full), recursive=True))
        if not matches:
            raise ConfigError(f"{scenario}: {where}.{index}: {pattern!r} matches no file")
        for match in matches:
            if match.is_dir():
                files.extend(
                    sorted(p for p in match.rglob("*") if p.suffix in (".yaml", ".yml", ".json"))
                )
            else:
                files.append(match)
    return files


def _steps(path: Path, name: str, entries: list[StrategyEntry]) -> tuple[Step, ...]:
    steps = []
    for index, entry in enumerate(entries):
        where = f"{path}: variants.{name}.{index}"
        params: dict[str, Any] | None
        if isinstance(entry, str):
            strategy, params = entry, {}
        elif len(entry) == 1:
            strategy, params = next(iter(entry.items()))
        else:
            raise ConfigError(f"{where}: one strategy per list item, got {sorted(entry)}")
        try:
            steps.append(make_step(strategy, params or {}, where=where))
        except ConfigError as exc:
            message = str(exc)
            raise ConfigError(
                message if message.startswith(where) else f"{where}: {message}"
            ) from None
    return tuple(steps)


def load_scenario(path: Path) -> LoadedScenario:
    try:
        document = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{path}: cannot be read ({exc.strerror})") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        raise ConfigError(f"{path}: not valid YAML{where}") from None
    if not isinstance(document, dict):
        raise ConfigError(f"{path}: a scenario is a mapping with name, cassettes and variants")
    try:
        scenario = Scenario.model_validate(document)
    except ValidationError as exc:
        error = exc.errors()[0]
        value = error.get("input")
        shown = repr(value) if not isinstance(value, dict) else "a mapping"
        raise ConfigError(
            f"{path}: {_location(error['loc'])}: {error['msg']} (got {shown})"
        ) from None
    return prepare_scenario(scenario, path)


def prepare_scenario(scenario: Scenario, path: Path) -> LoadedScenario:
    """Expand a validated scenario's cassette patterns (relative to ``path``'s folder) and
    build its variants; ``path`` names it in errors."""
    cassettes = tuple(dict.fromkeys(_expand(path, scenario.cassettes, "cassettes")))
    variants = tuple(
        Variant(name, _steps(path, name, entries)) for name, entries in scenario.variants.items()
    )
    unknown = set(scenario.budgets) - set(scenario.variants) - {"*"}
    if unknown:
        raise ConfigError(
            f"{path}: budgets.{sorted(unknown)[0]}: no such variant; "
            f"variants: {', '.join(scenario.variants)}"
        )
    return LoadedScenario(path, scenario, cassettes, variants)
