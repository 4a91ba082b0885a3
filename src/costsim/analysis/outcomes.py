"""A comparison's work split by cassette: each cassette's share (merged in
:mod:`costsim.analysis.merging`).

Cassettes are independent once the estimator is calibrated: every variant (and every variant
without one of its steps, for attribution) runs on one trace at a time, and what a comparison
reports of them are sums (totals, band half-widths, breakpoint economics, breakdown tables) or
lists in cassette order (events). A share holds those sums for one cassette, or for any run
of cassettes; merging shares in cassette order gives exactly what one pass over every
cassette gives, whatever process (or machine) computed each share. Shares hold no trace, so a
run's memory is its summaries.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from costsim.analysis.bands import Band, VariantBands, banded_calls, run_terms
from costsim.analysis.economics import BreakpointEconomics, breakpoint_economics
from costsim.analysis.groups import AgentMatcher, Grouper, ToolUse
from costsim.analysis.left_out import counted, with_left_out
from costsim.analysis.spread import NONE, RunTerms, Spread, interaction_band, marginal_band
from costsim.analysis.trace_sums import TraceSums
from costsim.analysis.turns import Turns, turn_series
from costsim.engine.simulate import Engine, TraceResult, VariantResult
from costsim.model import CassettePath
from costsim.pricing.ledger import MeteredCall, Totals, forget_metered, meter
from costsim.strategies.registry import Step, Variant
from costsim.strategies.trace import Event

__all__ = [
    "COSTS",
    "SPREADS",
    "Share",
    "VariantPart",
    "banded_part",
    "cassette_tables",
    "fits",
    "gap_totals",
    "outcome",
]


COSTS = ("model", "provider", "flavour", "agent")
"""The cost tables a share sums per column; the per-cassette one is each column's per-cassette
sums (see :func:`cassette_tables`), which the share holds already."""

SPREADS = (*COSTS, "cassette")
"""The cost tables whose costs' spreads a share sums per column: every one."""


@dataclass(slots=True)
class VariantPart:
    """What one variant's run contributes to its summary (see ``VariantSummary``)."""

    totals: Totals
    per_cassette: dict[CassettePath, Totals]
    events: list[Event]
    bands: VariantBands
    baseline: Totals
    baseline_per_cassette: dict[CassettePath, Totals]
    resimulated_calls: int
    gap: tuple[Totals, Totals]
    """(replayed, recorded) totals of the recorded calls the variant bills differently."""
    breakpoints: list[BreakpointEconomics]
    reduced: list[Band] = field(default_factory=list)
    """Per step, in step order (attribution): the delta of the variant without the step, with
    the band of what that run bills differently from the whole variant's on an estimate."""
    interaction: Spread = NONE
    """With ``reduced``: the band of what the steps' marginals leave of the variant's saving
    (see :func:`interaction_band`)."""


@dataclass(slots=True)
class Share:
    """One cassette's (or a run of cassettes') share of a comparison."""

    baseline: Totals
    baseline_per_cassette: dict[CassettePath, Totals]
    variants: list[VariantPart]
    groups: dict[str, list[dict[str, Totals]]] = field(default_factory=dict)
    """Cost per model, provider, flavour and agent role (:data:`COSTS`): one table per column
    (the baseline, then each variant)."""
    spreads: dict[str, list[dict[str, Spread]]] = field(default_factory=dict)
    """The p90 spread of each cost in ``groups`` and of each cassette's (the same tables; a
    row without one: nothing behind that cost was estimated)."""
    tools: list[dict[str, ToolUse]] = field(default_factory=list)
    """Tokens per tool, one table per column."""
    turns: Turns | None = None
    """Running tokens per turn of the trace with the most recorded prompt tokens."""
    unversioned: list[CassettePath] = field(default_factory=list)
    """The cassettes without vcrpy's closing ``version`` key (:mod:`costsim.analysis.cut_short`)."""


