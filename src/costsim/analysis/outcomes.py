"""A comparison's work split by cassette: each cassette's share, and the shares merged.

Cassettes are independent once the estimator is calibrated: every variant (and every variant
without one of its steps, for attribution) runs on one trace at a time, and what a comparison
reports of them are sums (totals, band half-widths, breakpoint economics, breakdown tables) or
lists in cassette order (events). A share holds those sums for one cassette, or for any run
of cassettes; merging shares in cassette order gives exactly what one pass over every
cassette gives, whatever process (or machine) computed each share. Shares hold no trace, so a
run's memory is its summaries.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

from costsim.analysis.bands import Band, VariantBands, variant_bands
from costsim.analysis.economics import BreakpointEconomics, _order, breakpoint_economics
from costsim.analysis.groups import AgentMatcher, Grouper, ToolUse, merge_groups
from costsim.analysis.turns import Turns, largest, turn_series
from costsim.engine.simulate import Engine, TraceResult, VariantResult
from costsim.pricing.ledger import MeteredCall, Totals, meter
from costsim.strategies.registry import Step, Variant
from costsim.strategies.trace import Event

__all__ = ["Share", "VariantPart", "fits", "gap_totals", "merge", "outcome", "part"]


COSTS = ("cassette", "model", "provider", "flavour", "agent")


@dataclass(slots=True)
class VariantPart:
    """What one variant's run contributes to its summary (see ``VariantSummary``)."""

    totals: Totals
    per_cassette: dict[Path, Totals]
    events: list[Event]
    bands: VariantBands
    baseline: Totals
    baseline_per_cassette: dict[Path, Totals]
    resimulated_calls: int
    gap: tuple[Totals, Totals]
    """(re-simulated, recorded) totals of the calls whose baseline is re-simulated."""
    breakpoints: list[BreakpointEconomics]
    reduced: list[Band] = field(default_factory=list)
    """The delta of the variant without each of its steps, in step order (attribution)."""


@dataclass(slots=True)
class Share:
    """One cassette's (or a run of cassettes') share of a comparison."""

    baseline: Totals
    baseline_per_cassette: dict[Path, Totals]
    variants: list[VariantPart]
    groups: dict[str, list[dict[str, Totals]]] = field(default_factory=dict)
    """Cost per model and per agent role: one table per column (the baseline, then each
    variant)."""
    tools: list[dict[str, ToolUse]] = field(default_factory=list)
    """Tokens per tool, one table per column."""
    turns: Turns | None = None
    """Running tokens per turn of the trace with the most recorded prompt tokens."""


def fits(share: Share, variants: Sequence[Variant], *, attribute: bool = True) -> bool:
    """``share`` has the shape a comparison of ``variants`` gives (one read from a cache
    folder, which can come from anywhere, is used only then)."""
    columns = len(variants) + 1
    if len(share.variants) != len(variants) or len(share.tools) != columns:
        return False
    if set(share.groups) != set(COSTS) or any(len(t) != columns for t in share.groups.values()):
        return False
    if share.turns is not None and len(share.turns.series) != columns:
        return False
    for variant, item in zip(variants, share.variants, strict=True):
        steps = len(variant.steps) if attribute and len(variant.steps) >= 2 else 0
        if len(item.reduced) != steps:
            return False
    return True


def gap_totals(result: VariantResult, as_of: datetime | None) -> tuple[Totals, Totals]:
    """(re-simulated, recorded) totals of the calls whose baseline is re-simulated."""
    resimulated = [item for trace in result.baselines for item in trace.calls if item.resimulated]
    simulated = Totals.of(meter(i.call, as_of=as_of, usage=i.usage) for i in resimulated)
    recorded = Totals.of(meter(i.call, as_of=as_of) for i in resimulated)
    return simulated, recorded


def _by_trace(traces: Sequence[TraceResult], calls: list[MeteredCall]) -> dict[Path, Totals]:
    """Totals per trace of metered ``calls`` (the traces' calls, in order)."""
    totals: dict[Path, Totals] = {}
    start = 0
    for trace in traces:
        end = start + len(trace.calls)
        totals[trace.path] = Totals.of(calls[start:end])
        start = end
    return totals


