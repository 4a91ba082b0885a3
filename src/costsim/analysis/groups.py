"""Groupings of metered calls for breakdowns, summed per cassette and merged.

A comparison's breakdowns (cost per model and agent role, tokens per tool) are kept as small
tables per column rather than as every metered call, so a run holds summaries, not traces;
each cassette's tables are merged in cassette order.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from costsim.analysis.spread import NONE, Spread
from costsim.metering.models import encoding_for
from costsim.metering.serialise import block_tokens
from costsim.metering.tokenizers import counter
from costsim.model import Call, TextBlock, ToolDef, ToolResultBlock, ToolUseBlock
from costsim.pricing.ledger import MeteredCall, Totals

__all__ = [
    "GROUPINGS",
    "AgentMatcher",
    "Grouper",
    "ToolUse",
    "group_cost",
    "merge_groups",
    "merge_spreads",
    "system_text",
    "tool_tokens",
]

GROUPINGS = ("model", "agent", "tool")


def system_text(call: Call) -> str:
    blocks = call.system or next(
        (m.content for m in call.messages if m.role in ("system", "developer")), ()
    )
    return "".join(b.text for b in blocks if isinstance(b, TextBlock))


@dataclass(frozen=True, slots=True)
class AgentMatcher:
    """Names the agent role of a call: a system-prompt regex, or the cassette it came from."""

    patterns: tuple[tuple[str, re.Pattern[str]], ...] = ()
    files: tuple[tuple[str, frozenset[Path]], ...] = ()
    paths: dict[str, str] = field(default_factory=dict)
    """Path as given -> role, of the cassettes ``files`` names, resolved where they were given:
    a worker on another machine, or in another folder, needs no file system to match them."""

    def role(self, call: Call) -> str:
        if self.paths:
            found = self.paths.get(str(call.provenance.path))
            if found is not None:
                return found
        elif self.files:
            path = _resolved(call.provenance.path)
            for name, files in self.files:
                if path in files:
                    return name
        if self.patterns:
            text = system_text(call)
            for name, pattern in self.patterns:
                if pattern.search(text):
                    return name
        return "(unmatched)"

    def for_paths(self, paths: Iterable[Path]) -> AgentMatcher:
        """This matcher with the role of each of ``paths`` looked up here, once."""
        if not self.files:
            return self
        found: dict[str, str] = {}
        for path in paths:
            resolved = _resolved(path)
            for name, files in self.files:
                if resolved in files:
                    found[str(path)] = name
                    break
        return AgentMatcher(self.patterns, (), found)


_RESOLVED: dict[Path, Path] = {}


def _resolved(path: Path) -> Path:
    """``path.resolve()``, once per file and run."""
    hit = _RESOLVED.get(path)
    if hit is None:
        if len(_RESOLVED) > 4096:
            _RESOLVED.clear()
        hit = _RESOLVED[path] = path.resolve()
    return hit


@dataclass(frozen=True, slots=True)
class ToolUse:
    """One tool in the calls of a column: requests sending it, and offline token counts."""

    sent: int = 0
    definition_tokens: int = 0
    result_tokens: int = 0

    def __add__(self, other: ToolUse) -> ToolUse:
        return ToolUse(
            self.sent + other.sent,
            self.definition_tokens + other.definition_tokens,
            self.result_tokens + other.result_tokens,
        )


def group_cost(
    calls: Iterable[MeteredCall], key: Callable[[MeteredCall], str]
) -> dict[str, Totals]:
    members: dict[str, list[MeteredCall]] = defaultdict(list)
    for item in calls:
        members[key(item)].append(item)
    return {name: Totals.of(items) for name, items in members.items()}


class _Counts:
    """Token counts of tool definitions and results, each object counted once: a variant's
    requests share most of their blocks with the recording's."""

    def __init__(self) -> None:
        self._seen: dict[tuple[int, str, str], tuple[object, int]] = {}

    def of(self, item: ToolDef | ToolResultBlock, encoding: str, call: Call) -> int:
        """Tokens of a definition or a result; a result's images and documents at what the
        call's provider bills for them (a screenshot counted as 0 hid most of a browser
        tool's weight)."""
        key = (id(item), encoding, call.model if isinstance(item, ToolResultBlock) else "")
        hit = self._seen.get(key)
        if hit is not None and hit[0] is item:
            return hit[1]
        count = counter(encoding)
        if isinstance(item, ToolResultBlock):
            stats = block_tokens(item, count, flavour=call.flavour, model=call.model)
            tokens = stats.tokens + stats.fixed
        else:
            tokens = count(item.name) + count(item.description) + count(str(item.input_schema))
        self._seen[key] = (item, tokens)
        return tokens


