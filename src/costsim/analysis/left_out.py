"""Interactions that look like LLM calls but that costsim cannot meter (an API it does not
read, a body a lenient read could not read): counted in the sums they belong to
(``Totals.left_out_calls``), so that a total that leaves them out says it is a lower bound
instead of looking whole."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

from costsim.model import LEFT_OUT_KINDS, CassettePath, CassetteTrace
from costsim.pricing.ledger import Totals

__all__ = ["counted", "left_out", "with_left_out"]


def left_out(trace: CassetteTrace) -> int:
    """Interactions of ``trace`` that look like LLM calls costsim could not meter."""
    return sum(1 for note in trace.notes if note.note.kind in LEFT_OUT_KINDS)


def _counted(table: dict[CassettePath, Totals], counts: dict[Path, int]) -> None:
    """Each cassette's sums of ``table`` with its left-out count (copies: sums are shared
    between columns, and only ever read)."""
    for path, count in counts.items():
        found = table.get(path)
        if found is not None:
            table[path] = replace(found, left_out_calls=count)


def with_left_out(
    traces: Iterable[CassetteTrace], per_cassette: Iterable[dict[CassettePath, Totals]]
) -> int:
    """Set the left-out count of every cassette of ``traces`` in each per-cassette table of
    ``per_cassette``; the count over all of them (for the tables' sums)."""
    counts = {trace.path: n for trace in traces if (n := left_out(trace))}
    for table in per_cassette:
        _counted(table, counts)
    return sum(counts.values())


def counted(totals: Totals, count: int) -> Totals:
    """``totals`` (the sums over cassettes) with ``count`` interactions left out."""
    return replace(totals, left_out_calls=count) if count else totals
