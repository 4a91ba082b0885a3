"""Breakdowns of a comparison: cost per cassette, model, provider, flavour or agent role;
tokens per tool.

Each grouping is one entry in ``BREAKDOWNS``; each gives one row per key with one cell per
column (the baseline, then every variant). Tables and JSON are made in
:mod:`costsim.render.breakdown`. The groups are summed per cassette while the comparison runs
(:mod:`costsim.analysis.groups`), so a breakdown needs no trace.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from costsim.analysis.comparison import Comparison
from costsim.analysis.groups import AgentMatcher, Grouper, ToolUse, system_text
from costsim.analysis.spread import Spread
from costsim.pricing.ledger import MeteredCall, Totals

__all__ = [
    "BREAKDOWNS",
    "AgentMatcher",
    "Breakdown",
    "ToolUse",
    "breakdown",
    "comparison_tables",
    "system_text",
]


@dataclass(frozen=True, slots=True)
class Breakdown:
    """Rows keyed by model, agent or tool; one cell per column (None: not in that column)."""

    by: str
    columns: tuple[str, ...]
    rows: dict[str, tuple[Totals | ToolUse | None, ...]]
    spreads: dict[str, tuple[Spread | None, ...]] | None = None
    """Per row, the p90 spread of each cost (None: nothing behind it was estimated); None
    when they are not known (tokens per tool, or a comparison built without them)."""


def _names(comparison: Comparison) -> list[str]:
    return ["baseline", *(v.variant.name for v in comparison.variants)]


def _tables(by: str, comparison: Comparison, agents: AgentMatcher) -> list[dict[str, Any]]:
    if by in comparison.groups:
        return comparison.groups[by]
    grouper = Grouper(agents)  # a comparison built by hand: group its metered calls now
    columns: list[list[MeteredCall]] = [comparison.baseline_calls]
    columns += [v.calls for v in comparison.variants]
    return [grouper.tables(calls)[by] for calls in columns]


def comparison_tables(
    comparison: Comparison, agents: AgentMatcher | None = None
) -> dict[str, list[dict[str, Any]]]:
    """Every breakdown table of ``comparison``: per key, one table per column."""
    return {by: _tables(by, comparison, agents or AgentMatcher()) for by in BREAKDOWNS}


def _rows(by: str, comparison: Comparison, agents: AgentMatcher) -> Breakdown:
    tables = _tables(by, comparison, agents)
    keys = sorted({k for table in tables for k in table})
    empty = ToolUse() if by == "tool" else None
    rows = {name: tuple(table.get(name, empty) for table in tables) for name in keys}
    spread_tables = comparison.spreads.get(by)
    spreads = (
        {name: tuple(table.get(name) for table in spread_tables) for name in keys}
        if spread_tables is not None and len(spread_tables) == len(tables)
        else None
    )
    return Breakdown(by, tuple(_names(comparison)), dict(rows), spreads)


def by_model(comparison: Comparison, agents: AgentMatcher) -> Breakdown:
    return _rows("model", comparison, agents)


def by_agent(comparison: Comparison, agents: AgentMatcher) -> Breakdown:
    return _rows("agent", comparison, agents)


def by_tool(comparison: Comparison, agents: AgentMatcher) -> Breakdown:
    return _rows("tool", comparison, agents)


def by_cassette(comparison: Comparison, agents: AgentMatcher) -> Breakdown:
    return _rows("cassette", comparison, agents)


def by_provider(comparison: Comparison, agents: AgentMatcher) -> Breakdown:
    return _rows("provider", comparison, agents)


def by_flavour(comparison: Comparison, agents: AgentMatcher) -> Breakdown:
    return _rows("flavour", comparison, agents)


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
