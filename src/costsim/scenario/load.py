"""Read scenario files. Every problem of a file is reported at once, each at its line and
column in plain words (see :mod:`costsim.scenario.problems`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from costsim.errors import ConfigError
from costsim.io.encoding import TextEncodingError, decode_text
from costsim.io.safe_yaml import UniqueKeys
from costsim.scenario.files import expand, find_scenarios
from costsim.scenario.model import Scenario
from costsim.scenario.problems import Locator, Problem, ScenarioError, shown, translate
from costsim.strategies.registry import Step, Variant, make_step
from costsim.strategies.syntax import parse_variant

__all__ = ["LoadedScenario", "find_scenarios", "load_scenario", "prepare_scenario"]


@dataclass(frozen=True, slots=True)
class LoadedScenario:
    path: Path
    """The scenario file; for a scenario built in Python, ``<cwd>/(scenario)``: patterns are
    relative to its folder."""
    scenario: Scenario
    cassettes: tuple[Path, ...]
    variants: tuple[Variant, ...]

    def agent_files(self) -> dict[str, tuple[Path, ...]]:
        problems: list[Problem] = []
        files = {
            name: tuple(_expand(self.path, rule.cassettes, ("agents", name, "cassettes"), problems))
            for name, rule in self.scenario.agents.items()
            if rule.cassettes
        }
        if problems:
            raise ScenarioError(self.path, problems, Locator(None))
        return files


def _expand(
    scenario: Path, patterns: list[str], where: tuple[str | int, ...], problems: list[Problem]
) -> list[Path]:
    """The files ``patterns`` match; each pattern matching none is a problem at ``where``."""
    files, unmatched = expand(scenario, patterns)
    for index in unmatched:
        problems.append(
            Problem(
                (*where, index),
                f"{patterns[index]!r} matches no file (relative to {scenario.parent})",
            )
        )
    return files


def _step(entry: Any, where: tuple[str | int, ...], problems: list[Problem]) -> list[Step]:
    """The steps of one list entry: ``caching``, ``caching:ttl=1h``, ``a & b`` or
    ``{caching: {ttl: 1h}}``."""
    try:
        if isinstance(entry, str):
            return list(parse_variant(entry).steps)
        if isinstance(entry, dict) and len(entry) == 1:
            strategy, params = next(iter(entry.items()))
            if params is not None and not isinstance(params, dict):
                problems.append(
                    Problem(
                        where,
                        f"the parameters of {strategy!r} must be a mapping (key: value), "
                        f"got {shown(params)}",
                    )
                )
                return []
            return [make_step(str(strategy), params or {})]
        if isinstance(entry, dict):
            problems.append(
                Problem(
                    where,
                    f"one strategy per list item, got {len(entry)}: {', '.join(map(str, entry))}",
                )
            )
            return []
        problems.append(
            Problem(
                where,
                "expected a strategy ('caching', 'caching:ttl=1h') or a mapping of one strategy "
                f"to its parameters ({{caching: {{ttl: 1h}}}}), got {shown(entry)}",
            )
        )
    except ConfigError as exc:
        problems.append(Problem(where, str(exc)))
    return []


def _variant(name: str, spec: list[Any] | str, problems: list[Problem]) -> Variant:
    if isinstance(spec, str):
        return Variant(name, tuple(_step(spec, ("variants", name), problems)))
    steps = [
        step
        for index, entry in enumerate(spec)
        for step in _step(entry, ("variants", name, index), problems)
    ]
    return Variant(name, tuple(steps))


class _Loader(UniqueKeys, yaml.SafeLoader):
    """YAML's safe loader, with dates left as text: the scenario's model reads them, so an
    impossible one (``2025-13-45``) is a problem at its line like any other value; and a key
    written twice in one mapping refused (YAML keeps the last, losing the first in silence)."""


def _text(loader: yaml.SafeLoader, node: yaml.Node) -> Any:
    return loader.construct_scalar(node)  # type: ignore[arg-type]


_Loader.add_constructor("tag:yaml.org,2002:timestamp", _text)


def _at(path: Path, text: str, position: int) -> str:
    """``path:line:column`` of a character ``position`` in ``text``."""
    lines = text[:position].splitlines(keepends=True)  # \n, \r\n and \r alike
    if not lines or lines[-1].endswith(("\n", "\r")):
        return f"{path}:{len(lines) + 1}:1"
    return f"{path}:{len(lines)}:{len(lines[-1]) + 1}"


def _refused(exc: yaml.reader.ReaderError) -> str:
    character = exc.character if isinstance(exc.character, int) else ord(exc.character)
    return (
        f"not valid YAML: the control character U+{character:04X} is not allowed in YAML "
        "(a binary or corrupt file?)"
    )


def _parse(path: Path) -> tuple[Any, yaml.Node | None]:
    """The document and its node tree (which knows lines); YAML errors name line, column and
    what the parser expected."""
    try:
        text = decode_text(path.read_bytes())
    except OSError as exc:
        raise ConfigError(f"{path}: cannot be read ({exc.strerror})") from None
    except TextEncodingError as exc:
        raise ConfigError(f"{path}: {exc}") from None
    try:
        loader = _Loader(text)
    except yaml.reader.ReaderError as exc:  # a character YAML refuses anywhere in the text
        raise ConfigError(f"{_at(path, text, exc.position)}: {_refused(exc)}") from None
    try:
        node = loader.get_single_node()
        document = loader.construct_document(node) if node is not None else None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        place = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark is not None else str(path)
        what = "; ".join(filter(None, (exc.problem, exc.context)))
        if "could not determine a constructor for the tag" in what:
            tag = what.split("'")[1] if what.count("'") >= 2 else "?"
            tag = tag.replace("tag:yaml.org,2002:", "!!")
            what = f"the tag {tag} is not allowed (scenarios are read safely: no code runs)"
        if "expected <block end>" in what or "mapping values are not allowed" in what:
            what += " (check the indentation of this line and the lines above it)"
        raise ConfigError(f"{place}: not valid YAML: {what}") from None
    except yaml.reader.ReaderError as exc:
        raise ConfigError(f"{_at(path, text, exc.position)}: {_refused(exc)}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML: {exc}") from None
    except (ValueError, TypeError, OverflowError) as exc:  # a value YAML itself cannot build
        raise ConfigError(f"{path}: a value cannot be read ({exc})") from None
    finally:
        loader.dispose()
    return document, node


def load_scenario(path: Path) -> LoadedScenario:
    """Read and check a scenario file: every problem is reported at once, with its line."""
    document, node = _parse(path)
    locator = Locator(node)
    if not isinstance(document, dict):
        problem = Problem((), "a scenario is a mapping with name, cassettes and variants")
        raise ScenarioError(path, [problem], locator)
    if isinstance(document.get("interactions"), list) and "variants" not in document:
        problem = Problem(
            (),
            "the file is a vcrpy cassette, not a scenario: costsim report and costsim "
            "simulate read cassettes; a scenario lists them under cassettes",
        )
        raise ScenarioError(path, [problem], locator)
    try:
        scenario = Scenario.model_validate(document)
    except ValidationError as exc:
        problems = translate(exc.errors(), Scenario)
        problems += _other_problems(document, path)
        raise ScenarioError(path, problems, locator) from None
    return prepare_scenario(scenario, path, locator)


def _other_problems(document: dict[str, Any], path: Path) -> list[Problem]:
    """The cassette pattern, strategy and budget problems of a file that has others too (so
    all come out at once)."""
    problems: list[Problem] = []
    patterns = document.get("cassettes")
    if isinstance(patterns, list) and all(isinstance(p, str) for p in patterns):
        _expand(path, patterns, ("cassettes",), problems)
    variants = document.get("variants")
    budgets = document.get("budgets")
    if isinstance(variants, dict):
        for name, spec in variants.items():
            if isinstance(spec, list | str):
                _variant(str(name), spec, problems)
        if isinstance(budgets, dict):
            problems += _budget_problems([str(name) for name in budgets], list(map(str, variants)))
    return problems


def _budget_problems(budgets: list[str], variants: list[str]) -> list[Problem]:
    """A budget for a variant the scenario does not have (none when it has no variants at
    all: that is the problem, and its own says so)."""
    if not variants:
        return []
    return [
        Problem(
            ("budgets", name),
            f"no variant named {name!r}; variants: {', '.join(variants)} ('*' for all)",
        )
        for name in budgets
        if name != "*" and name not in variants
    ]


def prepare_scenario(
    scenario: Scenario, path: Path, locator: Locator | None = None
) -> LoadedScenario:
    """Expand a validated scenario's cassette patterns (relative to ``path``'s folder) and
    build its variants; ``path`` names it in errors."""
    problems: list[Problem] = []
    cassettes = tuple(dict.fromkeys(_expand(path, scenario.cassettes, ("cassettes",), problems)))
    variants = tuple(_variant(name, spec, problems) for name, spec in scenario.variants.items())
    problems += _budget_problems(list(scenario.budgets), list(scenario.variants))
    if problems:
        raise ScenarioError(path, problems, locator or Locator(None))
    return LoadedScenario(path, scenario, cassettes, variants)
