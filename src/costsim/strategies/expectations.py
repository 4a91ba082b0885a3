"""``expectations``: tool results carry only the sections the caller expects.

Browser-automation MCP servers (Playwright MCP) answer every action with a Markdown result:
the code they ran, the page state with a full accessibility snapshot, new console messages,
open tabs, downloads. This strategy models asking for less. A result's text is split into
sections by line markers (``markers``; defaults fit Playwright MCP's headings); a section kind
is kept when the tool's expectation ``include``s it. Text before the first marker and any
section no marker names (``### Result``, say) are always kept. A page-state section loses only
its snapshot tree (the ``- Page Snapshot:`` line and its fenced block); its URL and title stay.
``snapshot_max_length`` cuts a kept tree at a line boundary with a marker line;
``console_levels`` and ``console_max_messages`` thin a kept console section.

The expectation of a tool is resolved per field: built-in (everything, no limits) <
``default`` (the global expectation) < the first ``tools`` entry matching the tool's name
(``tools`` defaults to navigate / click / screenshot / evaluate; a ``tools`` given replaces
that table). A key matches a tool named exactly like it, by glob, or as a
``_``-separated suffix: ``navigate`` matches ``browser_navigate`` and
``mcp__playwright__browser_navigate``. The tool of a result is the ``ToolUseBlock`` with its
id, in the call's history or response (else earlier in the trace). A result is filtered once
and re-sent filtered in every later request.

Divergence: a later tool input (a tool call in a recorded response, or re-sent in a later
request's history) uses a reference (an element ref such as ``e123``, written ``[ref=e123]``
in snapshots; ``ref_patterns``) that appeared only in removed content, never in content kept
in an earlier result. One event per call, naming the references.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from costsim.model import Block, Call, Message, TextBlock, ToolResultBlock, ToolUseBlock
from costsim.model.quoting import short_name
from costsim.strategies.base import Context
from costsim.strategies.result_sections import (
    DEFAULT_MARKERS,
    DEFAULT_TOOLS,
    Expectation,
    ExpectationsParams,
    Resolved,
    expectation_of,
    filter_text,
    filter_with,
)
from costsim.strategies.tool_input import input_values
from costsim.strategies.trace import Event, SimCall, SimTrace

_WORD = re.compile(r"[\w-]+")

__all__ = [
    "DEFAULT_MARKERS",
    "DEFAULT_TOOLS",
    "Expectation",
    "Expectations",
    "ExpectationsParams",
    "filter_text",
]


# --- the strategy ---------------------------------------------------------------------------


@dataclass(slots=True)
class _Filtered:
    new: ToolResultBlock
    tool: str
    kept: str
    removed: str
    what: list[str]


@dataclass(slots=True)
class _Filter:
    params: ExpectationsParams
    markers: dict[str, tuple[str, ...]]
    refs: tuple[re.Pattern[str], ...]
    by_id: dict[int, tuple[ToolResultBlock, _Filtered]] = field(default_factory=dict)
    by_value: dict[tuple[Any, ...], _Filtered] = field(default_factory=dict)
    expectations: dict[str, Resolved] = field(default_factory=dict)

    def expect(self, tool: str) -> Resolved:
        hit = self.expectations.get(tool)
        if hit is None:
            hit = self.expectations[tool] = expectation_of(self.params, tool)
        return hit

    def result(self, block: ToolResultBlock, tool: str) -> tuple[_Filtered, bool]:
        """The filtered block, and whether this is the first time this result is seen."""
        hit = self.by_id.get(id(block))
        if hit is not None and hit[0] is block:
            return hit[1], False
        key = (tool, block.tool_use_id, block.is_error, *(_part_key(p) for p in block.content))
        done = self.by_value.get(key)
        first = done is None
        if done is None:
            done = self.by_value[key] = self._filter(block, tool)
        elif done.what:  # another copy's: re-sent with this copy's own breakpoints
            marked = _marked_as(done.new, block)
            if marked is not done.new:
                done = dataclasses.replace(done, new=marked)
        self.by_id[id(block)] = (block, done)
        return done, first

    def _filter(self, block: ToolResultBlock, tool: str) -> _Filtered:
        expect = self.expect(tool)
        if expect.everything:
            return _Filtered(block, tool, block.text, "", [])
        content: list[Block] = []
        kept: list[str] = []
        removed: list[str] = []
        what: list[str] = []
        for part in block.content:
            if not isinstance(part, TextBlock):
                content.append(part)
                continue
            text, gone, parts = filter_with(
                part.text, expect, self.markers, self.params.snapshot_markers
            )
            kept.append(text)
            removed.append(gone)
            what += parts
            content.append(dataclasses.replace(part, text=text) if parts else part)
        new = dataclasses.replace(block, content=tuple(content)) if what else block
        return _Filtered(new, tool, "\n".join(kept), "\n".join(removed), what)

    def references(self, text: str) -> set[str]:
        found: set[str] = set()
        for pattern in self.refs:
            for match in pattern.finditer(text):
                found.add(match.group(1) if pattern.groups else match.group(0))
        return found


def _marked_as(filtered: ToolResultBlock, block: ToolResultBlock) -> ToolResultBlock:
    """``filtered`` (filtered from another copy of ``block``, which a breakpoint may have
    marked as the last message then) with ``block``'s own cache markers, on it and on each
    of its parts (filtering keeps the parts, one for one)."""
    parts = tuple(
        new if new.cache_control == old.cache_control
        else dataclasses.replace(new, cache_control=old.cache_control)
        for new, old in zip(filtered.content, block.content, strict=True)
    )  # fmt: skip
    same = filtered.cache_control == block.cache_control
    if same and all(new is old for new, old in zip(parts, filtered.content, strict=True)):
        return filtered
    return dataclasses.replace(filtered, cache_control=block.cache_control, content=parts)


def _part_key(part: Block) -> Any:
    return part.text if isinstance(part, TextBlock) else repr(part)


def _tool_names(call: Call) -> dict[str, str]:
    blocks = [b for m in call.messages for b in m.content] + list(call.response)
    return {b.id: b.name for b in blocks if isinstance(b, ToolUseBlock)}


@dataclass(slots=True)
class _Refs:
    """References seen in kept and in removed content, in trace order."""

    kept: set[str] = field(default_factory=set)
    removed: dict[str, str] = field(default_factory=dict)
    """Reference -> the tool_use_id of the result it was removed from."""
    checked: set[str] = field(default_factory=set)

    def uses(self, block: ToolUseBlock) -> list[str]:
        """References only removed content held, used by a tool call not checked before."""
        key = f"{block.id}\0{block.name}\0{json.dumps(block.input, sort_keys=True, default=str)}"
        if key in self.checked:
            return []
        self.checked.add(key)
        words = {w for text in input_values(block.input) for w in _WORD.findall(text)}
        return sorted(r for r in words if r in self.removed and r not in self.kept)


class Expectations:
    name = "expectations"
    summary = "tool results carry only the sections each tool is expected to return"
    params = ExpectationsParams
    removes_only = True
    """It only takes content away from requests (or changes none): see
    :func:`costsim.analysis.prompt_band.removes_only`."""

    def apply(
        self, trace: SimTrace, params: ExpectationsParams, context: Context
    ) -> tuple[SimTrace, list[Event]]:
        markers = dict(DEFAULT_MARKERS)
        for section, prefixes in params.markers.items():
            markers[section] = prefixes
        refs = tuple(re.compile(p) for p in params.ref_patterns)
        flt = _Filter(params, markers, refs)
        seen = _Refs()
        names: dict[str, str] = {}
        events: list[Event] = []
        calls: list[SimCall] = []
        for item in trace.calls:
            call = item.call
            local = _tool_names(call)
            names.update(local)
            used: list[str] = []
            messages = tuple(
                self._message(m, {**names, **local}, flt, seen, used, events, call)
                for m in call.messages
            )
            for block in call.response:
                if isinstance(block, ToolUseBlock):
                    used += seen.uses(block)
            if used:
                events.append(self._divergence(used, seen, call))
            if any(new is not old for new, old in zip(messages, call.messages, strict=True)):
                call = dataclasses.replace(call, messages=messages)
            calls.append(dataclasses.replace(item, call=call) if call is not item.call else item)
        return SimTrace(trace.path, tuple(calls)), events

    def _message(
        self,
        message: Message,
        names: Mapping[str, str],
        flt: _Filter,
        seen: _Refs,
        used: list[str],
        events: list[Event],
        call: Call,
    ) -> Message:
        content: list[Block] = []
        for block in message.content:
            if isinstance(block, ToolUseBlock):
                used += seen.uses(block)
            if not isinstance(block, ToolResultBlock):
                content.append(block)
                continue
            done, first = flt.result(block, names.get(block.tool_use_id, ""))
            if first:
                seen.kept |= flt.references(done.kept)
                for ref in flt.references(done.removed):
                    seen.removed.setdefault(ref, block.tool_use_id)
                if done.what:
                    events.append(self._change(block, done, call))
            content.append(done.new if done.what else block)  # unchanged: the block itself
        if all(new is old for new, old in zip(content, message.content, strict=True)):
            return message
        return dataclasses.replace(message, content=tuple(content))

    def _change(self, block: ToolResultBlock, done: _Filtered, call: Call) -> Event:
        before = sum(len(p.text) for p in block.content if isinstance(p, TextBlock))
        after = sum(len(p.text) for p in done.new.content if isinstance(p, TextBlock))
        tool = short_name(done.tool or "unknown tool")
        return Event(
            self.name,
            "change",
            f"tool result {short_name(block.tool_use_id)} ({tool}): "
            f"{before:,} -> {after:,} chars; removed {', '.join(done.what)}",
            call.provenance,
        )

    def _divergence(self, used: list[str], seen: _Refs, call: Call) -> Event:
        named = ", ".join(f"{ref} (from {seen.removed[ref]})" for ref in sorted(set(used)))
        return Event(
            self.name,
            "divergence",
            f"a tool call uses reference(s) only in removed content: {named}",
            call.provenance,
        )
