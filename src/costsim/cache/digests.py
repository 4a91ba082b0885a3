"""What identifies a request's block for the cache: its content, as canonical JSON.

Two blocks with the same content are the same prefix to a provider, whatever object holds
them and whatever breakpoint marker they carry; :class:`costsim.cache.prefix.PrefixBuilder`
digests this JSON once per block object, and once per content (:func:`fields_key`) for a
block copied with another marker.
"""

from __future__ import annotations

import dataclasses
import json
from functools import cache
from typing import Any

__all__ = ["canonical", "fields_key", "plain"]


@cache
def _field_names(kind: type) -> tuple[str, ...]:
    return tuple(field.name for field in dataclasses.fields(kind))


def plain(value: Any) -> Any:
    """A value JSON cannot write: a dataclass as its fields (the encoder writes them, and any
    dataclass among them alike), anything else as its text."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {name: getattr(value, name) for name in _field_names(type(value))}
    return str(value)


_CANONICAL = json.JSONEncoder(
    sort_keys=True, ensure_ascii=False, default=plain, separators=(",", ":")
)


def fields_key(content: dict[str, Any]) -> tuple[object, ...] | None:
    """A block's field values as a dictionary key that equals another's only when their JSON
    does (text, ids, nested blocks: a string's hash is computed once and kept by the string,
    so a copy of a long tool result that differs only by its marker is found without writing
    its JSON again); None when a field is not plain (a dict: tool input, a server block's raw
    JSON), which is then digested from its JSON."""
    try:
        return tuple((name, _typed(value)) for name, value in content.items())
    except TypeError:
        return None


_EXACT = (str, type(None))


def _typed(value: Any) -> object:
    """``value`` as a key that keeps what JSON tells apart and ``==`` does not: ``1``,
    ``True`` and ``1.0``, ``0.0`` and ``-0.0`` (TypeError: not plain)."""
    kind: type = type(value)
    if kind in _EXACT:
        return value
    if kind is bool or kind is int:
        return (kind, value)
    if kind is float:
        return (kind, repr(value))
    if kind is tuple:
        return tuple(_typed(item) for item in value)
    if dataclasses.is_dataclass(kind):
        return (kind, *(_typed(getattr(value, name)) for name in _field_names(kind)))
    raise TypeError(kind)


def canonical(value: Any) -> str:
    """The JSON text two equal contents share (what ``dataclasses.asdict`` would give,
    without copying every field on the way)."""
    return _CANONICAL.encode(value)
