"""Baseline vs variants: totals, deltas with their dollar bands, divergence counts.

One model serves ``costsim simulate`` (one variant) and ``costsim compare`` (a scenario's
variants); renderers for table, JSON and Markdown live in :mod:`costsim.render.comparison`.

Deltas are against the recording: a call a variant bills differently is billed as recorded
plus the change between the variant's simulation and the recording's
(:mod:`costsim.engine.anchoring`), so the simulator's replay of the recording is in neither
a variant's cost nor its change. Every cost, delta and attribution carries a p90 band in dollars
(:mod:`costsim.analysis.bands`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

from costsim.analysis.bands import Band, Spread, VariantBands
from costsim.analysis.economics import BreakpointEconomics
from costsim.analysis.groups import AgentMatcher
from costsim.analysis.merging import merge
from costsim.analysis.outcomes import (
    Share,
    VariantPart,
    banded_part,
    cassette_tables,
    outcome,
)
from costsim.analysis.spread import NONE
from costsim.analysis.turns import Turns
from costsim.engine.simulate import Engine, VariantResult
from costsim.pricing.ledger import MeteredCall, Totals
from costsim.strategies.registry import Variant
from costsim.strategies.trace import Event, said_of_the_run

__all__ = [
    "Comparison",
    "VariantSummary",
    "attribute_steps",
    "compare_variants",
    "delta_pct",
    "finish",
    "summarise",
    "summary_of",
]


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
    """What the variant is compared with: the recording, billed as recorded."""
    baseline_per_cassette: dict[Path, Totals] = field(default_factory=dict)
    resimulated_calls: int = 0
    """Recorded calls the variant bills differently: those it keeps billed as recorded plus
    the simulated change, and those it removes (merged, say)."""
    attribution_bands: dict[str, Band] = field(default_factory=dict)
    interaction_band: Band | None = None
    """``interaction`` with its band (see :func:`costsim.analysis.spread.interaction_band`)."""
    breakpoints: list[BreakpointEconomics] = field(default_factory=list)
    """Per breakpoint position: tokens written and read back, and the dollars it made."""
    hidden_output: bool = False
    """Some call the variant bills differently has an output that is only a lower bound."""
    resimulation_gap: tuple[Decimal | None, Decimal | None] = (Decimal(0), Decimal(0))
    """(replayed cost, recorded cost) of the calls the variant bills differently: how far the
    simulator's replay of the recording is from what those calls were billed (a gap the
    variant's numbers leave out)."""

    @property
    def divergences(self) -> int:
        return sum(1 for event in self.events if event.kind == "divergence")

    @property
    def cost(self) -> Band:
        """The variant's cost and its p90 band: no lower than what the calls it leaves as
        recorded cost, as its change saves no more than the others did (the two bands are
        one; a trial's cost band stopped at $0 where its change's stopped at $0.0138); where
        some recorded call has no usage, its estimate is unsure both ways: at $0."""
        touched, recorded = self._touched(), self.baseline.cost_usd
        floor = recorded - touched if touched is not None and recorded is not None else None
        if self.baseline.estimated_calls:  # a call left alone is billed on an estimate
            floor = None
        return self.bands.band(self.totals.cost_usd, floor or Decimal(0))

    @property
    def delta(self) -> Band:
        """Variant cost minus its baseline (the recording), and its p90 band."""
        value = self.totals.change_from(self.baseline)
        return self.bands.delta_band(value, self._touched())

    def _touched(self) -> Decimal | None:
        """The most the variant can save: what the calls it bills differently were billed
        (the rest cost the same in both; a call without recorded usage at its estimate);
        None (no floor) when that is unknown, or when some of those calls' output is only a
        lower bound (a cut stream, a reasoning model recorded without usage: their bill may
        lie well above the estimate, and so may the saving)."""
        return None if self.hidden_output else self.resimulation_gap[1]

    def cassette_delta(self, path: Path) -> Band:
        variant = self.per_cassette.get(path, Totals())
        base = self.baseline_per_cassette.get(path, Totals())
        _, spread, estimated = self.bands.per_cassette.get(path, (Spread(), Spread(), False))
        # no floor where an output the cassette recorded is a lower bound (as the total's)
        hidden = self.hidden_output and base.hidden_output_calls > 0
        floor = -base.cost_usd if base.cost_usd is not None and not hidden else None
        return Band(variant.change_from(base), spread, estimated, floor)

    def cassette_cost(self, path: Path) -> Band:
        variant = self.per_cassette.get(path, Totals())
        spread, _, _ = self.bands.per_cassette.get(path, (Spread(), Spread(), False))
        return Band(variant.cost_usd, spread, bool(spread), Decimal(0))


