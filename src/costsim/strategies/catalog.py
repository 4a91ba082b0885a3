"""What ``costsim strategies`` lists: every registered strategy, its parameters with their
types, defaults and meanings, read from each strategy's parameter model."""

from __future__ import annotations

import re
import types
import typing
from dataclasses import dataclass
from typing import Any, Literal, Union

from pydantic import BaseModel
from pydantic_core import PydanticUndefined

from costsim.strategies.registry import get_strategy, strategies

__all__ = ["ParamInfo", "StrategyInfo", "describe_strategies", "type_text"]


@dataclass(frozen=True, slots=True)
class ParamInfo:
    name: str
    type: str
    """In words: ``integer``, ``5m|1h``, ``list of text``, ``mapping text -> integer``."""
    default: Any
    """The default as JSON would hold it (None with ``required``)."""
    required: bool
    meaning: str


@dataclass(frozen=True, slots=True)
class StrategyInfo:
    name: str
    summary: str
    params: tuple[ParamInfo, ...]
    schema: dict[str, Any]
    """The JSON schema of the parameters (what scenario files are validated against)."""


_SCALARS = {int: "integer", float: "number", bool: "true|false", str: "text"}


def type_text(annotation: Any) -> str:
    """A parameter's type in words, for people rather than type checkers."""
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if annotation in _SCALARS:
        return _SCALARS[annotation]
    if origin is Literal:
        return "|".join(str(arg) for arg in args)
    if origin in (Union, types.UnionType):
        kept = [arg for arg in args if arg is not type(None)]
        text = " or ".join(type_text(arg) for arg in kept)
        return f"{text} or null" if len(kept) < len(args) else text
    if origin in (list, tuple, set, frozenset):
        item = args[0] if args else Any
        return f"list of {type_text(item)}"
    if origin is dict:
        return f"mapping {type_text(args[0])} -> {type_text(args[1])}"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return f"mapping ({', '.join(annotation.model_fields)})"
    return getattr(annotation, "__name__", str(annotation))


def _default(model: type[BaseModel], name: str) -> tuple[Any, bool]:
    field = model.model_fields[name]
    if field.is_required():
        return None, True
    factory = field.default_factory
    value = factory() if factory is not None else field.default  # type: ignore[call-arg]
    if value is PydanticUndefined:
        return None, True
    dumped = model.model_construct(**{name: value}).model_dump(mode="json", include={name})
    return dumped.get(name), False


def _plain(text: str) -> str:
    """A parameter's docstring as a user reads it: one line, without reST literals."""
    return re.sub(r"``([^`]+)``", r"\1", " ".join(text.split()))


def _params(model: type[BaseModel]) -> tuple[ParamInfo, ...]:
    infos = []
    for name, field in model.model_fields.items():
        default, required = _default(model, name)
        infos.append(
            ParamInfo(
                name=name,
                type=type_text(field.annotation),
                default=default,
                required=required,
                meaning=_plain(field.description or ""),
            )
        )
    return tuple(infos)


def describe_strategies(name: str | None = None) -> list[StrategyInfo]:
    """Every registered strategy (or the one named, with "did you mean" when unknown)."""
    chosen = {name: get_strategy(name)} if name is not None else strategies()
    return [
        StrategyInfo(
            key, strategy.summary, _params(strategy.params), strategy.params.model_json_schema()
        )
        for key, strategy in chosen.items()
    ]
