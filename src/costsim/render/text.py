"""Text helpers every terminal renderer shares: tables that fit a width, paths, money, rates.

A table is a list of :class:`Column` (header, alignment, how it may be cut) and rows of cells.
:func:`table` lays it out in the plain style (two spaces between columns, a rule under the
headers) and cuts the columns that may be cut until the lines fit the width: paths from the
left (the file name is what tells cassettes apart), text from the right. Numbers are never cut.

Cells are measured, cut and padded in display columns (a wide letter such as ``日`` takes two,
see :mod:`costsim.render.cuts`), and the lines fit in bytes too, as ``awk`` and ``wc -c``
count them; every cell and wrapped line is :func:`~costsim.render.visible.visible` first (a
control character in a recorded name is an escape, never a row split or a terminal's title).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Literal

from costsim.pricing.money import half_up, money, money_places, partial_money
from costsim.render.cuts import (
    ELLIPSIS,
    byte_excess,
    display_width,
    distinct_cuts,
    extra_bytes,
    pad,
    shorten_left,
    shorten_right,
    take,
    take_end,
)
from costsim.render.paths import display_path
from costsim.render.tabulated import fit_table
from costsim.render.visible import markdown_cell, visible
from costsim.render.wrapping import wrap

__all__ = [
    "ELLIPSIS",
    "Column",
    "decimals_for",
    "display_path",
    "display_width",
    "extra_bytes",
    "finer",
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
    "tests_text",
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


def _kept(cell: str, size: int, side: Literal["left", "right"] | None) -> str:
    """What a cell keeps of itself cut to ``size`` columns, its ellipsis aside."""
    if display_width(cell) <= size:
        return cell
    return take_end(cell, size - 1) if side == "left" else take(cell, size - 1)


def _fit(
    columns: Sequence[Column], rows: Sequence[Sequence[str]], width: int
) -> tuple[list[int], int]:
    """(the columns' widths, how far the table still overflows ``width`` once cut)."""
    cells = [[col.header, *(row[i] for row in rows)] for i, col in enumerate(columns)]
    widths = [max(map(display_width, column)) for column in cells]
    full = list(widths)
    whole = [max(map(byte_excess, column)) for column in cells]
    known: dict[tuple[int, int], int] = {}

    def excess(i: int, size: int) -> int:
        """Bytes beyond the columns, the most of any cell of column ``i`` cut to ``size``
        (what is cut away takes its bytes with it: ``ü``, a wide ``日``)."""
        if not whole[i] or size >= full[i]:
            return whole[i]
        if (i, size) not in known:
            side = columns[i].cut
            known[i, size] = max(byte_excess(_kept(cell, size, side)) for cell in cells[i])
        return known[i, size]

    gaps = len(GAP) * (len(columns) - 1)

    def overflow(ellipses: int) -> int:
        return sum(widths) + gaps - width + sum(map(excess, range(len(widths)), widths)) + ellipses

    # with room for the bytes of each ellipsis (two beyond its column) if something is cut
    ellipses = sum(2 * col.ellipses for col in columns if col.cut is not None)
    if overflow(0) <= 0:
        ellipses = 0
    over = overflow(ellipses)
    while over > 0:
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
        target = max(floor, max(others, default=floor), widths[widest] - over)
        was, widths[widest] = widths[widest], min(target, widths[widest] - 1)
        over = overflow(ellipses)
        while over < 0 and widths[widest] + 1 < was:  # the cut took bytes too: widen again
            widths[widest] += 1
            wider = overflow(ellipses)
            if wider > 0:
                widths[widest] -= 1
                break
            over = wider
    return widths, over


def _leave_out(
    columns: Sequence[Column], rows: Sequence[Sequence[str]], width: int
) -> tuple[list[Column], list[list[str]], list[int], list[str]]:
    """The columns (and cells, and widths) that fit ``width``, leaving out droppable ones,
    highest ``drop`` first (but a column with nothing to say, every cell ``-`` or blank, before
    any: a trial's Δ % of a lower-bound baseline stayed, all dashes, while calls and prompt
    went), while cutting is not enough; and the headers left out."""
    kept, cells, left_out = list(columns), [list(row) for row in rows], []
    widths, overflow = _fit(kept, cells, width)
    while overflow > 0:
        droppable = [i for i, column in enumerate(kept) if column.drop]
        if not droppable:
            break
        index = max(droppable, key=lambda i: (_says_nothing(cells, i), kept[i].drop, i))
        left_out.append(kept.pop(index).header)
        cells = [row[:index] + row[index + 1 :] for row in cells]
        widths, overflow = _fit(kept, cells, width)
    return kept, cells, widths, left_out


def _says_nothing(cells: Sequence[Sequence[str]], index: int) -> bool:
    return bool(cells) and all(row[index].strip() in ("", "-") for row in cells)


def _shown(
    columns: Sequence[Column], rows: Sequence[Sequence[str]], widths: Sequence[int]
) -> list[dict[str, str]]:
    """Per column, the cells that must be cut in the middle to stay apart (see
    :func:`~costsim.render.cuts.distinct_cuts`); none for columns not cut from the left."""
    return [
        distinct_cuts([row[i] for row in rows], size) if col.cut == "left" else {}
        for i, (col, size) in enumerate(zip(columns, widths, strict=True))
    ]


def table(columns: Sequence[Column], rows: Sequence[Sequence[str]], *, width: int) -> list[str]:
    """The lines of a plain table that fits ``width`` where its cuttable and droppable
    columns allow (a line under it names the columns left out, and how to see them: not the
    width, which for an indented table is not the terminal's)."""
    given, cells = _visible(columns, rows)
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
            parts.append(pad(text, size, col.align))
        return GAP.join(parts).rstrip()

    head = [line([col.header for col in columns], False), GAP.join("-" * size for size in widths)]
    them = "them" if len(left_out) > 1 else "it"
    note = wrap(f"(left out to fit: {', '.join(left_out)}; --wide shows {them})", width)
    return head + [line(row) for row in rows] + (note if left_out else [])


def _visible(
    columns: Sequence[Column], rows: Sequence[Sequence[str]]
) -> tuple[list[Column], list[list[str]]]:
    """The headers and cells with their control characters as escapes (see
    :func:`~costsim.render.visible.visible`): measured as they will show."""
    headers = [
        col if col.header.isprintable() else dataclasses.replace(col, header=visible(col.header))
        for col in columns
    ]
    return headers, [[visible(cell) for cell in row] for row in rows]


def table_blocks(
    columns: Sequence[Column], rows: Sequence[Sequence[str]], *, width: int
) -> list[str]:
    """A table with more columns than fit ``width``, in blocks of columns one under the other,
    each repeating the first column (as pandas prints a wide frame)."""
    columns, rows = _visible(columns, rows)
    sizes = [
        max([display_width(c.header), *(display_width(row[i]) for row in rows)])
        for i, c in enumerate(columns)
    ]
    # bytes beyond the columns (``Δ``, ``…``, ``日``) count too, as in :func:`table`; the
    # first column's as cut to its width
    extra = [max(byte_excess(cell) for cell in [c.header, *(r[i] for r in rows)]) for i, c in
             enumerate(columns)]  # fmt: skip
    # a path cut from the left may need a second ellipsis to stay apart from a twin
    ellipses = 2 if columns[0].cut == "left" else columns[0].ellipses
    cut = 2 * ellipses if columns[0].cut else 0
    # the first column leaves room for the widest other one beside it, where it can be cut
    widest = max((len(GAP) + sizes[i] + extra[i] for i in range(1, len(columns))), default=0)
    first = min(sizes[0], max(columns[0].min_width, width // 3))
    if columns[0].cut and first + cut + widest > width:
        first = max(min(first, width - cut - widest), 4)
    if first >= sizes[0]:
        cut = 0
    keys = [columns[0].header, *(row[0] for row in rows)]
    extra[0] = max(byte_excess(_kept(cell, first, columns[0].cut)) for cell in keys)
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
    """A GitHub-flavoured Markdown table: nothing is cut, each cell is
    :func:`~costsim.render.visible.markdown_cell` (a ``|`` or a line feed never splits a
    row; ``<`` and ``>`` become entities where the document is written, in
    :mod:`costsim.render.formats`)."""

    def line(cells: Iterable[str]) -> str:
        return "| " + " | ".join(map(markdown_cell, cells)) + " |"

    rule = "|" + "|".join("---:" if c.align == "right" else ":---" for c in columns) + "|"
    return [line(col.header for col in columns), rule, *(line(row) for row in rows)]


def more_line(hidden: int, indent: str = "  ") -> list[str]:
    """``and N more (use -v)`` when something was left out, else nothing."""
    return [f"{indent}and {hidden} more (use -v)"] if hidden > 0 else []


def plural(count: int, word: str, words: str | None = None) -> str:
    return f"{count:,} {word if count == 1 else (words or word + 's')}"


def tests_text(names: Sequence[str]) -> str:
    """``47 tests and 1 fixture scope``: fixtures' calls are listed apart from the tests'
    (``<module fixtures: …>``)."""
    scopes = sum(1 for name in names if name.startswith("<"))
    tests = len(names) - scopes
    if not scopes:
        return plural(tests, "test")
    if not tests:
        return plural(scopes, "fixture scope")
    return f"{plural(tests, 'test')} and {plural(scopes, 'fixture scope')}"


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


def finer(
    decimals: int, amounts: Iterable[Decimal | None], *, apart: Iterable[Decimal] = ()
) -> int:
    """At least ``decimals``; more, up to 6, while an amount that is not zero would read as
    zero, or ``apart`` amounts that differ would read alike: a line of details under a table
    of dollars (``saves $0.000``, ``-$0.100 to -$0.100`` a trial read) shows its figures."""
    values = [amount for amount in amounts if amount]
    distinct = {amount for amount in apart}
    places = decimals
    while places < 6 and (
        any(round(amount, places) == 0 for amount in values)
        or len({round(amount, places) for amount in distinct}) < len(distinct)
    ):
        places += 1
    return places


def money_cells(
    amounts: Sequence[Decimal | None],
    *,
    signed: bool = False,
    missing: str = "unknown",
    decimals: int | None = None,
) -> list[str]:
    """Amounts of one column, all with the same number of decimals (``$0.0832``, ``$1.2190``;
    ``decimals`` when given, else :func:`decimals_for` them); ``signed`` writes changes
    (``+$0.0023``, ``-$0.9925``). An amount that is not zero but rounds to it reads
    ``<$0.000001``, never as nothing."""
    if decimals is None:
        decimals = decimals_for(amounts)
    cells = []
    for amount in amounts:
        if amount is None:
            cells.append(missing)
            continue
        shown = half_up(abs(amount), decimals)
        text = f"${shown:,.{decimals}f}"
        if amount and not shown:  # 8 tokens of an embedding model: less than shows, not zero
            text = f"<${Decimal(1).scaleb(-decimals):.{decimals}f}"
        if signed:
            text = ("-" if amount < 0 else "+") + text
        elif amount < 0:
            text = "-" + text
        cells.append(text)
    return cells
