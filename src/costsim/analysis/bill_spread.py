"""The p90 spread of a variant's bill and of its change, from the band terms of its calls and
of the recording's replay.

A changed call whose recording has usage is billed as its recorded usage plus the variant's
simulated usage minus the replay's (:mod:`costsim.engine.anchoring`), at the variant's prices.
So an estimate both simulations share (where a cache boundary falls in a prefix both send)
moves its bill by the difference of the two errors in tokens, at the variant's prices: the
replay's terms are priced as the variant prices that call (:func:`repriced`; a call routed to a
model five times cheaper used to carry the old model's error against the new one's, and a
band four times too wide). Its cost and its change share one band, as the recording's bill is
exact; a call the variant drops takes its recorded cost away, exactly. A call recorded without
usage is billed on the variant's estimate alone: its cost carries the variant's terms, its
change the difference from the replay's estimate of the recording.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from costsim.analysis.spread import NONE, Spread, Terms
from costsim.engine.simulate import SimulatedCall, TraceResult
from costsim.pricing.platform_ids import price_list

__all__ = ["TraceSpreads", "bill_spreads", "on_the_bill", "priced_alike", "repriced"]

Reprice = Callable[[SimulatedCall, SimulatedCall, object], Terms | None]
"""(the variant's call, the replay's, their name in the terms) -> the replay call's terms at
the variant call's prices; None when the two are priced alike."""


def on_the_bill(item: SimulatedCall) -> bool:
    """Billed on its recorded usage (the replay's errors cancel in its bill)."""
    origin = item.sim.origin
    return origin is not None and origin.usage is not None and not origin.usage.estimated


def repriced(
    variant: TraceResult,
    baseline: TraceResult,
    idents: Callable[[TraceResult], list[object]],
    terms: Terms,
    reprice: Reprice,
) -> Terms:
    """``terms`` (the replay's) with each call billed on its recorded usage that the variant
    prices otherwise (another model, tier or provider) at the variant's prices; ``terms``
    itself when none is. A call recorded without usage keeps its own prices: the recording's
    cost is that estimate, at the recorded model's prices."""
    ours = dict(zip(idents(variant), variant.calls, strict=True))
    result: Terms | None = None
    for item, ident in zip(baseline.calls, idents(baseline), strict=True):
        mine = ours.get(ident)
        moved = reprice(mine, item, ident) if mine is not None else None
        if moved is None:
            continue
        if result is None:
            result = dict(terms)
        for key in [key for key in result if key[1] == ident]:
            del result[key]
        result.update(moved)
    return terms if result is None else result


@dataclass(frozen=True, slots=True)
class TraceSpreads:
    """The spreads of one trace's bill under a variant."""

    cost: Spread
    """Of the variant's cost."""
    delta: Spread
    """Of its change from the recording."""
    calls: list[Spread]
    """Of each of the variant's calls' cost, in call order (not rounded: they add up to
    ``cost``), for the breakdowns that group calls."""


def bill_spreads(
    variant: TraceResult,
    baseline: TraceResult,
    idents: Callable[[TraceResult], list[object]],
    variant_terms: Terms,
    baseline_terms: Terms,
) -> TraceSpreads:
    """The spreads of the variant's cost, of its change from the recording and of each call's
    cost."""
    names = idents(variant)
    per_call: dict[object, Spread] = {}
    if variant_terms is baseline_terms:  # a trace left as recorded: its estimates, no change
        for key, spread in variant_terms.items():
            per_call[key[1]] = per_call.get(key[1], NONE) + spread
        calls = [per_call.get(name, NONE) for name in names]
        return TraceSpreads(Spread.total(variant_terms.values()), NONE.rounded(), calls)
    present = set(names)
    anchored = {i for i, item in zip(names, variant.calls, strict=True) if on_the_bill(item)}
    dropped = {
        ident
        for ident, item in zip(idents(baseline), baseline.calls, strict=True)
        if ident not in present and on_the_bill(item)
    }
    keys = [k for k in {*variant_terms, *baseline_terms} if k[1] not in dropped]
    changes: list[Spread] = []
    costs: list[Spread] = []
    for key in keys:
        moved = _moved(variant_terms.get(key, NONE), baseline_terms.get(key, NONE))
        cost = moved if key[1] in anchored else variant_terms.get(key, NONE)
        changes.append(moved)
        costs.append(cost)
        if key[1] in present:  # a call only the recording made costs the variant nothing
            per_call[key[1]] = per_call.get(key[1], NONE) + cost
    calls = [per_call.get(name, NONE) for name in names]
    return TraceSpreads(Spread.total(costs), Spread.total(changes), calls)


def _moved(variant: Spread, baseline: Spread) -> Spread:
    """A term both share moves both the same way (its true amount above the estimate in
    both, or below in both)."""
    return Spread.moved(variant.above - baseline.above, baseline.below - variant.below)


def priced_alike(one: SimulatedCall, other: SimulatedCall) -> bool:
    """Whether two calls are priced by one list (model, provider, tier)."""
    a, b = one.call, other.call
    if price_list(a) != price_list(b):
        return False
    first, second = one.modelled, other.modelled
    if first is None or second is None:
        return True
    return (first.tier, first.base_tier) == (second.tier, second.base_tier)
