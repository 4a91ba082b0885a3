"""Error bands in dollars: every estimated quantity of a simulation, priced.

A call billed as recorded carries no error. Otherwise each estimated quantity is a term of
the band, in dollars at the call's own prices: its p90 error in tokens times the price step
it moves tokens across.

- the prompt total, when estimated: a changed request by the calibrated delta's increment
  error, an added request or one without recorded usage by the whole-prompt error;
- each cache boundary the simulation put at an estimated prefix position (where the read
  ends, where the 1h write ends, where the writes end): the prefix estimate's error on the
  distance to the nearest recorded number, times the price step across the boundary;
- the output, when estimated (from the response text, or from thinking counted from its
  visible text).

- the tokens server-side tool iterations added to a request that can cache (their cache
  reads and writes happen inside the provider and are not simulated): billed uncached, they
  may have been read (cheaper), and so may what the simulation writes, or written (dearer,
  at Anthropic), so the term is lopsided;
- a prefix OpenAI's automatic caching is simulated to read: best effort, it may be missed,
  which can only cost more.

A term says how far the true amount may lie below the estimate and how far above: most are
even, and those two are not, so a band is a range around the estimate, not a ``±``.

Terms add up: errors of one estimator on one trace move together, so they are not assumed to
cancel. A delta's band counts what differs between the variant's simulation and the recording's
(from which the change is measured): a boundary both put at the same estimated position
moves both alike.

The error tables are measured leave-one-source-out, but a new source is further from the
fitted ones than the tables say: held out by source on the real-cassette corpus, the tables'
p90 covered 60-70% of recorded values. The factors below (and the prompt's, in
:mod:`costsim.analysis.prompt_band`) widen each kind of term to cover at
least 90% there (``benchmarks/bench_bands.py`` measures it; the factors were chosen on those
same folds, so treat the coverage as fitted, not as a fresh test).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal

from costsim.analysis.bill_spread import bill_spreads, on_the_bill, priced_alike, repriced
from costsim.analysis.boundary_band import boundary_terms, segments
from costsim.analysis.prompt_band import (
    changed_prompt_error,
    error_price,
    prompt_error,
    prompt_sides,
    removes_only,
)
from costsim.analysis.spread import (
    NONE,
    ZERO,
    Band,
    RunTerms,
    Spread,
    Terms,
)
from costsim.analysis.trace_sums import TraceSums
from costsim.engine.simulate import SimulatedCall, TraceResult, VariantResult
from costsim.metering.error_table import OUTPUT_ERRORS
from costsim.metering.meter import Meter
from costsim.model import Call, CassettePath, Usage
from costsim.model.reasoning import output_hidden
from costsim.pricing.platform_ids import price_list
from costsim.pricing.units import UnitPrices, unit_prices

__all__ = [
    "CONFIDENCE",
    "Band",
    "Spread",
    "VariantBands",
    "banded_calls",
    "call_terms",
    "changed_prompt_error",
    "run_terms",
    "variant_bands",
]

CONFIDENCE = 0.9
"""The bands are p90 bands: the recorded value should fall inside nine times in ten."""

OUTPUT_FACTOR = 8.0
"""An output estimated from the response text: this many times the output p90."""


def _prices(item: SimulatedCall, usage: Usage, as_of: datetime | None) -> UnitPrices | None:
    call = item.call
    return unit_prices(
        *price_list(call, prompt=usage.prompt_total),
        as_of or call.recorded_at,
        prompt=usage.prompt_total,
        base_tier=usage.base_tier,
        tier=usage.tier,
    )


def _output_error(item: SimulatedCall, usage: Usage, meter: Meter) -> tuple[float, float]:
    """How far (tokens) the call's true output may lie below and above its estimate."""
    sim = item.sim
    if sim.output_error:
        error = min(sim.output_error * OUTPUT_FACTOR, float(usage.output))
        return error, error
    if sim.output is not None:
        return 0.0, 0.0
    source = sim.origin if sim.origin is not None else sim.call
    if sim.origin is not None and sim.origin.usage is not None:
        return 0.0, 0.0
    share = meter.expected_output_error(source).p90 / 100  # of the true output
    error = usage.output * share * OUTPUT_FACTOR
    # an estimate that misses a share p of the truth (visible thinking: 98% on Chat
    # Completions) is p / (1 - p) of itself short of it; never below nothing
    above = max(error, usage.output * share / (1 - share)) if share < 1 else error
    below = min(error, float(usage.output))
    if output_hidden(source, usage):
        # what arrived is a lower bound of the output: below, only its count's error (the
        # family's calibrated text count); above, as far as hidden output reached
        below = usage.output * meter.expected_error(source).p90 / 100
        above = max(above, usage.output * HIDDEN_OUTPUT)
    cap = _output_cap(source)  # nor above the output the request allowed
    if cap is not None:
        above = min(above, max(float(cap - usage.output), 0.0))
    return below, above