def fits(share: Share, variants: Sequence[Variant], *, attribute: bool = True) -> bool:
    """``share`` has the shape a comparison of ``variants`` gives (one read from a cache
    folder, which can come from anywhere, is used only then)."""
    columns = len(variants) + 1
    if len(share.variants) != len(variants) or len(share.tools) != columns:
        return False
    for tables, keys in ((share.groups, COSTS), (share.spreads, SPREADS)):
        if set(tables) != set(keys) or any(len(t) != columns for t in tables.values()):
            return False
    if share.turns is not None and len(share.turns.series) != columns:
        return False
    for variant, item in zip(variants, share.variants, strict=True):
        steps = len(variant.steps) if attribute and len(variant.steps) >= 2 else 0
        if len(item.reduced) != steps:
            return False
    return True


def gap_totals(result: VariantResult, as_of: datetime | None) -> tuple[Totals, Totals]:
    """(simulated, recorded) totals of the recorded calls the variant bills differently: how
    far the simulator's replay of them is from their bill (a gap the variant's numbers leave
    out, :mod:`costsim.engine.anchoring`)."""
    resimulated = [item for trace in result.baselines for item in trace.calls if item.resimulated]
    simulated = Totals.of(meter(i.call, as_of=as_of, usage=i.modelled) for i in resimulated)
    # as the baseline bills them: a call without recorded usage at its estimate
    recorded = Totals.of(meter(i.call, as_of=as_of, usage=i.usage) for i in resimulated)
    return simulated, recorded


def _by_trace(traces: Sequence[TraceResult], calls: list[MeteredCall]) -> dict[Path, Totals]:
    """Totals per trace of metered ``calls`` (the traces' calls, in order)."""
    return _keyed(traces, _each_trace(traces, calls))


def _keyed(traces: Sequence[TraceResult], totals: list[Totals]) -> dict[Path, Totals]:
    return dict(zip((trace.path for trace in traces), totals, strict=True))


def _each_trace(
    traces: Sequence[TraceResult],
    calls: list[MeteredCall],
    others: Sequence[TraceResult] | None = None,
    sums: TraceSums | None = None,
) -> list[Totals]:
    """Totals of each trace's metered ``calls`` (the traces' calls, in order), in order; a
    trace that is its counterpart in ``others`` (the run left it as recorded) summed once
    per ``sums``."""
    totals: list[Totals] = []
    start = 0
    for index, trace in enumerate(traces):
        end = start + len(trace.calls)
        if sums is not None and others is not None:
            totals.append(sums.totals(trace, trace is others[index], calls[start:end]))
        else:
            totals.append(Totals.of(calls[start:end]))
        start = end
    return totals


def _summed(per_trace: list[Totals]) -> Totals:
    """The sum of per-trace totals, in trace order: exactly the totals of all their calls
    (every trace counted, also one named twice, whose path a per-cassette table holds once)."""
    total = Totals()
    for totals in per_trace:
        total.merge(totals)
    return total


def banded_part(
    engine: Engine,
    result: VariantResult,
    as_of: datetime | None,
    calls: list[MeteredCall] | None = None,
    terms: RunTerms | None = None,
    sums: TraceSums | None = None,
) -> tuple[VariantPart, list[Spread | None]]:
    """The sums of one variant's run (``calls``, ``terms``: its calls metered, and its band
    terms, already; ``sums``: what the comparison's runs share of the traces they leave as
    recorded), and the spread of each of its calls' cost (in ``calls``' order; None: nothing
    behind it was estimated)."""
    calls = result.metered(as_of=as_of) if calls is None else calls
    baseline = result.baseline_metered(as_of=as_of)
    sums = TraceSums() if sums is None else sums
    each = _each_trace(result.traces, calls, result.baselines, sums)
    baseline_each = _each_trace(result.baselines, baseline, result.traces, sums)
    bands, spreads = banded_calls(result, engine.meter, as_of, terms)
    item = VariantPart(
        totals=_summed(each),
        per_cassette=_keyed(result.traces, each),
        events=result.events,
        bands=bands,
        baseline=_summed(baseline_each),
        baseline_per_cassette=_keyed(result.baselines, baseline_each),
        resimulated_calls=sum(
            item.resimulated for trace in result.baselines for item in trace.calls
        ),
        gap=gap_totals(result, as_of),
        breakpoints=breakpoint_economics(result.traces, as_of=as_of),
    )
    return item, spreads


