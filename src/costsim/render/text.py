"""Text helpers every terminal renderer shares: tables that fit a width, paths, money, rates.

A table is a list of :class:`Column` (header, alignment, how it may be cut) and rows of cells.
:func:`table` lays it out in the plain style (two spaces between columns, a rule under the
headers) and cuts the columns that may be cut until the lines fit the width: paths from the
left (the file name is what tells cassettes apart), text from the right. Numbers are never cut.
"""

from __future__ import annotations

import dataclasses
import math
import textwrap
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Literal

from tabulate import tabulate

from costsim.pricing.money import half_up, money, money_places, partial_money
from costsim.render.cuts import ELLIPSIS, extra_bytes, shorten_left, shorten_right
from costsim.render.paths import display_path

__all__ = [
    "ELLIPSIS",
    "Column",
    "decimals_for",
    "display_path",
    "extra_bytes",
    "fit_table",
    "markdown_table",
    "money",
    "money_cells",
    "money_places",
    "more_line",
    "partial_money",
    "percent",
    "plural",
    "shorten_left",
    "shorten_right",
    "signed_percent",
    "table",
    "table_blocks",
    "wrap",
]

GAP = "  "


@dataclass(frozen=True, slots=True)
class Column:
    """One column of a table: its header, alignment, and how it may be cut to fit."""

    header: str
    align: Literal["left", "right"] = "right"
    cut: Literal["left", "right"] | None = None
    """``left`` for paths (keep the file name), ``right`` for text; None: never cut."""
    min_width: int = 12
    give: int = 1
    """Columns that give more are cut first (to ``min_width``) when a table is too wide."""
    drop: int = 0
    """When cutting is not enough, columns are left out, the highest ``drop`` first (0:
    never); the table then says which."""
    ellipses: int = 1
    """How many ``…`` a cut cell may hold (two: a path cut in the middle as well, to tell it
    from another that reads alike cut from the left); fitting keeps room for their bytes."""


def _cut(text: str, width: int, side: Literal["left", "right"] | None) -> str:
    if side == "left":
        return shorten_left(text, width)
    if side == "right":
        return shorten_right(text, width)
    return text


def _fit(
    columns: Sequence[Column], rows: Sequence[Sequence[str]], width: int
) -> tuple[list[int], int]:
    """(the columns' widths, how far the table still overflows ``width`` once cut)."""
    widths = [
        max([len(col.header), *(len(row[i]) for row in rows)]) for i, col in enumerate(columns)
    ]

    def extra(cut: bool) -> int:
        """Bytes beyond the characters, the most of any cell of a column; ``cut``: with the
        two of each ellipsis on top (a cut cell may keep its own, ``ü``, beside them)."""
        return sum(
            max(extra_bytes(cell) for cell in [col.header, *(row[i] for row in rows)])
            + 2 * col.ellipses * (cut and col.cut is not None)
            for i, col in enumerate(columns)
        )

    overflow = sum(widths) + len(GAP) * (len(columns) - 1) - width
    overflow += extra(cut=overflow + extra(cut=False) > 0)  # an ellipsis only if something is cut
    while overflow > 0:
        candidates = [
            i
            for i, col in enumerate(columns)
            if col.cut is not None and widths[i] > max(col.min_width, 1)
        ]
        if not candidates:
            break
        most = max(columns[i].give for i in candidates)
        candidates = [i for i in candidates if columns[i].give == most]
        widest = max(candidates, key=lambda i: (widths[i], -i))
        floor = max(columns[widest].min_width, 1)
        others = [widths[i] for i in candidates if i != widest]
        target = max(floor, max(others, default=floor), widths[widest] - overflow)
        if target >= widths[widest]:
            target = widths[widest] - 1
        overflow -= widths[widest] - target
        widths[widest] = target
    return widths, overflow


def _leave_out(
    columns: Sequence[Column], rows: Sequence[Sequence[str]], width: int
) -> tuple[list[Column], list[list[str]], list[int], list[str]]:
    """The columns (and cells, and widths) that fit ``width``, leaving out droppable ones,
    highest ``drop`` first, while cutting is not enough; and the headers left out."""
    kept, cells, left_out = list(columns), [list(row) for row in rows], []
    widths, overflow = _fit(kept, cells, width)
    while overflow > 0:
        droppable = [i for i, column in enumerate(kept) if column.drop]
        if not droppable:
            break
        index = max(droppable, key=lambda i: (kept[i].drop, i))
        left_out.append(kept.pop(index).header)
        cells = [row[:index] + row[index + 1 :] for row in cells]
        widths, overflow = _fit(kept, cells, width)
    return kept, cells, widths, left_out


