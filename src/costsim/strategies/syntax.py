"""One syntax for strategies on a line of text, read by ``costsim simulate -s``, the pytest
plugin's ``--costsim-strategies`` and scenario files, and written by every label costsim
prints (:meth:`Step.describe`, :meth:`Variant.describe`), so what is printed can be pasted
back::

    step      NAME[:KEY=VALUE,...]         caching:ttl=1h
    nested    KEY.SUB=VALUE                routing:tiers.light=claude-haiku-4-5
    list      ITEM+ITEM                    caching:placement=tools+system
    quoted    KEY="a,b"                    a value holding , & + = : or spaces
    null      KEY=null                     lifts a limit that defaults to a value
    empty     KEY={}                       an empty mapping (keys are set as KEY.SUB=VALUE)
    stack     STEP & STEP                  truncation & caching (applied in order)
    variants  STACK, STACK                 --costsim-strategies: one what-if column each

Values are read by the strategy's parameter model (``5`` becomes a number where a number is
expected, text where text is); a list-valued parameter given one item is a list of one.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Iterator
from typing import Any, Union

from pydantic import BaseModel

from costsim.errors import ConfigError
from costsim.strategies.registry import Step, Variant, get_strategy, make_step

__all__ = ["STACK", "parse_step", "parse_variant", "parse_variants"]

STACK = "&"
"""Stacks strategies in one variant: ``truncation & caching``."""

_SEQUENCES = (list, tuple, set, frozenset)


def _split(text: str, separator: str) -> Iterator[str]:
    """``text`` split on ``separator`` outside double quotes."""
    part: list[str] = []
    quoted = False
    for char in text:
        if char == '"':
            quoted = not quoted
        if char == separator and not quoted:
            yield "".join(part)
            part = []
        else:
            part.append(char)
    if quoted:
        raise ConfigError(f"unbalanced double quote in {text!r}")
    yield "".join(part)


def _unquote(text: str) -> str:
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] == '"':
        return text[1:-1]
    return text


def _inner(annotation: Any) -> Any:
    """The annotation with ``None`` taken out of an optional."""
    origin = typing.get_origin(annotation)
    if origin in (Union, types.UnionType):
        options = [arg for arg in typing.get_args(annotation) if arg is not type(None)]
        return options[0] if len(options) == 1 else annotation
    return annotation


def _annotation(model: type[BaseModel], path: list[str]) -> Any:
    """What the parameter at ``path`` (``tiers.light``) expects, following dicts and models."""
    current: Any = model
    for key in path:
        current = _inner(current)
        if isinstance(current, type) and issubclass(current, BaseModel):
            field = current.model_fields.get(key)
            if field is None:
                return None
            current = field.annotation
        elif typing.get_origin(current) is dict:
            current = typing.get_args(current)[1]
        else:
            return None
    return _inner(current)


def _keyed(annotation: Any) -> bool:
    """Whether a parameter holds keys (a mapping or a model), set one by one on a line."""
    if typing.get_origin(annotation) is dict or annotation is dict:
        return True
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


def _value(text: str, annotation: Any) -> Any:
    if text.strip() == "null":
        return None
    if typing.get_origin(annotation) in _SEQUENCES or annotation in _SEQUENCES:
        return [_unquote(item) for item in _split(text, "+") if item.strip()]
    return _unquote(text)


def _path(model: type[BaseModel], key: str) -> list[str]:
    """``tiers.light`` -> [tiers, light]; a flat mapping's key keeps its dots, since model
    names have them (``models.gpt-4.1-mini`` -> [models, gpt-4.1-mini])."""
    first, *rest = key.split(".")
    path = [first]
    while rest:
        annotation = _annotation(model, path)
        if typing.get_origin(annotation) is dict and not _keyed(typing.get_args(annotation)[1]):
            return [*path, ".".join(rest)]
        path.append(rest.pop(0))
    return path


def parse_step(text: str) -> Step:
    """One strategy and its options: ``name[:key=value,...]``."""
    name, _, rest = text.strip().partition(":")
    name = name.strip()
    model = get_strategy(name).params
    params: dict[str, Any] = {}
    for pair in filter(str.strip, _split(rest, ",")):
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ConfigError(
                f"strategy option {pair.strip()!r} in {text.strip()!r} is not key=value"
            )
        *parents, leaf = _path(model, key.strip())
        target = params
        for parent in parents:
            target = target.setdefault(parent, {})
        annotation = _annotation(model, [*parents, leaf])
        if _keyed(annotation) and value.strip() == "{}":  # an empty mapping, as labels write it
            target[leaf] = {}
            continue
        if _keyed(annotation) and value.strip() != "null":
            raise ConfigError(
                f"strategy option {key.strip()!r} in {text.strip()!r} holds keys: write each "
                f"as {key.strip()}.KEY=VALUE (a scenario file can write it as a mapping)"
            )
        target[leaf] = _value(value, annotation)
    return make_step(name, params, where=f"strategy {text.strip()!r}")


def parse_variant(text: str, name: str | None = None) -> Variant:
    """A stack of strategies, ``a & b``, applied in order; named ``name`` or its text."""
    parts = list(_split(text, STACK))
    steps = [part for part in parts if part.strip()]
    if not steps:
        raise ConfigError(f"no strategy in {text!r}")
    if len(steps) < len(parts):  # "a & & b", "a &": a step left out, most likely by mistake
        raise ConfigError(f"an empty step in {text!r}: write strategies as 'a & b'")
    parsed, problems = [], []
    for step in steps:  # every step's problem at once, not the first one's alone
        try:
            parsed.append(parse_step(step))
        except ConfigError as exc:
            problems.append(str(exc))
    if problems:
        raise ConfigError("; ".join(problems))
    return Variant(name or text.strip(), tuple(parsed))


def _starts_entry(part: str) -> bool:
    """Whether a comma-separated part starts a new variant (``caching``, ``caching:ttl=1h``,
    ``a & b``) rather than continuing the previous one's options (``rolling=2``)."""
    head = next(_split(part, "="))
    return ":" in head or STACK in head or "=" not in part


def parse_variants(text: str) -> list[Variant]:
    """Comma-separated stacks, one variant each:
    ``caching:ttl=1h,rolling=2, truncation & caching`` is two variants."""
    entries: list[str] = []
    for part in _split(text, ","):
        if not part.strip():
            continue
        if entries and not _starts_entry(part):
            entries[-1] += "," + part
        else:
            entries.append(part)
    return [parse_variant(entry) for entry in entries]