def cassette_tables(share: Share) -> list[dict[str, Totals]]:
    """The cost per cassette of each column (the baseline, then each variant), as a breakdown
    table: the share's per-cassette sums of the cassettes that made LLM(-looking) calls."""
    columns = [share.baseline_per_cassette, *(item.per_cassette for item in share.variants)]
    return [{str(p): t for p, t in c.items() if t.llm_calls or t.left_out_calls} for c in columns]


def _delta(item: VariantPart) -> Band:
    return item.bands.delta_band(item.totals.change_from(item.baseline))


def _unchanged(result: VariantResult) -> bool:
    """The variant left every trace as recorded (the engine then bills the recording)."""
    return all(t is b for t, b in zip(result.traces, result.baselines, strict=True))


def _as_recorded(recorded: VariantPart, events: list[Event]) -> VariantPart:
    """The part of a variant that changed nothing: the recording's sums (shared, not copied:
    parts are only ever read, and merged into fresh sums), its own events."""
    return VariantPart(
        totals=recorded.totals,
        per_cassette=recorded.per_cassette,
        events=events,
        bands=recorded.bands,
        baseline=recorded.baseline,
        baseline_per_cassette=recorded.baseline_per_cassette,
        resimulated_calls=recorded.resimulated_calls,
        gap=(Totals(), Totals()),
        breakpoints=[],
        reduced=[],
    )


_KEYS: dict[tuple[int, ...], tuple[tuple[Step, ...], str]] = {}


def _steps_key(steps: tuple[Step, ...]) -> str:
    """What identifies a set of steps: their text (equal steps written twice share a run),
    computed once per set of step objects."""
    ids = tuple(map(id, steps))
    hit = _KEYS.get(ids)
    if hit is not None and all(a is b for a, b in zip(hit[0], steps, strict=True)):
        return hit[1]
    if len(_KEYS) >= 1024:
        _KEYS.clear()
    key = repr(steps)
    _KEYS[ids] = (steps, key)
    return key


@dataclass(frozen=True, slots=True)
class _Run:
    """One set of steps run over the engine's traces: its sums, breakdown tables, metered
    calls and band terms."""

    part: VariantPart
    tables: dict[str, dict[str, Any]]
    spreads: dict[str, dict[str, Spread]]
    """The spread of each cost in ``tables``."""
    calls: list[MeteredCall]
    terms: RunTerms


