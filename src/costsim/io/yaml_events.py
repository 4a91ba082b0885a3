"""A cassette's YAML built in one pass over the parser's events, its depth bounded as it goes.

PyYAML's safe loader composes a node graph (recursively) and then constructs Python values
from it (recursively again); so a file must first be measured, without recursion, before the
loader may see it (:func:`costsim.io.limits.scan_yaml`): two passes over every file. Almost
every real cassette is plain YAML, though: mappings, sequences and scalars of the standard
tags, with no anchor, alias or Python tag. For those this module builds the document straight
from libyaml's event stream, with an explicit stack (no recursion, so the depth is checked as
it grows), in about half the time of the two passes.

The values are exactly the safe loader's: plain scalars are resolved by the same implicit
resolvers and every non-string tag is built by PyYAML's own constructor for it. Anything else
(an anchor or alias, a merge key, an unknown or Python tag, a collection as a mapping key, a
second document) raises :class:`NotPlain`, and the caller reads the file the careful way,
which also reports any error it holds exactly as before.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

import yaml
from yaml.constructor import SafeConstructor

from costsim.io.limits import MAX_DEPTH, DuplicateKeyError, EventLoader, TooDeepError
from costsim.io.safe_yaml import CassetteLoader

__all__ = ["NotPlain", "load_plain"]

_YAML = "tag:yaml.org,2002:"
_STR = _YAML + "str"
_MAP = frozenset({None, "!", _YAML + "map"})
_SEQ = frozenset({None, "!", _YAML + "seq"})


class NotPlain(Exception):
    """The document needs the full safe loader (what makes it so is the message)."""


def _constructor(name: str) -> Callable[[Any, yaml.ScalarNode], Any]:
    return getattr(SafeConstructor, f"construct_yaml_{name}")  # type: ignore[no-any-return]


_SCALARS: dict[str, Callable[[Any, yaml.ScalarNode], Any]] = {
    _YAML + name: _constructor(name) for name in ("int", "float", "binary", "timestamp")
}
_BOOLS: dict[str, bool] = SafeConstructor.bool_values
_TEXT = frozenset({_STR, _YAML + "python/str", _YAML + "python/unicode"})


_NO_KEY = object()


class _Scalars:
    """Builds scalar values as the safe loader does."""

    _REMEMBERED = 65536
    """Plain scalars whose values are remembered (then forgotten at once). A corpus's plain
    scalars are few and repeated: 9,028 distinct among 235,861 in 902 cassettes (header
    names, status codes, media types), so each is resolved once."""

    def __init__(self) -> None:
        self._resolvers = CassetteLoader.yaml_implicit_resolvers
        self._wildcard = self._resolvers.get(None, [])
        self._constructor = CassetteLoader("")  # stateless for scalars
        self._plain: dict[str, Any] = {}

    def plain(self, value: str) -> Any:
        """A plain (unquoted) scalar: its tag from the implicit resolvers, then its value
        (remembered: every value a plain scalar resolves to is immutable)."""
        known = self._plain.get(value, _NO_KEY)
        if known is not _NO_KEY:
            return known
        resolved = value
        for tag, pattern in (*self._resolvers.get(value[:1], ()), *self._wildcard):
            if pattern.match(value):
                resolved = self.tagged(tag, value)
                break
        if len(self._plain) >= self._REMEMBERED:
            self._plain.clear()
        self._plain[value] = resolved
        return resolved

    def tagged(self, tag: str, value: str, mark: Any = None) -> Any:
        """An explicitly tagged scalar; ``mark``: where it starts, which a constructor's
        error names (a ``!!binary`` that is not base64)."""
        if tag in _TEXT:
            return value
        if tag == _YAML + "null":
            return None
        if tag == _YAML + "bool":
            return _BOOLS[value.lower()]
        construct = _SCALARS.get(tag)
        if construct is None:
            raise NotPlain(f"scalar tag {tag}")
        return construct(self._constructor, yaml.ScalarNode(tag, value, mark, mark))


@cache
def _scalars() -> _Scalars:
    return _Scalars()


class _Builder:
    """The document under construction: the open collections and the keys awaiting values."""

    def __init__(self) -> None:
        self.scalars = _scalars()
        self.stack: list[Any] = []
        self.keys: list[Any] = []  # per open collection: the key waiting for its value
        self.lines: list[int] = []  # per open collection: the line it starts on
        self.root: Any = None
        self.documents = 0

    def mapping(self, event: Any) -> None:
        if event.tag not in _MAP:
            raise NotPlain(f"collection tag {event.tag}")
        self.open(event, {})

    def sequence(self, event: Any) -> None:
        if event.tag not in _SEQ:
            raise NotPlain(f"collection tag {event.tag}")
        self.open(event, [])

    def open(self, event: Any, collection: dict[Any, Any] | list[Any]) -> None:
        if event.anchor is not None:
            raise NotPlain("an anchor")
        self.stack.append(collection)
        self.keys.append(_NO_KEY)
        self.lines.append(event.start_mark.line + 1)
        if len(self.stack) > MAX_DEPTH:
            raise TooDeepError(len(self.stack), event.start_mark.line + 1)

    def close(self, event: Any) -> None:
        self.keys.pop()
        self.place(self.stack.pop(), self.lines.pop())

    def alias(self, event: Any) -> None:
        raise NotPlain("an alias")

    def document(self, event: Any) -> None:
        self.documents += 1
        if self.documents > 1:
            raise NotPlain("a second document")

    def place(self, value: Any, line: int) -> None:
        if not self.stack:
            self.root = value
            return
        top, keys = self.stack[-1], self.keys
        if type(top) is list:
            top.append(value)
        elif keys[-1] is _NO_KEY:
            if isinstance(value, dict | list):
                raise NotPlain("a collection as a mapping key")
            keys[-1] = value
        else:
            if keys[-1] in top:
                raise DuplicateKeyError(keys[-1], line)
            top[keys[-1]] = value
            keys[-1] = _NO_KEY


_HANDLERS: dict[type, Callable[[_Builder, Any], None]] = {
    yaml.MappingStartEvent: _Builder.mapping,
    yaml.SequenceStartEvent: _Builder.sequence,
    yaml.MappingEndEvent: _Builder.close,
    yaml.SequenceEndEvent: _Builder.close,
    yaml.AliasEvent: _Builder.alias,
    yaml.DocumentStartEvent: _Builder.document,
}


def load_plain(text: str) -> Any:
    """The document in ``text``, built from its events (see the module docstring).

    Raises :class:`NotPlain` when the document needs the full loader, :class:`TooDeepError`
    past :data:`MAX_DEPTH` levels, and the parser's :class:`yaml.YAMLError` for broken text.
    """
    builder = _Builder()
    handlers, end, scalar = _HANDLERS, yaml.StreamEndEvent, yaml.ScalarEvent
    plain, tagged = builder.scalars.plain, builder.scalars.tagged
    stack, keys = builder.stack, builder.keys
    parser = EventLoader(text)
    try:
        while True:
            event = parser.get_event()
            kind = type(event)
            if kind is scalar:  # most events: placed here, without a call per event
                if event.anchor is not None:
                    raise NotPlain("an anchor")
                tag = event.tag
                plainly = tag is None or tag == "!"
                value = (
                    (plain(event.value) if event.implicit[0] else event.value)
                    if plainly
                    else tagged(tag, event.value, event.start_mark)
                )
                top = stack[-1] if stack else None  # as _Builder.place (never a collection)
                if top is None:
                    builder.root = value
                elif type(top) is list:
                    top.append(value)
                elif keys[-1] is _NO_KEY:
                    keys[-1] = value
                else:
                    if keys[-1] in top:
                        raise DuplicateKeyError(keys[-1], event.start_mark.line + 1)
                    top[keys[-1]] = value
                    keys[-1] = _NO_KEY
            elif kind is end:
                return builder.root
            else:
                handler = handlers.get(kind)
                if handler is not None:
                    handler(builder, event)
    finally:
        parser.dispose()