def part(
    engine: Engine,
    result: VariantResult,
    as_of: datetime | None,
    calls: list[MeteredCall] | None = None,
) -> VariantPart:
    """The sums of one variant's run (``calls``: its calls metered already)."""
    calls = result.metered(as_of=as_of) if calls is None else calls
    baseline = result.baseline_metered(as_of=as_of)
    return VariantPart(
        totals=Totals.of(calls),
        per_cassette=_by_trace(result.traces, calls),
        events=result.events,
        bands=variant_bands(result, engine.meter, as_of),
        baseline=Totals.of(baseline),
        baseline_per_cassette=_by_trace(result.baselines, baseline),
        resimulated_calls=sum(
            item.resimulated for trace in result.baselines for item in trace.calls
        ),
        gap=gap_totals(result, as_of),
        breakpoints=breakpoint_economics(result.traces, as_of=as_of),
    )


def _delta(item: VariantPart) -> Band:
    after, before = item.totals.cost_usd, item.baseline.cost_usd
    value = None if after is None or before is None else after - before
    return item.bands.delta_band(value)


def _unchanged(result: VariantResult) -> bool:
    """The variant left every trace as recorded (the engine then bills the recording)."""
    return all(t is b for t, b in zip(result.traces, result.baselines, strict=True))


def _copy(totals: Totals) -> Totals:
    fresh = Totals()
    fresh.merge(totals)
    return fresh


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


class _Runs:
    """Runs variants on an engine, billing every run that changes nothing only once, and
    every set of steps once (a variant without one of its steps, for attribution, is often
    another variant of the comparison)."""

    def __init__(self, engine: Engine, as_of: datetime | None, grouper: Grouper) -> None:
        self.engine, self.as_of, self.grouper = engine, as_of, grouper
        self.baseline = engine.run(Variant("baseline"))
        self.baseline_calls = self.baseline.metered(as_of=as_of)
        self.tables = grouper.tables(self.baseline_calls)
        self._recorded: VariantPart | None = None
        self._done: dict[str, tuple[VariantPart, dict[str, dict[str, Any]], list[MeteredCall]]]
        self._done = {}

    def part(
        self, variant: Variant
    ) -> tuple[VariantPart, dict[str, dict[str, Any]], list[MeteredCall]]:
        key = _steps_key(variant.steps)
        done = self._done.get(key)
        if done is None:
            done = self._done[key] = self._run(variant)
        item, tables, calls = done
        # its own lists: a part's attribution is filled in afterwards
        return replace(item, events=list(item.events), reduced=[]), tables, calls

    def _run(
        self, variant: Variant
    ) -> tuple[VariantPart, dict[str, dict[str, Any]], list[MeteredCall]]:
        result = self.engine.run(variant)
        if _unchanged(result):
            if self._recorded is None:
                self._recorded = part(self.engine, self.baseline, self.as_of, self.baseline_calls)
            return _as_recorded(self._recorded, result.events), self.tables, self.baseline_calls
        calls = result.metered(as_of=self.as_of)
        return part(self.engine, result, self.as_of, calls), self.grouper.tables(calls), calls

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
    metered = [runs.baseline_calls]
    parts = []
    for variant in variants:
        item, tables, calls = runs.part(variant)
        columns.append(tables)
        metered.append(calls)
        if attribute and len(variant.steps) >= 2:
            for index in range(len(variant.steps)):
                item.reduced.append(_delta(runs.part(variant.without(index))[0]))
        parts.append(item)
    return Share(
        baseline=Totals.of(runs.baseline_calls),
        baseline_per_cassette=_by_trace(runs.baseline.traces, runs.baseline_calls),
        variants=parts,
        groups={key: [column[key] for column in columns] for key in COSTS},
        tools=[column["tool"] for column in columns],
        turns=runs.turns(metered),
    )


def _sum(a: Decimal | None, b: Decimal | None) -> Decimal | None:
    return None if a is None or b is None else a + b


def _merge_bands(into: VariantBands, other: VariantBands) -> None:
    into.cost += other.cost
    into.baseline += other.baseline
    into.delta += other.delta
    into.estimated |= other.estimated
    into.baseline_estimated |= other.baseline_estimated
    into.delta_estimated |= other.delta_estimated
    into.per_cassette.update(other.per_cassette)


