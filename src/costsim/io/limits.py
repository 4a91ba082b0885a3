"""Bounds on untrusted input, checked before anything recursive sees it.

Parsers and everything that walks parsed data (the YAML composer, ``json``, serialisers, the
token counter) recurse once per nesting level; a hostile or corrupt file nested thousands deep
would exhaust the stack (a ``RecursionError``, or a segfault inside libyaml). So nesting is
measured *iteratively* first, and refused past :data:`MAX_DEPTH`. Real recordings nest fewer
than 40 levels (JSON schemas of tool definitions are the deepest).

Token counts are bounded by :data:`MAX_TOKENS`: no model's context window (plus its output)
comes near it, so a larger recorded count is a corrupt number, not a big call.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import yaml

__all__ = [
    "MAX_DEPTH",
    "MAX_FEE_UNITS",
    "MAX_TOKENS",
    "DuplicateKeyError",
    "EventLoader",
    "TooDeepError",
    "YamlShape",
    "check_json_depth",
    "scan_yaml",
]

MAX_DEPTH = 200
"""Deepest nesting of YAML collections or JSON arrays/objects costsim reads."""

MAX_TOKENS = 20_000_000
"""Above any model's context window: genai-prices' largest is 10M tokens (checked by a test)."""

MAX_FEE_UNITS = 100_000
"""Most per-use fee units (web searches, ...) one call can plausibly record."""


class DuplicateKeyError(ValueError):
    """A mapping that writes one key twice (YAML keeps the last, losing the first)."""

    def __init__(self, key: object, line: int) -> None:
        self.key, self.line = key, line
        super().__init__(
            f"the key {_yaml_word(key)} is written twice in one mapping (YAML keeps the last, "
            "losing the first); refused"
        )


def _yaml_word(key: object) -> str:
    """A key as YAML writes it (``'model'``, ``true``, ``null``, ``1``)."""
    if key is None or isinstance(key, bool):
        return {None: "null", True: "true", False: "false"}[key]
    text = str(key) if len(str(key)) <= 40 else str(key)[:39] + "…"
    return repr(text) if isinstance(key, str) else text


class TooDeepError(ValueError):
    """Input nested deeper than :data:`MAX_DEPTH`."""

    def __init__(self, depth: int, line: int | None = None) -> None:
        self.depth = depth
        self.line = line
        where = f" (line {line})" if line is not None else ""
        super().__init__(f"is nested more than {MAX_DEPTH} levels deep{where}; refused")


_JSON_TOKENS = re.compile(rb'"(?:[^"\\]|\\.)*"?|[\[\]{}]')


def check_json_depth(data: str | bytes, *, limit: int = MAX_DEPTH) -> None:
    """Raise :class:`TooDeepError` when JSON text nests arrays/objects deeper than ``limit``.

    Strings are skipped as whole tokens, so brackets inside them do not count. Malformed
    text is not judged here (the parser reports it); only its depth is.
    """
    raw = data.encode("utf-8", errors="surrogatepass") if isinstance(data, str) else data
    if raw.count(b"[") + raw.count(b"{") <= limit:
        return  # cannot nest deeper than it has openers
    depth = 0
    for match in _JSON_TOKENS.finditer(raw):
        token = match.group(0)
        if token in (b"[", b"{"):
            depth += 1
            if depth > limit:
                raise TooDeepError(depth)
        elif token in (b"]", b"}"):
            depth -= 1


@dataclass(frozen=True, slots=True)
class YamlShape:
    """What a YAML document would expand to: its deepest nesting and its size in nodes."""

    depth: int
    nodes: int


def scan_yaml(text: str, *, depth_limit: int = MAX_DEPTH) -> YamlShape:
    """Measure a YAML stream from its events, aliases expanded, without building it.

    The event parser keeps its own stack (it does not recurse), so this is safe on any
    input; it raises :class:`TooDeepError` as soon as the nesting (through aliases too)
    passes ``depth_limit``, and the parser's own :class:`yaml.YAMLError` for broken text.
    """
    # Per open collection: its anchor, the deepest level reached inside it, its node count.
    anchors: list[str | None] = []
    peaks: list[int] = []
    counts: list[int] = [0]  # counts[0] is the document level
    anchored: dict[str, tuple[int, int]] = {}  # anchor -> (height, nodes)
    deepest = 0
    events: Iterator[Any] = yaml.parse(text, Loader=EventLoader)
    for event in events:
        kind = type(event)
        if kind is yaml.ScalarEvent:
            nodes = 1 + len(event.value) // 64
            counts[-1] += nodes
            if event.anchor:
                anchored[event.anchor] = (0, nodes)
        elif kind is yaml.MappingStartEvent or kind is yaml.SequenceStartEvent:
            anchors.append(event.anchor)
            level = len(anchors)
            peaks.append(level)
            counts.append(1)
            if level > depth_limit:
                raise TooDeepError(level, event.start_mark.line + 1)
        elif kind is yaml.MappingEndEvent or kind is yaml.SequenceEndEvent:
            level = len(anchors)
            anchor, peak, nodes = anchors.pop(), peaks.pop(), counts.pop()
            counts[-1] += nodes
            if peaks and peak > peaks[-1]:
                peaks[-1] = peak
            deepest = max(deepest, peak)
            if anchor:
                anchored[anchor] = (peak - level + 1, nodes)
        elif kind is yaml.AliasEvent:
            height, nodes = anchored.get(event.anchor or "", (0, 1))
            counts[-1] += nodes
            reach = len(anchors) + height
            if reach > depth_limit:
                raise TooDeepError(reach, event.start_mark.line + 1)
            if peaks and reach > peaks[-1]:
                peaks[-1] = reach
            deepest = max(deepest, reach)
    return YamlShape(depth=deepest, nodes=counts[0])


EventLoader: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""libyaml's event parser when available (fast, iterative), else PyYAML's (also iterative)."""
