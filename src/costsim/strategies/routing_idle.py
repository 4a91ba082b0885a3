"""``routing`` rules that route nothing, said once of the run (a trial's ``complexity=true``
with three tiers saved nothing without a word: ``standard`` is a tier no rule sends a call
to, and no message matched the light or heavy patterns)."""

from __future__ import annotations

from collections.abc import Mapping

from costsim.strategies.trace import Event, SimTrace

__all__ = ["COMPLEXITY_REASONS", "idle_rules"]

COMPLEXITY_REASONS = frozenset({"complex task", "short or simple message"})
"""Why the router gives for a call it routes by the complexity of its latest user text."""


def idle_rules(
    tiers: Mapping[str, str],
    named: set[str],
    *,
    complexity: bool,
    by_complexity: int,
    trace: SimTrace,
) -> list[Event]:
    """Notes of the run: each tier of ``tiers`` (tier -> model) no rule names (``named``:
    the tiers and models agents, ``models`` and ``default`` name), and complexity routing
    when it routed no call of ``trace``."""
    if not trace.calls:
        return []
    where = trace.calls[0].call.provenance
    notes = [
        f"tiers.{tier} ({model}) routes nothing: no rule sends a call to it (complexity "
        "routes to light and heavy; agents, models and default to the tiers they name)"
        for tier, model in tiers.items()
        if tier not in named and not (complexity and tier in ("light", "heavy"))
    ]
    if complexity and not by_complexity and {"light", "heavy"} & set(tiers):
        notes.append(
            "complexity=true routes nothing: no call's latest user text is short or simple "
            "(light) or asks to analyse, plan, design, refactor, migrate or debug (heavy)"
        )
    return [Event("routing", "note", message, where, of_run=True) for message in notes]