HIDDEN_OUTPUT = max(e.p90 / (100 - e.p90) for e in OUTPUT_ERRORS.values() if e.p90 < 100)
"""How far above what arrived an output may lie whose thinking or end did not show (a cut
stream, a reasoning model recorded without usage), in multiples of it: as far as the
corpus's thinking calls' visible text fell short of their bills (98.3% at p90 on Chat
Completions: 57.8 times), one figure for every API."""


_OUTPUT_CAPS = ("max_completion_tokens", "max_output_tokens", "max_tokens")
"""Request parameters that cap a response's output, thinking included (OpenAI Chat's newer
and older names, Responses', Anthropic's)."""


def _output_cap(call: Call) -> int | None:
    for name in _OUTPUT_CAPS:
        value = call.extra.get(name)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


def call_terms(
    item: SimulatedCall,
    meter: Meter,
    as_of: datetime | None = None,
    ident: object = None,
    *,
    removes_only: bool = False,
    priced_as: SimulatedCall | None = None,
) -> Terms:
    """The band terms (dollars) of one billed call; empty when it is billed as recorded.
    ``ident`` names the call in the terms' keys (default: its recorded call, else itself);
    ``removes_only``: only strategies that take content away changed it (see
    :func:`removes_only`); ``priced_as``: at that call's prices (a variant's, for the replay
    of the call it changed; see :mod:`costsim.analysis.bill_spread`)."""
    usage = item.modelled  # what was simulated: the gap to the bill is not the variant's
    sim = item.sim
    if usage is None or (not item.resimulated and not usage.estimated and sim.output is None):
        return {}
    # priced_as: at its model, tier and prompt whole (a long-context tier)
    prices = _prices(priced_as or item, (priced_as and priced_as.modelled) or usage, as_of)
    if prices is None:
        return {}
    if ident is None:
        ident = id(sim.origin) if sim.origin is not None else id(sim.call)
    terms: Terms = {}
    prompt = prompt_error(item, usage, meter)
    if prompt:
        below, above = prompt_sides(item, usage, prompt, removes_only)
        price = error_price(item, usage, meter, segments(usage), prices)
        terms[("prompt", ident)] = Spread(
            Decimal(str(round(below, 3))) * price, Decimal(str(round(above, 3))) * price
        )
    if item.resimulated or (usage.estimated and item.cache is not None):
        # an estimated call's cache split is the simulation's too (no recorded usage)
        terms.update(boundary_terms(item, usage, meter, prices, ident, prompt))
    below, above = _output_error(item, usage, meter)
    if below or above:
        terms[("output", ident)] = Spread(
            Decimal(str(round(below, 3))) * prices.output,
            Decimal(str(round(above, 3))) * prices.output,
        )
    return terms


def _estimated(items: Iterable[SimulatedCall]) -> bool:
    return any(map(_guessed, items))


def _guessed(item: SimulatedCall) -> bool:
    """Something behind the call's cost is an estimate (its band is not exact, if narrow)."""
    return item.modelled is not None and (
        item.resimulated or item.modelled.estimated or item.sim.output is not None
    )


def _idents(trace: TraceResult) -> list[object]:
    """What names each call in the band terms: its recorded call; a call a strategy added,
    by the recorded call it comes before and its place among the added ones there, so the
    same added call (a summary, say) has the same name in two runs of one trace."""
    idents: list[object] = []
    pending: list[int] = []
    for index, item in enumerate(trace.calls):
        origin = item.sim.origin
        if origin is None:
            pending.append(index)
            idents.append(None)
            continue
        for place, added in enumerate(pending):
            idents[added] = ("added", id(origin), place)
        pending = []
        idents.append(id(origin))
    for place, added in enumerate(pending):
        idents[added] = ("added", None, place)
    return idents


