"""Baseline vs variants: totals, deltas, divergence counts and the estimate's error band.

One model serves ``costsim simulate`` (one variant) and ``costsim compare`` (a scenario's
variants); renderers for table, JSON and Markdown live in :mod:`costsim.render.comparison`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from pathlib import Path

from costsim.engine.simulate import Engine, VariantResult
from costsim.metering.calibration import default_p90_ape, percentile
from costsim.metering.models import family
from costsim.pricing.ledger import MeteredCall, Totals
from costsim.strategies.registry import Variant
from costsim.strategies.trace import Event

__all__ = ["Comparison", "VariantSummary", "compare_variants", "delta_pct"]


@dataclass(frozen=True, slots=True)
class ErrorBand:
    """How sure the variant's numbers are: held-out calibration error of the estimates."""

    estimated_calls: int
    """Calls whose prompt the variant changed (metered by calibrated estimate)."""
    p90_ape: float | None
    """p90 absolute % error of the estimator on recorded calls of the families involved."""
    tokens: int
    """± tokens on the variant's prompt total implied by that error on the changed delta."""


@dataclass(slots=True)
class VariantSummary:
    variant: Variant
    totals: Totals
    per_cassette: dict[Path, Totals]
    events: list[Event]
    band: ErrorBand
    calls: list[MeteredCall] = field(default_factory=list, repr=False)
    attribution: dict[str, Decimal | None] = field(default_factory=dict)
    """Leave-one-out marginal saving (USD) of each strategy of a stacked variant: the cost of
    the variant without that step minus the cost of the whole variant. Marginals need not add
    up to the total saving; what they leave over is ``interaction`` (total saving minus the sum
    of marginals: positive when strategies reinforce each other, negative when they overlap)."""
    interaction: Decimal | None = None

    @property
    def divergences(self) -> int:
        return sum(1 for event in self.events if event.kind == "divergence")


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


def _band(engine: Engine, result: VariantResult) -> ErrorBand:
    errors: list[float] = []
    changed = 0
    delta_tokens = 0
    names = set()
    for trace in result.traces:
        for item in trace.calls:
            if item.sim.untouched or item.usage is None:
                continue
            changed += 1
            names.add(family(item.call))
            base = item.sim.origin.usage if item.sim.origin is not None else None
            base_total = base.prompt_total if base is not None else 0
            delta_tokens += abs(item.usage.prompt_total - base_total)
    shipped: list[float] = []
    for name in names:
        if engine.meter.coefficients_source(name) == "fitted":
            errors.extend(engine.meter.reports[name].errors)
        else:
            shipped.append(default_p90_ape(name) or 100.0)  # uncalibrated: say so, loudly
    p90 = max([v for v in (percentile(errors, 90),) if v is not None] + shipped, default=None)
    return ErrorBand(changed, p90, round(delta_tokens * (p90 or 0) / 100))


def _saving(baseline: Totals, variant: Totals) -> Decimal | None:
    if baseline.cost_usd is None or variant.cost_usd is None:
        return None
    return baseline.cost_usd - variant.cost_usd


def _attribution(
    engine: Engine, variant: Variant, totals: Totals, as_of: datetime | None
) -> dict[str, Decimal | None]:
    """Each step's marginal saving: cost without it minus cost with everything."""
    if len(variant.steps) < 2:
        return {}
    result: dict[str, Decimal | None] = {}
    for index, step in enumerate(variant.steps):
        without = engine.run(variant.without(index)).totals(as_of=as_of)
        full, rest = totals.cost_usd, without.cost_usd
        result[step.describe()] = None if full is None or rest is None else rest - full
    return result


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
        result = engine.run(variant)
        calls = result.metered(as_of=as_of)
        totals = Totals.of(calls)
        summaries.append(
            VariantSummary(
                variant=variant,
                totals=totals,
                per_cassette=result.totals_by_trace(as_of=as_of),
                events=result.events,
                band=_band(engine, result),
                calls=calls,
                attribution=_attribution(engine, variant, totals, as_of) if attribute else {},
            )
        )
        summary = summaries[-1]
        if summary.attribution and None not in summary.attribution.values():
            total_saving = _saving(baseline.totals(as_of=as_of), totals)
            marginals = [v for v in summary.attribution.values() if v is not None]
            if total_saving is not None:
                summary.interaction = total_saving - sum(marginals, start=Decimal(0))
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
