"""Which files a scenario reads: the scenario files among some paths, and the cassettes (and
agent cassettes) its glob patterns match. Kept apart from validation so that the files a
comparison depends on can be listed without importing the strategies (see
:mod:`costsim.api.recall`)."""

from __future__ import annotations

import glob
import os
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

import yaml

from costsim.errors import ConfigError, CostsimError
from costsim.io.encoding import decode_text
from costsim.io.walk import Found, find_cassettes, is_scenario_file, sniff_kind

__all__ = ["SCENARIO_SUFFIXES", "ScenarioFiles", "expand", "find_scenarios", "scenario_files"]

SCENARIO_SUFFIXES = (".yaml", ".yml")


def find_scenarios(paths: list[Path]) -> list[Path]:
    """Scenario files among ``paths``; a folder contributes its top-level YAML files, but for
    those that are cassettes."""
    found: list[Path] = []
    cassettes = 0
    for path in paths:
        if path.is_dir():
            top = sorted(p for p in path.iterdir() if p.suffix in SCENARIO_SUFFIXES and p.is_file())
            kept = [p for p in top if sniff_kind(p) != "cassette"]
            cassettes += len(top) - len(kept)
            found.extend(kept)
        elif path.is_file():
            found.append(path)
        else:
            raise ConfigError(f"{path}: no such scenario file or folder")
    if not found:
        where = ", ".join(map(str, paths))
        if cassettes:
            raise ConfigError(
                f"no scenario files in {where}, only vcrpy cassettes ({cassettes}): costsim "
                "report and simulate read cassettes; compare reads scenario files that list them"
            )
        raise ConfigError(f"no scenario files (*.yaml) in {where}")
    return found


def expand(scenario: Path, patterns: list[str]) -> tuple[list[Path], list[int]]:
    """(the files ``patterns`` match, the indexes of the patterns that match none). Patterns
    are globs relative to the scenario's folder; a pattern that names an existing file or
    folder is that path (pytest-recording names parametrised cassettes ``test_x[param].yaml``,
    which as a glob would be a character class); a folder stands for the cassette files
    under it. What a glob or a folder finds leaves out the scenario itself and any other
    scenario file (``*.yaml`` beside the scenario matches it): they are not recordings.

    A glob or a folder's walk passes over a folder it cannot list in silence; such a folder
    is listed among the files instead, so that finding the cassettes (:func:`find_cassettes`)
    says it cannot be read: an error, or a warning with ``lenient``."""
    files: list[Path] = []
    unmatched: list[int] = []
    for index, pattern in enumerate(patterns):
        full = scenario.parent / pattern
        if full.exists() and not full.is_dir():  # a FIFO or a device too: the walk says so
            files.append(full)  # named: kept as it is (its load says what it is)
            continue
        closed: list[Path] = []
        if full.exists():
            found = _under(full, closed)
        else:
            matches = sorted(Path(p) for p in glob.glob(str(full), recursive=True))
            found = []
            for match in matches:
                found.extend(_under(match, closed) if match.is_dir() else [match])
            closed += _unlisted(full)
            if not matches and not closed:
                unmatched.append(index)
        files.extend(p for p in found if not _is_scenario(p, scenario))
        files.extend(dict.fromkeys(closed))
    return files, unmatched


def _under(folder: Path, closed: list[Path]) -> list[Path]:
    """The cassette-suffixed files under ``folder``; the folders it holds that cannot be
    listed are added to ``closed``."""
    closed += _closed(folder, hidden=True)
    return sorted(p for p in folder.rglob("*") if p.suffix in (".yaml", ".yml", ".json"))


def _closed(root: Path, *, hidden: bool) -> list[Path]:
    """The folders under ``root`` (itself included) that cannot be listed, links not followed
    (as pathlib's and glob's walks); ``hidden``: hidden folders too (``glob``'s ``**`` leaves
    them out)."""
    closed: list[Path] = []

    def refused(error: OSError) -> None:
        if error.filename is not None:
            closed.append(Path(error.filename))

    for _, folders, _ in os.walk(root, onerror=refused):
        if not hidden:
            folders[:] = [name for name in folders if not name.startswith(".")]
    return closed


