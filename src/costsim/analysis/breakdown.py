"""Breakdowns of a comparison: cost per model, per agent role, tokens per tool.

Each grouping is one entry in ``BREAKDOWNS``; all return rows of (key, baseline, variants...).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from tabulate import tabulate

from costsim.analysis.comparison import Comparison
from costsim.metering.models import encoding_for
from costsim.metering.serialise import block_tokens
from costsim.metering.tokenizers import counter
from costsim.model import Call, TextBlock, ToolResultBlock, ToolUseBlock
from costsim.pricing.ledger import MeteredCall, Totals
from costsim.render.report import money

__all__ = ["BREAKDOWNS", "AgentMatcher", "render_breakdown"]


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


def _group_cost(
    calls: Iterable[MeteredCall], key: Callable[[MeteredCall], str]
) -> dict[str, Totals]:
    groups: dict[str, Totals] = defaultdict(Totals)
    for item in calls:
        groups[key(item)].add(item)
    return groups


def _cost_table(comparison: Comparison, key: Callable[[MeteredCall], str], title: str) -> str:
    columns = [("baseline", _group_cost(comparison.baseline_calls, key))]
    columns += [(v.variant.name, _group_cost(v.calls, key)) for v in comparison.variants]
    keys = sorted({k for _, groups in columns for k in groups})
    rows = []
    for name in keys:
        row = [name]
        for _, groups in columns:
            totals = groups.get(name)
            row.append("-" if totals is None else f"{totals.llm_calls} / {_money(totals)}")
        rows.append(row)
    headers = [title, *(f"{name} (calls / cost)" for name, _ in columns)]
    return tabulate(rows, headers=headers, tablefmt="simple", disable_numparse=True)


def _money(totals: Totals) -> str:
    return money(totals.cost_usd) if totals.cost_usd is not None else "unknown"


def by_model(comparison: Comparison, agents: AgentMatcher) -> str:
    return _cost_table(comparison, lambda m: m.call.priced_model or "(no model)", "model")


def by_agent(comparison: Comparison, agents: AgentMatcher) -> str:
    return _cost_table(comparison, lambda m: agents.role(m.call), "agent")


def _tool_tokens(calls: Iterable[MeteredCall]) -> dict[str, list[int]]:
    """Per tool: [calls sending it, definition tokens, result tokens] (offline counts)."""
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
    return table


def by_tool(comparison: Comparison, agents: AgentMatcher) -> str:
    columns = [("baseline", _tool_tokens(comparison.baseline_calls))]
    columns += [(v.variant.name, _tool_tokens(v.calls)) for v in comparison.variants]
    names = sorted({n for _, table in columns for n in table})
    rows = []
    for name in names:
        row = [name]
        for _, table in columns:
            sent, definition, results = table.get(name, [0, 0, 0])
            row.append(f"{sent} / {definition:,} / {results:,}")
        rows.append(row)
    headers = ["tool", *(f"{n} (sent / def tok / result tok)" for n, _ in columns)]
    note = "Token counts are offline tokenizer counts of the requests (not calibrated)."
    return tabulate(rows, headers=headers, tablefmt="simple", disable_numparse=True) + "\n" + note


BREAKDOWNS: dict[str, Callable[[Comparison, AgentMatcher], str]] = {
    "model": by_model,
    "agent": by_agent,
    "tool": by_tool,
}


def render_breakdown(by: str, comparison: Comparison, agents: AgentMatcher) -> str:
    return BREAKDOWNS[by](comparison, agents) + "\n"