def _shown(
    columns: Sequence[Column], rows: Sequence[Sequence[str]], widths: Sequence[int]
) -> list[dict[str, str]]:
    """Per column, the cells that must be cut in the middle to stay apart (see
    :func:`_distinct_cuts`); none for columns not cut from the left."""
    return [
        _distinct_cuts([row[i] for row in rows], size) if col.cut == "left" else {}
        for i, (col, size) in enumerate(zip(columns, widths, strict=True))
    ]


def _distinct_cuts(values: Sequence[str], size: int) -> dict[str, str]:
    """Cuts of paths that would read alike cut from the left (``…mixed_files[a].yaml`` for
    two files): each keeps the end and, between two ellipses, the part where it differs from
    the others (``…AgentMultim…[a].yaml``); every other value is cut as usual (absent here)."""
    groups: dict[str, set[str]] = {}
    for value in values:
        groups.setdefault(shorten_left(value, size), set()).add(value)
    cuts: dict[str, str] = {}
    for same in (group for group in groups.values() if len(group) > 1):
        tries = [  # the middle kept where it parts from the first other, or the closest
            {
                value: _middle_cut(value, size, pick(_common(value, o) for o in same - {value}))
                for value in same
            }
            for pick in (min, max)
        ]
        best: dict[str, str] = max(tries, key=_distinct_count)  # the first on a tie
        cuts.update(best)
    return cuts


def _distinct_count(cuts: dict[str, str]) -> int:
    return len(set(cuts.values()))


def _common(a: str, b: str) -> int:
    """The length of the longest common prefix of ``a`` and ``b``."""
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def _middle_cut(text: str, size: int, differs: int) -> str:
    """``text`` in ``size`` characters keeping its end and the stretch from ``differs`` on
    (the column keeps room for the bytes of two ellipses)."""
    room = size - 2  # the two ellipses
    tail = room // 2
    middle = room - tail
    if room < 6 or differs + middle >= len(text) - tail:
        return shorten_left(text, size)
    start = max(differs - 2, 0)
    head = ELLIPSIS if start else ""
    return f"{head}{text[start : start + middle + (0 if start else 1)]}{ELLIPSIS}{text[-tail:]}"


def table(columns: Sequence[Column], rows: Sequence[Sequence[str]], *, width: int) -> list[str]:
    """The lines of a plain table that fits ``width`` where its cuttable and droppable
    columns allow (a line under it names the columns left out, and how to see them: not the
    width, which for an indented table is not the terminal's)."""
    given, cells = columns, rows
    columns, rows, widths, left_out = _leave_out(given, cells, width)
    shown = _shown(columns, rows, widths)
    if any(shown):  # paths that read alike cut: room for a second ellipsis, and cut again
        alike = {col.header for col, cuts in zip(columns, shown, strict=True) if cuts}
        given = [
            dataclasses.replace(col, ellipses=2) if col.header in alike else col for col in given
        ]
        columns, rows, widths, left_out = _leave_out(given, cells, width)
        shown = _shown(columns, rows, widths)

    def line(cells: Sequence[str], body: bool = True) -> str:
        parts = []
        for col, size, cell, cuts in zip(columns, widths, cells, shown, strict=True):
            text = cuts.get(cell) if body else None
            text = text if text is not None else _cut(cell, size, col.cut or "right")
            parts.append(text.ljust(size) if col.align == "left" else text.rjust(size))
        return GAP.join(parts).rstrip()

    head = [line([col.header for col in columns], False), GAP.join("-" * size for size in widths)]
    them = "them" if len(left_out) > 1 else "it"
    note = wrap(f"(left out to fit: {', '.join(left_out)}; --wide shows {them})", width)
    return head + [line(row) for row in rows] + (note if left_out else [])