def _unlisted(pattern: Path) -> list[Path]:
    """Folders a glob has to list to match ``pattern`` that cannot be listed: every folder
    under where a ``**`` starts; else those the pattern's folder part names or matches."""
    parts = pattern.parts
    magic = [i for i, part in enumerate(parts) if glob.has_magic(part)]
    if not magic:
        return []
    base = Path(*parts[: magic[0]]) if magic[0] else Path(".")
    if any("**" in part for part in parts):
        return _closed(base, hidden=False) if base.is_dir() else []
    parent = pattern.parent
    folders = glob.glob(str(parent)) if glob.has_magic(str(parent)) else [str(parent)]
    return [Path(folder) for folder in folders if _refused(Path(folder))]


def _refused(folder: Path) -> bool:
    try:
        with os.scandir(folder):
            return False
    except (NotADirectoryError, FileNotFoundError):
        return False
    except OSError:
        return True


def _is_scenario(path: Path, scenario: Path) -> bool:
    """``path`` is the scenario itself, or another scenario beside it (only files in the
    scenario's own folder are looked at: a cassette folder's thousand files cost nothing)."""
    if path.parent != scenario.parent:
        return False
    try:
        if path.samefile(scenario):
            return True
    except OSError:
        return False
    return is_scenario_file(path)


@dataclass(frozen=True, slots=True)
class ScenarioFiles:
    """What a scenario file reads: its own bytes, its cassettes, its agents' files."""

    data: bytes
    cassettes: Found
    agents: dict[str, tuple[Path, ...]]
    rule_days: tuple[date, ...] | None = ()
    """The days its caching-rule overrides start on; None when one is not a plain date (as
    the full load reads it)."""


def _rule_days(value: Any) -> tuple[date, ...] | None:
    """The ``since`` days of a scenario's ``model_rules`` as written."""
    if value is None:
        return ()
    if not isinstance(value, list):
        return None
    days: list[date] = []
    for rule in value:
        since = rule.get("since") if isinstance(rule, dict) else None
        if since is None:
            continue
        if isinstance(since, str):
            try:
                since = date.fromisoformat(since)
            except ValueError:
                return None
        if type(since) is not date:  # a datetime, a number: whatever the full load makes of it
            return None
        days.append(since)
    return tuple(days)


def _patterns(value: Any) -> list[str] | None:
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return value
    return None


def scenario_files(path: Path) -> ScenarioFiles | None:
    """The files the scenario at ``path`` reads, found as :func:`load_scenario` finds them
    but without validating the rest; None when the file does not read as a scenario (the
    full load then reports why)."""
    try:
        data = path.read_bytes()
        document = yaml.safe_load(decode_text(data))
    except (OSError, yaml.YAMLError, ValueError):  # a TextEncodingError is a ValueError
        return None
    if not isinstance(document, dict):
        return None
    patterns = _patterns(document.get("cassettes"))
    agents = document.get("agents") or {}
    if patterns is None or not isinstance(agents, dict):
        return None
    matched, unmatched = expand(path, patterns)
    cassettes = list(dict.fromkeys(matched))
    roles: dict[str, tuple[Path, ...]] = {}
    for name, rule in agents.items():
        listed = _patterns(rule.get("cassettes", [])) if isinstance(rule, dict) else None
        if listed is None:
            return None
        files, missing = expand(path, listed)
        roles[str(name)] = tuple(files)
        unmatched += missing
    if unmatched:
        return None
    try:
        found = find_cassettes(cassettes)
    except CostsimError:
        return None
    return ScenarioFiles(data, found, roles, _rule_days(document.get("model_rules")))