class _Runs:
    """Runs variants on an engine, billing every run that changes nothing only once, and
    every set of steps once (a variant without one of its steps, for attribution, is often
    another variant of the comparison)."""

    def __init__(self, engine: Engine, as_of: datetime | None, grouper: Grouper) -> None:
        self.engine, self.as_of, self.grouper = engine, as_of, grouper
        self.sums = TraceSums()
        self.baseline = engine.run(Variant("baseline"))
        self.baseline_calls = self.baseline.metered(as_of=as_of)
        self.tables = grouper.tables(self.baseline_calls, cassette=False)
        self._recorded: _Run | None = None
        self._recorded_terms: RunTerms | None = None
        self._grouped: dict[str, dict[str, Spread]] | None = None
        self._done: dict[str, _Run] = {}

    def run(self, variant: Variant) -> _Run:
        key = _steps_key(variant.steps)
        done = self._done.get(key)
        if done is None:
            done = self._done[key] = self._run(variant)
        return done

    def part(self, variant: Variant) -> VariantPart:
        """The variant's sums, with its own lists (its attribution is filled in afterwards)."""
        item = self.run(variant).part
        return replace(item, events=list(item.events), reduced=[])

    def _run(self, variant: Variant) -> _Run:
        result = self.engine.run(variant)
        if _unchanged(result):
            recorded = self._as_recorded()
            return replace(recorded, part=_as_recorded(recorded.part, result.events))
        calls = result.metered(as_of=self.as_of)
        terms = run_terms(result, self.engine.meter, self.as_of, self.sums)
        item, spreads = banded_part(self.engine, result, self.as_of, calls, terms, self.sums)
        tables = self.grouper.tables(calls, cassette=False)
        return _Run(item, tables, self.grouper.spreads(calls, spreads), calls, terms)

    def _baseline_terms(self) -> RunTerms:
        if self._recorded_terms is None:
            meter = self.engine.meter
            self._recorded_terms = run_terms(self.baseline, meter, self.as_of, self.sums)
        return self._recorded_terms

    def recorded_spreads(self) -> dict[str, dict[str, Spread]]:
        """The spread of each cost of the recording's tables (its calls without usage),
        grouped once for the baseline column and a variant that changes nothing."""
        if self._grouped is None:
            terms = self._baseline_terms()
            spreads = banded_calls(self.baseline, self.engine.meter, self.as_of, terms)[1]
            self._grouped = self.grouper.spreads(self.baseline_calls, spreads)
        return self._grouped

    def _as_recorded(self) -> _Run:
        if self._recorded is None:
            terms = self._baseline_terms()
            item, _ = banded_part(
                self.engine, self.baseline, self.as_of, self.baseline_calls, terms, self.sums
            )
            spreads = self.recorded_spreads()
            self._recorded = _Run(item, self.tables, spreads, self.baseline_calls, terms)
        return self._recorded

    def reduced(self, variant: Variant, index: int) -> Band:
        """The delta of ``variant`` without step ``index``, banded by what that run bills
        differently from the whole variant's on an estimate."""
        rest = self.run(variant.without(index))
        delta = _delta(rest.part).value
        return marginal_band(delta, self.run(variant).terms, rest.terms)

    def interaction(self, variant: Variant) -> Spread:
        """The band of what the marginals of ``variant``'s steps leave of its saving."""
        rests = [self.run(variant.without(i)).terms for i in range(len(variant.steps))]
        return interaction_band(None, self.run(variant).terms, rests).spread

    def turns(self, columns: list[list[MeteredCall]]) -> Turns | None:
        """The running totals of the trace with the most recorded prompt tokens."""
        per_trace = _by_trace(self.baseline.traces, self.baseline_calls)
        if not per_trace:
            return None
        path = max(per_trace, key=lambda p: (per_trace[p].prompt_tokens, str(p)))
        series = [turn_series(calls, path) for calls in columns]
        return Turns(path, per_trace[path].prompt_tokens, series)


def outcome(
    engine: Engine,
    variants: Sequence[Variant],
    *,
    as_of: datetime | None = None,
    attribute: bool = True,
    agents: AgentMatcher | None = None,
) -> Share:
    """The share of the engine's traces (usually one) in a comparison of ``variants``."""
    runs = _Runs(engine, as_of, Grouper(agents or AgentMatcher()))
    columns = [runs.tables]
    spreads = [runs.recorded_spreads()]
    metered = [runs.baseline_calls]
    parts = []
    for variant in variants:
        done = runs.run(variant)
        item = runs.part(variant)
        columns.append(done.tables)
        spreads.append(done.spreads)
        metered.append(done.calls)
        if attribute and len(variant.steps) >= 2:
            item.reduced.extend(runs.reduced(variant, index) for index in range(len(variant.steps)))
            item.interaction = runs.interaction(variant)
        parts.append(item)
    forget_metered()  # the memo served this run; it holds the engine's requests
    recorded = _by_trace(runs.baseline.traces, runs.baseline_calls)
    tables = (t for p in parts for t in (p.per_cassette, p.baseline_per_cassette))
    missed = with_left_out(engine.traces, [recorded, *tables])  # what no sum holds, said in each
    for item in parts:
        item.totals, item.baseline = counted(item.totals, missed), counted(item.baseline, missed)
    return Share(
        baseline=counted(Totals.of(runs.baseline_calls), missed),
        baseline_per_cassette=recorded,
        variants=parts,
        groups={key: [column[key] for column in columns] for key in COSTS},
        spreads={key: [column[key] for column in spreads] for key in SPREADS},
        tools=[column["tool"] for column in columns],
        turns=runs.turns(metered),
        unversioned=[trace.path for trace in engine.traces if not trace.versioned],
    )
