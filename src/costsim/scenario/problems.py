"""Scenario-file problems in plain words, each at its file, line and column.

A scenario file is parsed once into YAML nodes (which know where they are) and once into
data; every problem found in the data (pydantic's, the strategies', the cassette patterns')
is a :class:`Problem` at a key path (``variants.cache.0``), placed on its line by
:class:`Locator`. All problems of a file are reported together, in file order.
"""

from __future__ import annotations

import difflib
import types
import typing
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Union

import yaml
from pydantic import BaseModel
from pydantic_core import ErrorDetails

from costsim.errors import ConfigError
from costsim.strategies.registry import bound_words

__all__ = ["Locator", "Problem", "ScenarioError", "shown", "translate"]


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong in a scenario file: where (a key path), and what, in a sentence."""

    where: tuple[str | int, ...]
    message: str


class Locator:
    """Line and column of a key path in a YAML document (1-based)."""

    def __init__(self, root: yaml.Node | None) -> None:
        self.root = root

    def find(self, where: Sequence[str | int]) -> tuple[int, int] | None:
        node = self.root
        if node is None:
            return None
        mark = node.start_mark
        for part in where:
            if isinstance(node, yaml.MappingNode):
                pair = next((kv for kv in node.value if str(kv[0].value) == str(part)), None)
                if pair is None:
                    break
                mark, node = pair[0].start_mark, pair[1]
            elif isinstance(node, yaml.SequenceNode) and isinstance(part, int):
                if part >= len(node.value):
                    break
                node = node.value[part]
                mark = node.start_mark
            else:
                break
        return mark.line + 1, mark.column + 1


def _path_text(where: Sequence[str | int]) -> str:
    return ".".join(str(part) for part in where) or "(top level)"


class ScenarioError(ConfigError):
    """Everything wrong in one scenario file, each problem a sentence at its line."""

    def __init__(self, path: Path, problems: Sequence[Problem], locator: Locator) -> None:
        self.path = path
        placed = []
        for problem in problems:
            found = locator.find(problem.where)
            place = f"{path}:{found[0]}:{found[1]}" if found else str(path)
            placed.append(
                (found or (0, 0), f"{place}: {_path_text(problem.where)}: {problem.message}")
            )
        self.lines = [line for _, line in sorted(placed, key=lambda item: item[0])]
        if len(self.lines) == 1:
            message = self.lines[0]
        else:
            message = f"{path}: {len(self.lines)} problems\n" + "\n".join(
                f"  {line}" for line in self.lines
            )
        super().__init__(message)


def shown(value: Any) -> str:
    """A value the way a problem quotes it."""
    if isinstance(value, dict):
        return "a mapping" if value else "an empty mapping"
    if isinstance(value, list):
        return "a list" if value else "an empty list"
    if value is None:
        return "nothing"
    return repr(value)


def _field_names(model: type[BaseModel], where: Sequence[str | int]) -> list[str]:
    """The keys valid at ``where`` (a path to a mapping) in ``model``."""
    current: Any = model
    for part in where:
        if isinstance(part, int):
            current = typing.get_args(current)[0] if typing.get_args(current) else None
        elif isinstance(current, type) and issubclass(current, BaseModel):
            field = current.model_fields.get(str(part))
            current = field.annotation if field is not None else None
        elif typing.get_origin(current) is dict:
            current = typing.get_args(current)[1]
        else:
            return []
        if typing.get_origin(current) in (Union, types.UnionType):
            kept = [arg for arg in typing.get_args(current) if arg is not type(None)]
            current = kept[0] if len(kept) == 1 else None
    if isinstance(current, type) and issubclass(current, BaseModel):
        return list(current.model_fields)
    return []


def unknown_key(key: str, valid: Sequence[str], what: str = "key") -> str:
    close = difflib.get_close_matches(key, list(valid), n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    listed = f" Valid: {', '.join(valid)}." if valid else ""
    return f"unknown {what} {key!r}{hint}{listed}"


_WORDS = {
    "string_type": "expected text",
    "int_type": "expected a whole number",
    "int_parsing": "expected a whole number",
    "int_from_float": "expected a whole number",
    "float_type": "expected a number",
    "float_parsing": "expected a number",
    "bool_type": "expected true or false",
    "bool_parsing": "expected true or false",
    "list_type": "expected a list (lines starting with '- ', or [a, b])",
    "dict_type": "expected a mapping (key: value lines, or {key: value})",
    "model_type": "expected a mapping (key: value lines, or {key: value})",
    "date_type": "expected a date (YYYY-MM-DD)",
    "date_parsing": "expected a date (YYYY-MM-DD)",
    "date_from_datetime_parsing": "expected a date (YYYY-MM-DD)",
    "date_from_datetime_inexact": "expected a date (YYYY-MM-DD), not a time",
}


def _sentence(error: ErrorDetails, model: type[BaseModel]) -> str:
    kind = error["type"]
    loc = tuple(error["loc"])
    ctx = error.get("ctx") or {}
    got = shown(error.get("input"))
    if kind == "extra_forbidden":
        return unknown_key(str(loc[-1]), _field_names(model, loc[:-1]))
    if kind in _WORDS:
        return f"{_WORDS[kind]}, got {got}"
    if kind == "literal_error":
        return f"expected one of {ctx.get('expected', '')}, got {got}"
    bound = bound_words(kind, ctx)
    if bound is not None:
        return f"must be {bound}, got {got}"
    if kind == "too_short":
        return "must not be empty"
    if kind == "value_error":
        return str(error["msg"]).removeprefix("Value error, ")
    return f"{error['msg']}, got {got}"


def translate(errors: Sequence[ErrorDetails], model: type[BaseModel]) -> list[Problem]:
    """pydantic's errors as problems in plain words; the branches of a union at one place
    become one problem."""
    problems: list[Problem] = []
    seen: set[tuple[str | int, ...]] = set()
    missing = {tuple(e["loc"]) for e in errors if e["type"] == "missing"}
    for error in errors:
        loc = tuple(error["loc"])
        if error["type"] == "extra_forbidden":
            valid = _field_names(model, loc[:-1])
            close = difflib.get_close_matches(str(loc[-1]), valid, n=1)
            if close and (*loc[:-1], close[0]) in missing:  # a typo of a required key
                missing.discard((*loc[:-1], close[0]))
                seen.add((*loc[:-1], close[0]))
                problems.append(
                    Problem(loc, f"unknown key {loc[-1]!r}; did you mean {close[0]!r} (required)?")
                )
                continue
    for error in errors:
        loc = tuple(error["loc"])
        if loc[:1] == ("variants",) and len(loc) == 3 and not isinstance(loc[2], int):
            variant: tuple[str | int, ...] = loc[:2]  # neither a list nor a strategy string
            if variant not in seen:
                seen.add(variant)
                problems.append(
                    Problem(
                        variant,
                        "expected a list of strategies (- caching) or one line of strategy "
                        f"syntax ('truncation & caching'), got {shown(error.get('input'))}",
                    )
                )
            continue
        if loc in seen or (
            error["type"] == "extra_forbidden" and any(p.where == loc for p in problems)
        ):
            continue
        if error["type"] == "missing" and loc:
            problems.append(Problem(loc[:-1], f"{loc[-1]!r} is required but missing"))
        else:
            problems.append(Problem(loc, _sentence(error, model)))
    return problems
