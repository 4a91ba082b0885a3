"""Baseline vs variants: totals, deltas with their dollar bands, divergence counts.

One model serves ``costsim simulate`` (one variant) and ``costsim compare`` (a scenario's
variants); renderers for table, JSON and Markdown live in :mod:`costsim.render.comparison`.

Deltas are like for like: each variant is compared with its own baseline, the recording with
the calls the variant bills differently re-simulated the same way (see
:mod:`costsim.engine.simulate`). For a variant that changes nothing, that baseline is the
recording itself. Every cost, delta and attribution carries a p90 band in dollars
(:mod:`costsim.analysis.bands`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from pathlib import Path

from costsim.analysis.bands import Band, VariantBands, combine, variant_bands
from costsim.analysis.economics import BreakpointEconomics, breakpoint_economics
from costsim.engine.simulate import Engine, VariantResult
from costsim.pricing.ledger import MeteredCall, Totals, meter
from costsim.strategies.registry import Variant
from costsim.strategies.trace import Event

__all__ = ["Comparison", "VariantSummary", "compare_variants", "delta_pct"]


def _difference(new: Decimal | None, old: Decimal | None) -> Decimal | None:
    return None if new is None or old is None else new - old


@dataclass(slots=True)
class VariantSummary:
    variant: Variant
    totals: Totals
    per_cassette: dict[Path, Totals]
    events: list[Event]
    bands: VariantBands = field(default_factory=VariantBands)
    calls: list[MeteredCall] = field(default_factory=list, repr=False)
    attribution: dict[str, Decimal | None] = field(default_factory=dict)
    """Leave-one-out marginal saving (USD) of each strategy of a stacked variant: the delta of
    the variant without that step minus the delta of the whole variant. Marginals need not add
    up to the total saving; what they leave over is ``interaction`` (total saving minus the sum
    of marginals: positive when strategies reinforce each other, negative when they overlap)."""
    interaction: Decimal | None = None
    baseline: Totals = field(default_factory=Totals)
    """What the variant is compared with, like for like: the recording, with the calls the
    variant bills differently re-simulated the same way."""
    baseline_per_cassette: dict[Path, Totals] = field(default_factory=dict)
    resimulated_calls: int = 0
    """Calls whose baseline is the re-simulated recording rather than what was billed."""
    attribution_bands: dict[str, Band] = field(default_factory=dict)
    breakpoints: list[BreakpointEconomics] = field(default_factory=list)
    """Per breakpoint position: tokens written and read back, and the dollars it made."""
    resimulation_gap: tuple[Decimal | None, Decimal | None] = (Decimal(0), Decimal(0))
    """(re-simulated cost, recorded cost) of the calls whose baseline is re-simulated: how far
    the simulator's replay of the recording is from what those calls were billed."""

    @property
    def divergences(self) -> int:
        return sum(1 for event in self.events if event.kind == "divergence")

    @property
    def cost(self) -> Band:
        """The variant's cost and its p90 band."""
        return self.bands.band(self.totals.cost_usd)

    @property
    def delta(self) -> Band:
        """Variant cost minus its like-for-like baseline, and its p90 band."""
        return self.bands.delta_band(_difference(self.totals.cost_usd, self.baseline.cost_usd))

    def cassette_delta(self, path: Path) -> Band:
        variant = self.per_cassette.get(path, Totals())
        base = self.baseline_per_cassette.get(path, Totals())
        _, half, estimated = self.bands.per_cassette.get(path, (Decimal(0), Decimal(0), False))
        return Band(_difference(variant.cost_usd, base.cost_usd), half, estimated)

    def cassette_cost(self, path: Path) -> Band:
        variant = self.per_cassette.get(path, Totals())
        half, _, _ = self.bands.per_cassette.get(path, (Decimal(0), Decimal(0), False))
        return Band(variant.cost_usd, half, half > 0)


@dataclass(slots=True)
class Comparison:
    baseline: Totals
    baseline_per_cassette: dict[Path, Totals]
    variants: list[VariantSummary]
    baseline_calls: list[MeteredCall] = field(default_factory=list, repr=False)
    as_of: datetime | None = None
    title: str = ""
    description: str = ""


def delta_pct(new: float | Decimal | None, old: float | Decimal | None) -> float | None:
    if new is None or old is None or not old:
        return None
    return float((Decimal(str(new)) - Decimal(str(old))) / Decimal(str(old)) * 100)


def _gap(result: VariantResult, as_of: datetime | None) -> tuple[Decimal | None, Decimal | None]:
    resimulated = [item for trace in result.baselines for item in trace.calls if item.resimulated]
    simulated = Totals.of(meter(i.call, as_of=as_of, usage=i.usage) for i in resimulated)
    recorded = Totals.of(meter(i.call, as_of=as_of) for i in resimulated)
    return simulated.cost_usd, recorded.cost_usd


def summarise(
    engine: Engine, variant: Variant, result: VariantResult, as_of: datetime | None
) -> VariantSummary:
    """The totals, like-for-like baseline and bands of one variant's run."""
    calls = result.metered(as_of=as_of)
    return VariantSummary(
        variant=variant,
        totals=Totals.of(calls),
        per_cassette=result.totals_by_trace(as_of=as_of),
        events=result.events,
        bands=variant_bands(result, engine.meter, as_of),
        calls=calls,
        baseline=Totals.of(result.baseline_metered(as_of=as_of)),
        baseline_per_cassette=result.baseline_by_trace(as_of=as_of),
        resimulated_calls=sum(
            item.resimulated for trace in result.baselines for item in trace.calls
        ),
        resimulation_gap=_gap(result, as_of),
        breakpoints=breakpoint_economics(result.traces, as_of=as_of),
    )


def _attribute(
    engine: Engine, summary: VariantSummary, as_of: datetime | None
) -> tuple[dict[str, Decimal | None], dict[str, Band]]:
    """Each step's marginal saving: the delta without it minus the delta with everything."""
    variant = summary.variant
    if len(variant.steps) < 2:
        return {}, {}
    full = summary.delta
    savings: dict[str, Decimal | None] = {}
    bands: dict[str, Band] = {}
    for index, step in enumerate(variant.steps):
        reduced = variant.without(index)
        rest = summarise(engine, reduced, engine.run(reduced), as_of).delta
        saving = _difference(rest.value, full.value)
        savings[step.describe()] = saving
        bands[step.describe()] = combine(saving, rest, full)
    return savings, bands


def compare_variants(
    engine: Engine,
    variants: Iterable[Variant],
    *,
    as_of: datetime | None = None,
    attribute: bool = True,
    title: str = "",
    description: str = "",
    on_variant: Callable[[Variant], None] | None = None,
) -> Comparison:
    baseline = engine.run(Variant("baseline"))
    summaries = []
    for variant in variants:
        if on_variant is not None:
            on_variant(variant)
        summary = summarise(engine, variant, engine.run(variant), as_of)
        if attribute:
            summary.attribution, summary.attribution_bands = _attribute(engine, summary, as_of)
        if summary.attribution and None not in summary.attribution.values():
            marginals = [v for v in summary.attribution.values() if v is not None]
            total_saving = summary.delta.value
            if total_saving is not None:
                summary.interaction = -total_saving - sum(marginals, start=Decimal(0))
        summaries.append(summary)
    baseline_calls = baseline.metered(as_of=as_of)
    return Comparison(
        baseline=Totals.of(baseline_calls),
        baseline_calls=baseline_calls,
        baseline_per_cassette=baseline.totals_by_trace(as_of=as_of),
        variants=summaries,
        as_of=as_of,
        title=title,
        description=description,
    )
