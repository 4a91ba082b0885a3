"""Tool-result text in sections, filtered by an expectation (the ``expectations`` strategy's
text work; the strategy itself is :mod:`costsim.strategies.expectations`).

A result's text is split into sections by line markers; a section kind is kept when the
expectation ``include``s it, a snapshot tree can be dropped or cut, a console section thinned.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import Field, field_validator

from costsim.strategies.base import Params

__all__ = [
    "DEFAULT_MARKERS",
    "DEFAULT_TOOLS",
    "Expectation",
    "ExpectationsParams",
    "Resolved",
    "expectation_of",
    "filter_text",
    "filter_with",
]

Section = Literal["code", "snapshot", "console", "tabs", "downloads"]
SECTIONS: tuple[Section, ...] = ("code", "snapshot", "console", "tabs", "downloads")
DEFAULT_MARKERS: dict[str, tuple[str, ...]] = {
    "code": ("### Ran Playwright code",),
    "snapshot": ("### Page state", "### Page", "### Snapshot"),
    "console": ("### Console messages", "### New console messages"),
    "tabs": ("### Open tabs",),
    "downloads": ("### Downloads",),
}
SNAPSHOT_MARKERS = ("- Page Snapshot",)
TRUNCATED = "- ... {n} more lines truncated\n"
_HEADING = re.compile(r"#{1,6} ")
_CONSOLE_LINE = re.compile(r"\s*(?:-\s*)?\[([A-Za-z]+)\]")
_LEVEL_ALIASES = {"warn": "warning"}


def _listed(value: Any, every: tuple[str, ...] | None = None) -> Any:
    """``a`` or ``a+b`` from the command line as a list; ``none`` / ``all`` as words."""
    if isinstance(value, str):
        if value.lower() == "none":
            return ()
        if value.lower() == "all" and every is not None:
            return every
        return (value,)
    return value


def _level(name: str) -> str:
    lowered = name.lower()
    return _LEVEL_ALIASES.get(lowered, lowered)


class Expectation(Params):
    """What a tool's results should carry. Fields left unset inherit (global, then built-in:
    everything, no limits); set a field to null to lift a limit inherited from the global."""

    include: tuple[Section, ...] = SECTIONS
    snapshot_max_length: int | None = Field(default=None, ge=1)
    """Characters of snapshot tree kept (cut at a line boundary); null: no limit."""
    console_levels: tuple[str, ...] | None = None
    """Console levels kept (``error``, ``warning``, ``info``, ``log``, ...); null: all."""
    console_max_messages: int | None = Field(default=None, ge=0)
    """The first N console messages kept; null: all."""

    @field_validator("include", mode="before")
    @classmethod
    def _include_list(cls, value: Any) -> Any:
        return _listed(value, SECTIONS)

    @field_validator("console_levels", mode="before")
    @classmethod
    def _levels_list(cls, value: Any) -> Any:
        return _listed(value)

    @field_validator("console_levels")
    @classmethod
    def _levels_lower(cls, value: tuple[str, ...] | None) -> tuple[str, ...] | None:
        return None if value is None else tuple(_level(v) for v in value)


DEFAULT_TOOLS: dict[str, Expectation] = {
    "navigate": Expectation(include=("snapshot", "console")),
    "click": Expectation(include=("snapshot",)),
    "screenshot": Expectation(include=()),
    "evaluate": Expectation(include=("console",)),
}


def _patterns(value: tuple[str, ...]) -> tuple[str, ...]:
    for pattern in value:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise ValueError(f"{pattern!r} is not a regular expression: {exc}") from None
    return value


class ExpectationsParams(Params):
    default: Expectation = Expectation()
    """The global expectation: every tool's, under its ``tools`` entry."""
    tools: dict[str, Expectation] = Field(default_factory=lambda: dict(DEFAULT_TOOLS))
    """Tool name / glob / ``_``-suffix -> expectation; the first matching entry applies."""
    markers: dict[Section, tuple[str, ...]] = Field(default_factory=dict)
    """Section -> line prefixes starting it; replaces that section's default markers."""
    snapshot_markers: tuple[str, ...] = SNAPSHOT_MARKERS
    """Line prefixes starting the snapshot tree inside a page-state section."""
    ref_patterns: tuple[str, ...] = (r"\[ref=([^\]\s]+)\]",)
    """Regexes finding references in results (group 1, else the match)."""

    _check_refs = field_validator("ref_patterns")(_patterns)


@dataclass(frozen=True, slots=True)
class Resolved:
    include: frozenset[str]
    snapshot_max_length: int | None
    console_levels: frozenset[str] | None
    console_max_messages: int | None

    @property
    def everything(self) -> bool:
        return (
            self.include == frozenset(SECTIONS)
            and self.snapshot_max_length is None
            and self.console_levels is None
            and self.console_max_messages is None
        )


def _matches(tool: str, key: str) -> bool:
    tool, key = tool.lower(), key.lower()
    return tool == key or tool.endswith("_" + key) or fnmatch.fnmatchcase(tool, key)


def _resolve(layers: Iterable[Expectation]) -> Resolved:
    values: dict[str, Any] = {
        "include": SECTIONS,
        "snapshot_max_length": None,
        "console_levels": None,
        "console_max_messages": None,
    }
    for layer in layers:
        values.update({name: getattr(layer, name) for name in layer.model_fields_set})
    levels = values["console_levels"]
    return Resolved(
        frozenset(values["include"]),
        values["snapshot_max_length"],
        None if levels is None else frozenset(levels),
        values["console_max_messages"],
    )


# --- splitting and filtering a result's text ------------------------------------------------


