"""Text helpers every terminal renderer shares: fitting tables to a width, paths, rates."""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

from tabulate import tabulate

from costsim.pricing.money import money, partial_money

__all__ = [
    "display_path",
    "fit_table",
    "money",
    "partial_money",
    "percent",
    "shorten_left",
]


def display_path(path: Path) -> str:
    """A path relative to the working directory when it lies below it."""
    return _display(path, os.getcwd())


@lru_cache(maxsize=65536)
def _display(path: Path, cwd: str) -> str:
    """Once per file and working folder: a report names each cassette many times."""
    try:
        return str(path.resolve().relative_to(Path(cwd).resolve()))
    except ValueError:
        return str(path)


def shorten_left(text: str, width: int) -> str:
    """``text`` cut from the left to ``width`` characters (``...`` marks the cut)."""
    if len(text) <= width:
        return text
    return "..." + text[len(text) - max(width - 3, 1) :]


def fit_table(
    headers: list[str],
    rows: list[list[str]],
    *,
    width: int,
    tablefmt: str = "simple",
    min_first: int = 12,
) -> list[str]:
    """A table whose lines fit ``width``, shortening the first column from the left.

    The first column is left-aligned, the figures right-aligned.
    """
    align = ("left", *("right",) * (len(headers) - 1))
    lines = tabulate(
        rows, headers=headers, tablefmt=tablefmt, disable_numparse=True, colalign=align
    ).splitlines()
    widest = max((len(line) for line in lines), default=0)
    if widest <= width or not rows:
        return lines
    first = max(len(row[0]) for row in [headers, *rows])
    room = max(first - (widest - width), min_first)
    shortened = [[shorten_left(row[0], room), *row[1:]] for row in rows]
    return tabulate(
        shortened,
        headers=[shorten_left(headers[0], room), *headers[1:]],
        tablefmt=tablefmt,
        disable_numparse=True,
        colalign=align,
    ).splitlines()


def percent(rate: float | None) -> str:
    return "-" if rate is None else f"{rate:.1%}"