def _terms(
    trace: TraceResult, meter: Meter, as_of: datetime | None, removes_only: bool = False
) -> Terms:
    terms: Terms = {}
    for item, ident in zip(trace.calls, _idents(trace), strict=True):
        terms.update(call_terms(item, meter, as_of, ident, removes_only=removes_only))
    return terms


@dataclass(slots=True)
class VariantBands:
    """Half-widths (p90, USD) of a variant's cost and of its change from the recording,
    in all and per cassette; and whether anything behind each was estimated."""

    cost: Spread = NONE
    delta: Spread = NONE
    estimated: bool = False
    delta_estimated: bool = False
    """Some call is billed differently from its baseline on an estimate (a delta the variant
    leaves at exactly zero is exact, whatever the calls it did not touch rest on)."""
    per_cassette: dict[CassettePath, tuple[Spread, Spread, bool]] = field(default_factory=dict)
    """Per cassette: (cost spread, delta spread, delta estimated)."""

    def band(self, value: Decimal | None, floor: Decimal = ZERO) -> Band:
        """The band of the variant's cost, which is no lower than ``floor`` (what the calls
        it leaves as recorded cost)."""
        return Band(value, self.cost, self.estimated, max(floor, ZERO))

    def delta_band(self, value: Decimal | None, baseline: Decimal | None = None) -> Band:
        """The band of a change of cost that cannot save more than ``baseline`` (the cost of
        the calls it changes)."""
        floor = -baseline if baseline is not None else None
        return Band(value, self.delta, self.delta_estimated, floor)


def run_terms(
    result: VariantResult, meter: Meter, as_of: datetime | None, sums: TraceSums | None = None
) -> RunTerms:
    """Per trace, the terms of the variant's calls and of its baseline's (``sums``: what the
    comparison's runs share of the traces they leave as recorded)."""
    shrinks = removes_only(result)
    sums = TraceSums() if sums is None else sums

    def made(trace: TraceResult, shrinking: bool) -> Terms:
        return _terms(trace, meter, as_of, shrinking)

    def reprice(mine: SimulatedCall, item: SimulatedCall, ident: object) -> Terms | None:
        if mine is item or not on_the_bill(item) or priced_alike(mine, item):
            return None
        return call_terms(item, meter, as_of, ident, priced_as=mine)

    return [
        (
            sums.terms(trace, trace is baseline, shrinks, made),
            repriced(
                trace,
                baseline,
                _idents,
                sums.terms(baseline, trace is baseline, False, made),
                reprice,
            )
            if trace is not baseline
            else sums.terms(baseline, True, False, made),
        )
        for trace, baseline in zip(result.traces, result.baselines, strict=True)
    ]


def variant_bands(
    result: VariantResult, meter: Meter, as_of: datetime | None, terms: RunTerms | None = None
) -> VariantBands:
    """The run's bands (``terms``: its :func:`run_terms`, when computed already)."""
    return banded_calls(result, meter, as_of, terms)[0]


def banded_calls(
    result: VariantResult, meter: Meter, as_of: datetime | None, terms: RunTerms | None = None
) -> tuple[VariantBands, list[Spread | None]]:
    """The run's bands, and the spread of each of its calls' cost (the traces' calls in
    order, as :meth:`VariantResult.metered` lists them; not rounded; None: nothing behind
    the cost was estimated), which breakdowns sum by group."""
    bands = VariantBands()
    calls: list[Spread | None] = []
    terms = run_terms(result, meter, as_of) if terms is None else terms
    for trace, baseline, (variant_terms, baseline_terms) in zip(
        result.traces, result.baselines, terms, strict=True
    ):
        spreads = bill_spreads(trace, baseline, _idents, variant_terms, baseline_terms)
        changed = bool(spreads.delta) or any(
            item.resimulated or item.sim.output is not None or item.sim.origin is None
            for item in [*trace.calls, *baseline.calls]
        )
        bands.cost += spreads.cost
        bands.delta += spreads.delta
        bands.estimated |= _estimated(trace.calls)
        bands.delta_estimated |= changed
        bands.per_cassette[trace.path] = (spreads.cost, spreads.delta, changed)
        calls.extend(
            spread if spread or _guessed(item) else None
            for item, spread in zip(trace.calls, spreads.calls, strict=True)
        )
    return bands, calls