@dataclass(slots=True)
class _Part:
    kind: str
    """A section name, ``preamble`` (text before the first marker) or ``other``."""
    lines: list[str]


@dataclass(slots=True)
class _Outcome:
    lines: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    what: list[str] = field(default_factory=list)


def _split(text: str, markers: Mapping[str, tuple[str, ...]]) -> list[_Part]:
    parts = [_Part("preamble", [])]
    fenced = False
    for line in text.splitlines(keepends=True):
        if not fenced:
            kind = next((k for k, ms in markers.items() if line.startswith(ms)), None)
            if kind is None and _HEADING.match(line):
                kind = "other"
            if kind is not None:
                parts.append(_Part(kind, [line]))
                continue
        if line.lstrip().startswith("```"):
            fenced = not fenced
        parts[-1].lines.append(line)
    return parts


def _tree(lines: list[str], starts: tuple[str, ...], *, fallback: bool) -> tuple[int, int, int]:
    """(start, body start, end) of the snapshot tree in a section's lines: the marker line and
    its fenced block (or, with ``fallback``, the first fenced block); start == end if none."""
    start = next((i for i, line in enumerate(lines) if line.lstrip().startswith(starts)), None)
    if start is None:
        if not fallback:
            return 0, 0, 0
        start = next((i for i, ln in enumerate(lines) if ln.lstrip().startswith("```")), None)
        if start is None:
            return 0, 0, 0
        body = start + 1
    else:
        body = start + 1
        if body < len(lines) and lines[body].lstrip().startswith("```"):
            body += 1
        elif body == len(lines) or not lines[body].strip():
            return start, body, body  # a marker line with nothing after it
    if lines[body - 1].lstrip().startswith("```"):
        close = next(
            (i for i in range(body, len(lines)) if lines[i].lstrip().startswith("```")),
            len(lines),
        )
        return start, body, min(close + 1, len(lines))
    end = body
    while end < len(lines) and lines[end].strip():
        end += 1
    return start, body, end


def _snapshot(part: _Part, expect: Resolved, starts: tuple[str, ...], out: _Outcome) -> None:
    lines = part.lines
    start, body, end = _tree(lines, starts, fallback=part.kind == "snapshot")
    if start == end:
        out.lines += lines
        return
    if "snapshot" not in expect.include:
        out.lines += lines[:start] + lines[end:]
        out.removed += lines[start:end]
        out.what.append("snapshot tree")
        return
    fenced = lines[end - 1].lstrip().startswith("```") and end - 1 >= body
    stop = end - 1 if fenced else end
    limit = expect.snapshot_max_length
    if limit is None or sum(len(line) for line in lines[body:stop]) <= limit:
        out.lines += lines
        return
    keep, used = body, 0
    while keep < stop and used + len(lines[keep]) <= limit:
        used += len(lines[keep])
        keep += 1
    out.lines += [*lines[:keep], TRUNCATED.format(n=stop - keep), *lines[stop:]]
    out.removed += lines[keep:stop]
    out.what.append(f"snapshot cut to {used:,} chars")


def _console(part: _Part, expect: Resolved, out: _Outcome) -> None:
    lines = part.lines
    tail = len(lines)
    while tail > 1 and not lines[tail - 1].strip():
        tail -= 1
    lead: list[str] = []
    messages: list[tuple[str, list[str]]] = []  # (level, lines): continuation lines attach
    for line in lines[1:tail]:
        match = _CONSOLE_LINE.match(line)
        if match is not None:
            messages.append((_level(match.group(1)), [line]))
        elif messages:
            messages[-1][1].append(line)
        else:
            lead.append(line)
    levels = expect.console_levels
    kept = [m for m in messages if levels is None or m[0] in levels]
    kept = kept[: expect.console_max_messages]
    if len(kept) == len(messages):
        out.lines += lines
        return
    kept_ids = {id(m) for m in kept}
    out.removed += [line for m in messages if id(m) not in kept_ids for line in m[1]]
    out.what.append(f"{len(messages) - len(kept)} console message(s)")
    if kept or lead:
        out.lines += [lines[0], *lead, *(line for m in kept for line in m[1]), *lines[tail:]]
    else:
        out.removed += [lines[0], *lines[tail:]]  # an empty section is not sent at all


def expectation_of(params: ExpectationsParams, tool: str) -> Resolved:
    entry = next((e for key, e in params.tools.items() if _matches(tool, key)), None)
    return _resolve([params.default] if entry is None else [params.default, entry])


def filter_text(
    text: str, expectation: Expectation, params: ExpectationsParams | None = None
) -> tuple[str, str, list[str]]:
    """(kept text, removed text, what was removed) of one tool-result text under
    ``expectation`` (its unset fields: everything, no limits)."""
    params = params or ExpectationsParams()
    markers = dict(DEFAULT_MARKERS)
    for section, prefixes in params.markers.items():
        markers[section] = prefixes
    return filter_with(text, _resolve([expectation]), markers, params.snapshot_markers)


def filter_with(
    text: str,
    expect: Resolved,
    markers: Mapping[str, tuple[str, ...]],
    snapshot_markers: tuple[str, ...],
) -> tuple[str, str, list[str]]:
    out = _Outcome()
    for part in _split(text, markers):
        if part.kind in ("preamble", "snapshot"):
            _snapshot(part, expect, snapshot_markers, out)
        elif part.kind == "other":
            out.lines += part.lines
        elif part.kind not in expect.include:
            out.removed += part.lines
            out.what.append(part.kind)
        elif part.kind == "console":
            _console(part, expect, out)
        else:
            out.lines += part.lines
    if not out.what:
        return text, "", []
    return "".join(out.lines), "".join(out.removed), out.what
