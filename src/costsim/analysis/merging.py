"""Shares of a comparison merged: what one pass over every cassette gives, from the shares
of its cassettes (or of runs of them) added up in cassette order (see
:mod:`costsim.analysis.outcomes`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from decimal import Decimal
from pathlib import Path

from costsim.analysis.bands import Band, VariantBands
from costsim.analysis.economics import BreakpointEconomics, _order
from costsim.analysis.groups import merge_groups, merge_spreads
from costsim.analysis.outcomes import COSTS, SPREADS, Share, VariantPart
from costsim.analysis.turns import largest
from costsim.pricing.ledger import Totals
from costsim.strategies.registry import Variant

__all__ = ["merge"]


def _sum(a: Decimal | None, b: Decimal | None) -> Decimal | None:
    return None if a is None or b is None else a + b


def _merge_bands(into: VariantBands, other: VariantBands) -> None:
    into.cost += other.cost
    into.delta += other.delta
    into.estimated |= other.estimated
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
    return Band(_sum(a.value, b.value), a.spread + b.spread, a.estimated or b.estimated)


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
    into.interaction = into.interaction + other.interaction


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


def merge(shares: Iterable[Share], variants: Sequence[Variant], *, attribute: bool = True) -> Share:
    """The shares added up in the order given (cassette order)."""
    columns = len(variants) + 1
    total = Share(
        Totals(),
        {},
        [_empty(variant, attribute) for variant in variants],
        groups={key: [{} for _ in range(columns)] for key in COSTS},
        spreads={key: [{} for _ in range(columns)] for key in SPREADS},
        tools=[{} for _ in range(columns)],
    )
    for share in shares:
        total.baseline.merge(share.baseline)
        recorded = share.baseline_per_cassette
        total.baseline_per_cassette.update(recorded)
        for mine, theirs in zip(total.variants, share.variants, strict=True):
            _intern(theirs.per_cassette, recorded)
            _intern(theirs.baseline_per_cassette, recorded)
            _merge_part(mine, theirs)
        for key, tables in share.groups.items():
            for into, table in zip(total.groups[key], tables, strict=True):
                merge_groups(into, table)
        for key, spread_tables in share.spreads.items():
            for into_spreads, spreads in zip(total.spreads[key], spread_tables, strict=True):
                merge_spreads(into_spreads, spreads)
        for into_tools, tools in zip(total.tools, share.tools, strict=True):
            merge_groups(into_tools, tools)
        total.turns = largest(total.turns, share.turns)
        total.unversioned.extend(share.unversioned)
    return total