def _merge_breakpoints(
    into: list[BreakpointEconomics], other: list[BreakpointEconomics]
) -> list[BreakpointEconomics]:
    table = {row.position: row for row in into}
    for row in other:
        mine = table.get(row.position)
        if mine is None:
            table[row.position] = BreakpointEconomics(
                row.position,
                row.writes,
                row.tokens_written_5m,
                row.tokens_written_1h,
                row.reads,
                row.tokens_read,
                row.saved_usd,
                row.premium_usd,
            )
            continue
        mine.writes += row.writes
        mine.tokens_written_5m += row.tokens_written_5m
        mine.tokens_written_1h += row.tokens_written_1h
        mine.reads += row.reads
        mine.tokens_read += row.tokens_read
        mine.saved_usd = _sum(mine.saved_usd, row.saved_usd)
        mine.premium_usd = _sum(mine.premium_usd, row.premium_usd)
    return [table[name] for name in sorted(table, key=_order)]


def _merge_band(a: Band, b: Band) -> Band:
    return Band(_sum(a.value, b.value), a.half + b.half, a.estimated or b.estimated)


def _merge_part(into: VariantPart, other: VariantPart) -> None:
    into.totals.merge(other.totals)
    into.per_cassette.update(other.per_cassette)
    into.events.extend(other.events)
    _merge_bands(into.bands, other.bands)
    into.baseline.merge(other.baseline)
    into.baseline_per_cassette.update(other.baseline_per_cassette)
    into.resimulated_calls += other.resimulated_calls
    into.gap[0].merge(other.gap[0])
    into.gap[1].merge(other.gap[1])
    into.breakpoints = _merge_breakpoints(into.breakpoints, other.breakpoints)
    into.reduced = [_merge_band(a, b) for a, b in zip(into.reduced, other.reduced, strict=True)]


def _empty(variant: Variant, attribute: bool) -> VariantPart:
    reduced = (
        [Band(Decimal(0)) for _ in variant.steps] if attribute and len(variant.steps) >= 2 else []
    )
    return VariantPart(
        Totals(), {}, [], VariantBands(), Totals(), {}, 0, (Totals(), Totals()), [], reduced
    )


def _intern(table: dict[Path, Totals], recorded: Mapping[Path, Totals]) -> None:
    """Per-cassette sums equal to the recording's become the recording's own object: most
    variants leave most cassettes as recorded, so a run holds about one ``Totals`` per
    cassette, not one per cassette and column. Per-cassette sums are never changed in place
    (merges make new ones), so sharing them is safe."""
    for path, totals in table.items():
        same = recorded.get(path)
        if same is not None and same is not totals and same == totals:
            table[path] = same


def _merge_cassettes(into: dict[str, Any], table: dict[str, Any], column: dict[str, Any]) -> None:
    """:func:`merge_groups` for the per-cassette table of a column, whose sums are the
    column's per-cassette sums: shared when equal, and never changed in place."""
    for name, totals in table.items():
        mine = into.get(name)
        if mine is not None:
            summed = _copy(mine)
            summed.merge(totals)
            into[name] = summed
            continue
        same = column.get(name)
        into[name] = same if same is not None and same == totals else _copy(totals)


def merge(shares: Iterable[Share], variants: Sequence[Variant], *, attribute: bool = True) -> Share:
    """The shares added up in the order given (cassette order)."""
    total = Share(
        Totals(),
        {},
        [_empty(variant, attribute) for variant in variants],
        {key: [{} for _ in range(len(variants) + 1)] for key in COSTS},
        [{} for _ in range(len(variants) + 1)],
    )
    for share in shares:
        total.baseline.merge(share.baseline)
        recorded = share.baseline_per_cassette
        total.baseline_per_cassette.update(recorded)
        columns = [recorded]
        for mine, theirs in zip(total.variants, share.variants, strict=True):
            _intern(theirs.per_cassette, recorded)
            _intern(theirs.baseline_per_cassette, recorded)
            columns.append(theirs.per_cassette)
            _merge_part(mine, theirs)
        for key, tables in share.groups.items():
            for column, into, table in zip(columns, total.groups[key], tables, strict=True):
                if key == "cassette":
                    _merge_cassettes(into, table, {str(p): t for p, t in column.items()})
                else:
                    merge_groups(into, table)
        for into_tools, tools in zip(total.tools, share.tools, strict=True):
            merge_groups(into_tools, tools)
        total.turns = largest(total.turns, share.turns)
    return total
