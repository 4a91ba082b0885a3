"""Long ranked tables on a terminal: the costliest rows, and the others summed in one row.

A terminal table of more than :data:`ROWS_LIMIT` rows (a report of 900 cassettes, a test run
of 300 tests) shows its :data:`ROWS_SHOWN` costliest and one row that sums the others, so that
the rows shown and that row add up to the whole. ``-v`` lists every row; JSON, Markdown and
HTML always carry every one. Rows that cost the same keep a natural order (``test[2]`` before
``test[10]``), whatever order they were collected in.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TypeVar

from costsim.render.text import plural

__all__ = [
    "EVERY_FORMAT",
    "ROWS_LIMIT",
    "ROWS_SHOWN",
    "natural_key",
    "others_label",
    "others_note",
    "split_rows",
]

T = TypeVar("T")

ROWS_SHOWN = 20
"""Rows a long table shows without ``-v``."""
ROWS_LIMIT = 25
"""Up to this many rows, a table shows them all (summing two or three rows hides nothing
worth the line it saves)."""

_DIGITS = re.compile(r"(\d+)")


def natural_key(text: str) -> tuple[str | int, ...]:
    """``text`` with its runs of digits as numbers: ``test[2]`` sorts before ``test[10]``."""
    parts = _DIGITS.split(text)  # text, digits, text, digits, ..., text
    return tuple(int(part) if index % 2 else part for index, part in enumerate(parts))


def split_rows(
    ranked: Sequence[T], *, every: bool, limit: int | None = None
) -> tuple[list[T], list[T]]:
    """(the rows to show, the rows to sum in one): every row when ``every`` or when there
    are at most :data:`ROWS_LIMIT`; else the first :data:`ROWS_SHOWN`. ``limit`` (a number
    the user chose) shows exactly that many."""
    if limit is not None:
        return list(ranked[:limit]), list(ranked[limit:])
    if every or len(ranked) <= ROWS_LIMIT:
        return list(ranked), []
    return list(ranked[:ROWS_SHOWN]), list(ranked[ROWS_SHOWN:])


def others_label(hidden: int, noun: str) -> str:
    """The first cell of the row that sums the rows left out: ``882 other cassettes``."""
    return plural(hidden, f"other {noun}")


EVERY_FORMAT = "-v lists every one, as do JSON, Markdown and HTML"
"""How to see every row, in the commands' words."""


def others_note(hidden: int, noun: str, how: str = EVERY_FORMAT) -> str:
    """The line under such a table: what the summed row holds and how to see every row."""
    none, are = ("no", "is") if hidden == 1 else ("none", "are")
    return (
        f"{others_label(hidden, noun)}, {none} costlier than those listed, {are} shown as one "
        f"row: {how}."
    )
