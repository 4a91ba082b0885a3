"""Breakdowns of a comparison: cost per cassette, model, provider, flavour or agent role;
tokens per tool.

Each grouping is one entry in ``BREAKDOWNS``; each gives one row per key with one cell per
column (the baseline, then every variant). Tables and JSON are made in
:mod:`costsim.render.breakdown`.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from costsim.analysis.comparison import Comparison
from costsim.metering.models import encoding_for
from costsim.metering.serialise import block_tokens
from costsim.metering.tokenizers import counter
from costsim.model import Call, TextBlock, ToolResultBlock, ToolUseBlock
from costsim.pricing.ledger import MeteredCall, Totals

__all__ = ["BREAKDOWNS", "AgentMatcher", "Breakdown", "ToolUse", "breakdown"]


@dataclass(frozen=True, slots=True)
class AgentMatcher:
    """Names the agent role of a call: a system-prompt regex, or the cassette it came from."""

    patterns: tuple[tuple[str, re.Pattern[str]], ...] = ()
    files: tuple[tuple[str, frozenset[Path]], ...] = ()

    def role(self, call: Call) -> str:
        path = call.provenance.path.resolve()
        for name, files in self.files:
            if path in files:
                return name
        text = system_text(call)
        for name, pattern in self.patterns:
            if pattern.search(text):
                return name
        return "(unmatched)"


def system_text(call: Call) -> str:
    blocks = call.system or next(
        (m.content for m in call.messages if m.role in ("system", "developer")), ()
    )
    return "".join(b.text for b in blocks if isinstance(b, TextBlock))


@dataclass(frozen=True, slots=True)
class ToolUse:
    """One tool in the calls of a column: requests sending it, and offline token counts."""

    sent: int = 0
    definition_tokens: int = 0
    result_tokens: int = 0


@dataclass(frozen=True, slots=True)
class Breakdown:
    """Rows keyed by model, agent or tool; one cell per column (None: not in that column)."""

    by: str
    columns: tuple[str, ...]
    rows: dict[str, tuple[Totals | ToolUse | None, ...]]


def _group_cost(
    calls: Iterable[MeteredCall], key: Callable[[MeteredCall], str]
) -> dict[str, Totals]:
    groups: dict[str, Totals] = defaultdict(Totals)
    for item in calls:
        groups[key(item)].add(item)
    return groups


def _columns(comparison: Comparison) -> list[tuple[str, list[MeteredCall]]]:
    return [("baseline", comparison.baseline_calls)] + [
        (v.variant.name, v.calls) for v in comparison.variants
    ]


def _cost_rows(by: str, comparison: Comparison, key: Callable[[MeteredCall], str]) -> Breakdown:
    columns = [(name, _group_cost(calls, key)) for name, calls in _columns(comparison)]
    keys = sorted({k for _, groups in columns for k in groups})
    rows = {name: tuple(groups.get(name) for _, groups in columns) for name in keys}
    return Breakdown(by, tuple(name for name, _ in columns), dict(rows))


def by_model(comparison: Comparison, agents: AgentMatcher) -> Breakdown:
    return _cost_rows("model", comparison, lambda m: m.call.priced_model or "(no model)")


def by_agent(comparison: Comparison, agents: AgentMatcher) -> Breakdown:
    return _cost_rows("agent", comparison, lambda m: agents.role(m.call))


def _tool_tokens(calls: Iterable[MeteredCall]) -> dict[str, ToolUse]:
    """Per tool: requests sending it, definition tokens, result tokens (offline counts)."""
    table: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for item in calls:
        call = item.call
        count = counter(encoding_for(call))
        for tool in call.tools:
            entry = table[tool.name]
            entry[0] += 1
            entry[1] += count(tool.name) + count(tool.description) + count(str(tool.input_schema))
        names = {
            b.id: b.name for m in call.messages for b in m.content if isinstance(b, ToolUseBlock)
        }
        for message in call.messages:
            for block in message.content:
                if isinstance(block, ToolResultBlock):
                    name = names.get(block.tool_use_id, "(unknown tool)")
                    table[name][2] += block_tokens(block, count).tokens
    return {name: ToolUse(*values) for name, values in table.items()}


def by_tool(comparison: Comparison, agents: AgentMatcher) -> Breakdown:
    columns = [(name, _tool_tokens(calls)) for name, calls in _columns(comparison)]
    names = sorted({n for _, table in columns for n in table})
    rows = {name: tuple(table.get(name, ToolUse()) for _, table in columns) for name in names}
    return Breakdown("tool", tuple(name for name, _ in columns), dict(rows))


def by_cassette(comparison: Comparison, agents: AgentMatcher) -> Breakdown:
    return _cost_rows("cassette", comparison, lambda m: str(m.call.provenance.path))


def by_provider(comparison: Comparison, agents: AgentMatcher) -> Breakdown:
    return _cost_rows("provider", comparison, lambda m: m.call.provider)


def by_flavour(comparison: Comparison, agents: AgentMatcher) -> Breakdown:
    return _cost_rows("flavour", comparison, lambda m: m.call.flavour.value)


BREAKDOWNS: dict[str, Callable[[Comparison, AgentMatcher], Breakdown]] = {
    "cassette": by_cassette,
    "model": by_model,
    "provider": by_provider,
    "flavour": by_flavour,
    "agent": by_agent,
    "tool": by_tool,
}
"""The ``--by`` vocabulary of ``compare``: the groupings of ``report`` (cassette, model,
provider, flavour) and those only a scenario knows (agent roles, tools)."""


def breakdown(by: str, comparison: Comparison, agents: AgentMatcher) -> Breakdown:
    return BREAKDOWNS[by](comparison, agents)
