"""JSON documents written piece by piece, so that a large one is never whole in memory.

A comparison's document holds, per variant, one entry per cassette: over a hundred thousand
calls that is most of a gigabyte of text, and built whole (every entry a dict, then the text,
then its escaped copy) it took several times that in memory. A document may instead hold
:class:`Deferred` lists, made only as they are written: :func:`json_chunks` writes the
containers that hold one member by member, each entry as it is made, and everything else as
:func:`json_text` always did. The text is the same, byte for byte, as that of the document with
every list made (:func:`materialized`): pydantic-core's indented JSON of a value nested ``d``
deep is its own indented JSON with every line but the first indented by ``d`` levels more
(JSON text holds no raw line break inside a string).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import pydantic_core

from costsim.render.visible import json_escaped

__all__ = ["Deferred", "json_chunks", "json_text", "materialized"]

_INDENT = "  "


@dataclass(frozen=True, slots=True)
class Deferred:
    """A list of a document made only when it is written (or :func:`materialized`): ``make``
    returns its items, plain JSON values."""

    make: Callable[[], Iterable[Any]]


def materialized(value: Any) -> Any:
    """``value`` with each :class:`Deferred` list made: the plain document."""
    if isinstance(value, Deferred):
        return [materialized(item) for item in value.make()]
    if isinstance(value, dict) and _holds_deferred(value):
        return {key: materialized(item) for key, item in value.items()}
    if isinstance(value, list) and _holds_deferred(value):
        return [materialized(item) for item in value]
    return value


def json_text(doc: Any) -> str:
    """A JSON document as costsim writes it: indented by two, UTF-8 as is (written by
    pydantic-core, several times faster than the standard library's indenting encoder on the
    megabytes a large comparison makes), DEL and C1 as ``\\u`` escapes."""
    return "".join(json_chunks(doc))


def json_chunks(doc: Any) -> Iterator[str]:
    """:func:`json_text` of ``doc`` in pieces (its :class:`Deferred` lists made as they are
    written), the last ending the text with a line break."""
    yield from _chunks(doc, 0)
    yield "\n"


def _chunks(value: Any, depth: int) -> Iterator[str]:
    if isinstance(value, Deferred):
        yield from _members(((None, item) for item in value.make()), depth, "[]", plain=True)
    elif isinstance(value, dict) and _holds_deferred(value):
        yield from _members(iter(value.items()), depth, "{}", plain=False)
    elif isinstance(value, list) and _holds_deferred(value):
        yield from _members(((None, item) for item in value), depth, "[]", plain=False)
    else:
        yield _piece(value, depth)


def _members(
    members: Iterator[tuple[str | None, Any]], depth: int, brackets: str, *, plain: bool
) -> Iterator[str]:
    """A container's members one by one (``plain``: a deferred list's items, which hold no
    deferred list themselves)."""
    first = next(members, None)
    if first is None:
        yield brackets
        return
    inner = "\n" + _INDENT * (depth + 1)
    yield brackets[0]
    for index, (key, item) in enumerate(itertools.chain([first], members)):
        head = ("," if index else "") + inner
        if key is not None:
            head += _piece(key, 0) + ": "
        yield head
        if plain:
            yield _piece(item, depth + 1)
        else:
            yield from _chunks(item, depth + 1)
    yield "\n" + _INDENT * depth + brackets[1]


def _piece(value: Any, depth: int) -> str:
    """``value``'s indented JSON, its later lines ``depth`` levels in, escaped for a
    terminal; text that is not Unicode (a file name's bytes) written printable."""
    try:
        made = pydantic_core.to_json(value, indent=2).decode()
    except pydantic_core.PydanticSerializationError as exc:
        if "surrogates not allowed" not in str(exc):
            raise
        made = pydantic_core.to_json(_printable(value), indent=2).decode()
    if depth and "\n" in made:
        made = made.replace("\n", "\n" + _INDENT * depth)
    return json_escaped(made)


def _holds_deferred(value: Any) -> bool:
    if isinstance(value, Deferred):
        return True
    if isinstance(value, dict):
        return any(_holds_deferred(item) for item in value.values())
    if isinstance(value, list):
        return any(_holds_deferred(item) for item in value)
    return False


def _printable(value: Any) -> Any:
    """``value`` with its text printable (a file name that is not UTF-8: see
    :func:`costsim.render.paths.printable`), for the rare document that holds such text."""
    from costsim.render.paths import printable

    if isinstance(value, str):
        return printable(value)
    if isinstance(value, dict):
        return {_printable(key): _printable(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_printable(item) for item in value]
    return value