@dataclass(slots=True)
class Comparison:
    baseline: Totals
    baseline_per_cassette: dict[Path, Totals]
    variants: list[VariantSummary]
    baseline_calls: list[MeteredCall] = field(default_factory=list, repr=False)
    as_of: datetime | None = None
    title: str = ""
    description: str = ""
    groups: dict[str, list[dict[str, Any]]] = field(default_factory=dict, repr=False)
    """Breakdowns summed per cassette: per key (cassette, model, provider, flavour, agent,
    tool), one table per column (the baseline, then every variant) of group name -> Totals
    (tokens per tool: ToolUse)."""
    turns: Turns | None = None
    """Running tokens per turn of the trace with the most recorded prompt tokens, in every
    column."""
    spreads: dict[str, list[dict[str, Spread]]] = field(default_factory=dict, repr=False)
    """The p90 spread of each cost in ``groups`` (per key but tools, one table per column;
    a row without one: nothing behind it was estimated)."""
    warm_starts: str = "steady"
    """What a changed request finds of a cache the recording found warm
    (:data:`costsim.cache.rules.WARM_STARTS`)."""


def delta_pct(new: float | Decimal | None, old: float | Decimal | None) -> float | None:
    if new is None or old is None or not old:
        return None
    return float((Decimal(str(new)) - Decimal(str(old))) / Decimal(str(old)) * 100)


def summary_of(variant: Variant, item: VariantPart) -> VariantSummary:
    """A variant's summary from the sums of its run (over one cassette or all)."""
    return VariantSummary(
        variant=variant,
        totals=item.totals,
        per_cassette=item.per_cassette,
        events=said_of_the_run(
            item.events, sum(1 for t in item.per_cassette.values() if t.llm_calls)
        ),
        bands=item.bands,
        baseline=item.baseline,
        baseline_per_cassette=item.baseline_per_cassette,
        resimulated_calls=item.resimulated_calls,
        resimulation_gap=(item.gap[0].cost_usd, item.gap[1].cost_usd),
        hidden_output=bool(item.gap[1].hidden_output_calls),
        breakpoints=item.breakpoints,
    )


def summarise(
    engine: Engine, variant: Variant, result: VariantResult, as_of: datetime | None
) -> VariantSummary:
    """The totals, baseline and bands of one variant's run."""
    summary = summary_of(variant, banded_part(engine, result, as_of)[0])
    summary.calls = result.metered(as_of=as_of)
    return summary


def attribute_steps(
    summary: VariantSummary, reduced: Sequence[Band], interaction: Spread = NONE
) -> None:
    """Each step's marginal saving, from the delta of the variant without it (``reduced``, in
    step order): that delta minus the delta with everything, with the band of what the two
    runs bill differently (see :func:`marginal_band`); and what the marginals leave, with its
    band (``interaction``)."""
    variant = summary.variant
    if len(variant.steps) < 2 or len(reduced) != len(variant.steps):
        return
    full = summary.delta
    for step, rest in zip(variant.steps, reduced, strict=True):
        saving = _difference(rest.value, full.value)
        summary.attribution[step.describe()] = saving
        summary.attribution_bands[step.describe()] = Band(saving, rest.spread, rest.estimated)
    if summary.attribution and None not in summary.attribution.values():
        marginals = [v for v in summary.attribution.values() if v is not None]
        total_saving = full.value
        if total_saving is not None:
            summary.interaction = -total_saving - sum(marginals, start=Decimal(0))
            summary.interaction_band = Band(summary.interaction, interaction, bool(interaction))


def compare_variants(
    engine: Engine,
    variants: Iterable[Variant],
    *,
    as_of: datetime | None = None,
    attribute: bool = True,
    title: str = "",
    description: str = "",
    on_variant: Callable[[Variant], None] | None = None,
    agents: AgentMatcher | None = None,
) -> Comparison:
    """Every variant over the engine's traces: the share of all of them (see
    :mod:`costsim.analysis.outcomes`, which splits the same work per cassette), finished."""
    chosen = list(variants)
    for variant in chosen:
        if on_variant is not None:
            on_variant(variant)
    shares = [
        outcome(piece, chosen, as_of=as_of, attribute=attribute, agents=agents)
        for piece in engine.by_distinct_paths()
    ]
    share = shares[0] if len(shares) == 1 else merge(shares, chosen, attribute=attribute)
    return finish(
        share,
        chosen,
        as_of=as_of,
        title=title,
        description=description,
        warm_starts=engine.rules.warm_starts,
    )


def finish(
    share: Share,
    variants: Sequence[Variant],
    *,
    as_of: datetime | None = None,
    title: str = "",
    description: str = "",
    warm_starts: str = "steady",
) -> Comparison:
    """The comparison of ``variants`` from the share of every cassette (merged in order)."""
    summaries = []
    for variant, item in zip(variants, share.variants, strict=True):
        summary = summary_of(variant, item)
        attribute_steps(summary, item.reduced, item.interaction)
        summaries.append(summary)
    return Comparison(
        baseline=share.baseline,
        baseline_per_cassette=share.baseline_per_cassette,
        variants=summaries,
        as_of=as_of,
        title=title,
        description=description,
        groups={"cassette": cassette_tables(share), **share.groups, "tool": share.tools},
        turns=share.turns,
        spreads=share.spreads,
        warm_starts=warm_starts,
    )
