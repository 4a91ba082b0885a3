"""Long ranked tables on a terminal: the costliest rows first, the cheapest summed in one row.

Rows are ranked biggest first; rows that weigh the same keep a natural order (``test[2]``
before ``test[10]``), then their names as written, so the order never depends on the order
they were collected in. A terminal table of more than :data:`ROWS_LIMIT` rows (a report of 900
cassettes, a test run of 300 tests) lists its :data:`ROWS_SHOWN` biggest, every row whose cost
is not fully known (an unpriced row is never folded away), and one row that sums the others,
so that the table still accounts for the whole. ``-v`` lists every row; so do JSON and
Markdown.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Protocol, Self, TypeVar

from costsim.model.ordering import natural_key
from costsim.render.text import money_cells

if TYPE_CHECKING:  # the plugin's test process renders without the price lists
    from costsim.pricing.ledger import Totals

__all__ = [
    "ROWS_LIMIT",
    "ROWS_SHOWN",
    "cost_cells",
    "merged",
    "natural_key",
    "others_label",
    "others_note",
    "ranked",
    "split_rows",
]

T = TypeVar("T")
V = TypeVar("V")

ROWS_SHOWN = 20
"""Rows a long table lists without ``-v``."""
ROWS_LIMIT = 25
"""Up to this many rows, a table lists them all (summing two or three rows hides nothing
worth the line it saves)."""


def ranked(named: Iterable[tuple[str, V]], weight: Callable[[V], Any]) -> list[tuple[str, V]]:
    """``(name, value)`` rows, the biggest ``weight`` first; equal weights by name in natural
    order, then as written (a fixed order, whatever order the rows came in)."""
    by_name = sorted(named, key=lambda row: (natural_key(row[0]), row[0]))
    return sorted(by_name, key=lambda row: weight(row[1]), reverse=True)  # stable: names stay


def split_rows(
    rows: Sequence[T],
    *,
    every: bool,
    limit: int | None = None,
    keep: Callable[[T], bool] | None = None,
) -> tuple[list[T], list[T]]:
    """(the rows to list, the rows to sum in one): the first ``limit`` when the user chose a
    number; else every row when ``every`` or when there are at most :data:`ROWS_LIMIT`; else
    the first :data:`ROWS_SHOWN`. Rows ``keep`` is true of are listed wherever they rank."""
    if limit is not None:
        cut = limit
    elif every or len(rows) <= ROWS_LIMIT:
        cut = len(rows)
    else:
        cut = ROWS_SHOWN
    listed, rest = list(rows[:cut]), list(rows[cut:])
    if keep is not None:
        listed += [row for row in rest if keep(row)]
        rest = [row for row in rest if not keep(row)]
    return listed, rest


class _Mergeable(Protocol):
    def merge(self, other: Self) -> None: ...


M = TypeVar("M", bound=_Mergeable)


def merged(values: Iterable[M], empty: M) -> M:
    """``values`` added into ``empty`` (sums like :class:`~costsim.pricing.ledger.Totals`)."""
    for value in values:
        empty.merge(value)
    return empty


def others_label(hidden: int) -> str:
    """The first cell of the row that sums the rows left out: short, so never cut."""
    return f"{hidden:,} other" if hidden == 1 else f"{hidden:,} others"


def others_note(hidden: int, noun: str, how: str, least: str = "cheapest") -> str:
    """The line under such a table: what the summed row holds and how to see every row."""
    if hidden == 1:
        return f"The 1 other is the {least} {noun}: {how}."
    return f"The {hidden:,} others are the {least} {noun}s, summed in one row: {how}."


def cost_cells(rows: Sequence[Totals | None], *, decimals: int | None = None) -> list[str]:
    """Costs of one column with one precision: a partial cost is a lower bound
    (``≥$0.0312*``), a cost with nothing priced ``unpriced*``; a missing row ``-``."""
    amounts: list[Decimal | None] = [
        None if t is None else t.cost_usd if t.cost_usd is not None else (t.priced_cost or None)
        for t in rows
    ]
    cells = money_cells(amounts, missing="", decimals=decimals)
    out = []
    for totals, cell in zip(rows, cells, strict=True):
        if totals is None:
            out.append("-")
        elif totals.cost_usd is not None:
            out.append(cell)
        elif cell:
            out.append(f"≥{cell}*")
        else:
            out.append("unpriced*" if totals.unpriced else "unknown*")
    return out