def _call_tools(call: Call, counts: _Counts) -> dict[str, list[int]]:
    table: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    encoding = encoding_for(call)
    for tool in call.tools:
        entry = table[tool.name]
        entry[0] += 1
        entry[1] += counts.of(tool, encoding, call)
    names = {b.id: b.name for m in call.messages for b in m.content if isinstance(b, ToolUseBlock)}
    for message in call.messages:
        for block in message.content:
            if isinstance(block, ToolResultBlock):
                name = names.get(block.tool_use_id, "(unknown tool)")
                table[name][2] += counts.of(block, encoding, call)
    return table


def tool_tokens(
    calls: Iterable[MeteredCall],
    memo: dict[int, tuple[Call, dict[str, list[int]]]] | None = None,
    counts: _Counts | None = None,
) -> dict[str, ToolUse]:
    """Per tool: requests sending it, definition tokens, result tokens (offline counts);
    ``memo`` keeps each request's counts for the other columns it appears in, ``counts``
    each definition's and result's."""
    memo = {} if memo is None else memo
    counts = _Counts() if counts is None else counts
    table: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for item in calls:
        hit = memo.get(id(item.call))
        if hit is None or hit[0] is not item.call:
            hit = memo[id(item.call)] = (item.call, _call_tools(item.call, counts))
        for name, values in hit[1].items():
            entry = table[name]
            for index, value in enumerate(values):
                entry[index] += value
    return {name: ToolUse(*values) for name, values in table.items()}


def _cassette(item: MeteredCall) -> str:
    return str(item.call.provenance.path)


@dataclass(slots=True)
class Grouper:
    """The breakdown tables of one cassette's columns (the baseline, then each variant)."""

    agents: AgentMatcher = field(default_factory=AgentMatcher)
    memo: dict[int, tuple[Call, dict[str, list[int]]]] = field(default_factory=dict)
    counts: _Counts = field(default_factory=_Counts)

    def _keys(self) -> dict[str, Callable[[MeteredCall], str]]:
        """What names a call's row in each cost breakdown."""
        return {
            "model": lambda item: item.billed_model,
            "provider": lambda item: item.call.billed_by,
            "flavour": lambda item: item.call.flavour.value,
            "agent": lambda item: self.agents.role(item.call),
        }

    def tables(
        self, calls: list[MeteredCall], *, cassette: bool = True
    ) -> dict[str, dict[str, Any]]:
        """Each breakdown's table of ``calls``; ``cassette`` False: all but the per-cassette
        one (a comparison has each column's per-cassette sums already)."""
        tables = {"cassette": group_cost(calls, _cassette)} if cassette else {}
        costs = {name: group_cost(calls, key) for name, key in self._keys().items()}
        return tables | costs | {"tool": tool_tokens(calls, self.memo, self.counts)}

    def spreads(
        self, calls: list[MeteredCall], spreads: list[Spread | None]
    ) -> dict[str, dict[str, Spread]]:
        """Per cost breakdown (the per-cassette one too), the p90 spread of each row's cost:
        the spreads of its calls' costs (``spreads``, one per call of ``calls``; None:
        nothing behind that call's cost was estimated) added up. A row none of whose calls
        was estimated is left out (its cost is exact); the spreads are not rounded, so that
        the sums of a run of cassettes are the sums of each cassette's, added."""
        tables: dict[str, dict[str, Spread]] = {}
        keys = {"cassette": _cassette, **self._keys()}
        for name, key in keys.items():
            table: dict[str, Spread] = {}
            for item, spread in zip(calls, spreads, strict=True):
                if spread is not None:
                    row = key(item)
                    table[row] = table.get(row, NONE) + spread
            tables[name] = table
        return tables


def merge_groups(into: dict[str, Any], other: dict[str, Any]) -> None:
    """Add one cassette's table of a column to the run's (Totals merged, ToolUse added)."""
    for name, value in other.items():
        mine = into.get(name)
        if mine is None:
            into[name] = value if isinstance(value, ToolUse) else _copy(value)
        elif isinstance(mine, ToolUse):
            into[name] = mine + value
        else:
            mine.merge(value)


def merge_spreads(into: dict[str, Spread], other: dict[str, Spread]) -> None:
    """Add one cassette's row spreads of a column to the run's."""
    for name, spread in other.items():
        into[name] = into.get(name, NONE) + spread


def _copy(totals: Totals) -> Totals:
    fresh = Totals()
    fresh.merge(totals)
    return fresh