def table_blocks(
    columns: Sequence[Column], rows: Sequence[Sequence[str]], *, width: int
) -> list[str]:
    """A table with more columns than fit ``width``, in blocks of columns one under the other,
    each repeating the first column (as pandas prints a wide frame)."""
    sizes = [max([len(c.header), *(len(row[i]) for row in rows)]) for i, c in enumerate(columns)]
    # bytes beyond the characters (``Δ``, ``…``) count too, as in :func:`table`
    extra = [
        max(extra_bytes(cell) for cell in [c.header, *(row[i] for row in rows)])
        for i, c in enumerate(columns)
    ]
    first = min(sizes[0], max(columns[0].min_width, width // 3))
    # a path cut from the left may need a second ellipsis to stay apart from a twin
    ellipses = 2 if columns[0].cut == "left" else columns[0].ellipses
    cut = 2 * ellipses if first < sizes[0] and columns[0].cut else 0
    key_room = first + extra[0] + cut
    blocks: list[list[int]] = [[]]
    used = key_room
    for index in range(1, len(columns)):
        if blocks[-1] and used + len(GAP) + sizes[index] + extra[index] > width:
            blocks.append([])
            used = key_room
        blocks[-1].append(index)
        used += len(GAP) + sizes[index] + extra[index]
    lines: list[str] = []
    for block in blocks:
        if lines:
            lines.append("")
        key = dataclasses.replace(columns[0], min_width=first)
        picked = [key, *(columns[i] for i in block)]
        lines += table(picked, [[row[0], *(row[i] for i in block)] for row in rows], width=width)
    return lines


def markdown_table(columns: Sequence[Column], rows: Sequence[Sequence[str]]) -> list[str]:
    """A GitHub-flavoured Markdown table: nothing is cut, ``|`` in cells is escaped."""

    def line(cells: Iterable[str]) -> str:
        return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"

    rule = "|" + "|".join("---:" if c.align == "right" else ":---" for c in columns) + "|"
    return [line(col.header for col in columns), rule, *(line(row) for row in rows)]


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
    tables use :func:`table`): when it is too wide, headers of two words are stacked (so a
    column is as wide as its figures, not its header), then the first column is cut, by
    ``cut`` (the column's cells and the width for them) or from the left."""
    align = ("left", *("right",) * (len(headers) - 1))

    def render(head: list[str], body: list[list[str]]) -> list[str]:
        made = tabulate(
            body, headers=head, tablefmt=tablefmt, disable_numparse=True, colalign=align
        )
        return made.splitlines()

    lines = render(headers, rows)
    widest = max((len(line) for line in lines), default=0)
    if widest <= width or not rows:
        return lines
    if tablefmt == "simple" and any(" " in header for header in headers[1:]):
        headers = _stacked(headers)
        lines = render(headers, rows)
        widest = max(len(line) for line in lines)
        if widest <= width:
            return lines
    first = max(len(row[0]) for row in [headers, *rows])
    room = max(first - (widest - width) - extra_bytes(ELLIPSIS), min_first)  # as wc -c counts
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


def wrap(text: str, width: int, *, indent: str = "", subsequent: str | None = None) -> list[str]:
    """``text`` as lines of at most ``width`` characters, and bytes (long words are broken)."""
    return textwrap.wrap(
        text,
        width=max(width - extra_bytes(text) - extra_bytes(indent), 20),
        initial_indent=indent,
        subsequent_indent=indent + "  " if subsequent is None else subsequent,
        break_on_hyphens=False,
    ) or [indent.rstrip()]


def more_line(hidden: int, indent: str = "  ") -> list[str]:
    """``and N more (use -v)`` when something was left out, else nothing."""
    return [f"{indent}and {hidden} more (use -v)"] if hidden > 0 else []


def plural(count: int, word: str, words: str | None = None) -> str:
    return f"{count:,} {word if count == 1 else (words or word + 's')}"


def percent(rate: float | None) -> str:
    return "-" if rate is None else f"{rate:.1%}"


def signed_percent(value: float | None) -> str:
    """A change in percent: ``+1.9%``, ``-50.6%``; ``-`` when unknown."""
    return "-" if value is None else f"{value:+.1f}%"


def decimals_for(amounts: Iterable[Decimal | None]) -> int:
    """Enough decimals for three significant digits of the smallest amount (2 to 6)."""
    smallest = min((abs(a) for a in amounts if a is not None and a), default=None)
    if smallest is None:
        return 2
    return max(2, min(6, 2 - math.floor(math.log10(smallest))))


def money_cells(
    amounts: Sequence[Decimal | None],
    *,
    signed: bool = False,
    missing: str = "unknown",
    decimals: int | None = None,
) -> list[str]:
    """Amounts of one column, all with the same number of decimals (``$0.0832``, ``$1.2190``;
    ``decimals`` when given, else :func:`decimals_for` them); ``signed`` writes changes
    (``+$0.0023``, ``-$0.9925``)."""
    if decimals is None:
        decimals = decimals_for(amounts)
    cells = []
    for amount in amounts:
        if amount is None:
            cells.append(missing)
            continue
        text = f"${half_up(abs(amount), decimals):,.{decimals}f}"
        if signed:
            text = ("-" if amount < 0 else "+") + text
        elif amount < 0:
            text = "-" + text
        cells.append(text)
    return cells
