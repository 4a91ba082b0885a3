"""The pytest plugin's summary table: tabulate's layout, fitted to a width.

tabulate measures a cell by its characters (wide letters by their columns only with the
optional ``wcwidth`` package): a cell whose columns are not its characters (``test_日本``) is
laid out as a stand-in of as many columns, and put back in the lines made.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from tabulate import tabulate

from costsim.render.cuts import ELLIPSIS, display_width, extra_bytes, shorten_left
from costsim.render.visible import visible

__all__ = ["fit_table"]

_STAND_IN = "\x00"
"""What stands in for each column of a cell tabulate would measure wrong (no cell holds it:
cells are :func:`~costsim.render.visible.visible`)."""
_STOOD_IN = re.compile(f"{_STAND_IN}+")


def _tabulate(headers: list[str], rows: list[list[str]], tablefmt: str) -> list[str]:
    align = ("left", *("right",) * (len(headers) - 1))
    odd = [[cell for cell in row if display_width(cell) != len(cell)] for row in rows]
    body = [
        [_STAND_IN * display_width(cell) if cell in stood else cell for cell in row]
        for row, stood in zip(rows, odd, strict=True)
    ]
    made = tabulate(
        body, headers=headers, tablefmt=tablefmt, disable_numparse=True, colalign=align
    ).splitlines()
    head = len(made) - len(rows)
    for index, stood in enumerate(odd, start=head):
        if stood:
            made[index] = _put_back(made[index], [cell for cell in stood if display_width(cell)])
    return made


def _put_back(line: str, cells: list[str]) -> str:
    """``line`` with its stand-ins, in order, replaced by ``cells``."""
    given = iter(cells)
    return _STOOD_IN.sub(lambda _: next(given), line)


def fit_table(
    headers: list[str],
    rows: list[list[str]],
    *,
    width: int,
    tablefmt: str = "simple",
    min_first: int = 12,
    cut: Callable[[list[str], int], list[str]] | None = None,
) -> list[str]:
    """A tabulate table whose lines fit ``width`` (the pytest plugin's summary; costsim's own
    tables use :func:`~costsim.render.text.table`): when it is too wide, headers of two words
    are stacked (so a column is as wide as its figures, not its header), then the first
    column is cut, by ``cut`` (the column's cells and the width for them) or from the left.
    Control characters in cells are escapes; wide letters take their two columns."""
    rows = [[visible(cell) for cell in row] for row in rows]

    def render(head: list[str], body: list[list[str]]) -> list[str]:
        return _tabulate(head, body, tablefmt)

    def widest(lines: list[str]) -> int:
        return max((display_width(line) for line in lines), default=0)

    lines = render(headers, rows)
    if widest(lines) <= width or not rows:
        return lines
    if tablefmt == "simple" and any(" " in header for header in headers[1:]):
        headers = _stacked(headers)
        lines = render(headers, rows)
        if widest(lines) <= width:
            return lines
    first = max(display_width(row[0]) for row in [headers, *rows])
    room = max(first - (widest(lines) - width) - extra_bytes(ELLIPSIS), min_first)  # as wc -c
    column = [row[0] for row in rows]
    shortened = cut(column, room) if cut is not None else [shorten_left(c, room) for c in column]
    body = [[short, *row[1:]] for short, row in zip(shortened, rows, strict=True)]
    return render([shorten_left(headers[0], room), *headers[1:]], body)


def _stacked(headers: list[str]) -> list[str]:
    """Headers on two lines, the last word below (``hit`` over ``rate``), one-word headers on
    the lower line."""
    stacked = []
    for header in headers:
        top, _, bottom = header.rpartition(" ")
        stacked.append(f"{top}\n{bottom}")
    return stacked
