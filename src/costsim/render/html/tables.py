"""Tables: the numbers under every chart, sortable and paginated by the page's small script.

A cell carries its text and, for figures, the number it sorts by. Without the script (or in
print) every row shows; with it, tables longer than a page show ``PAGE`` rows at a time.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from costsim.render.html.markup import Node, el

__all__ = ["PAGE", "Cell", "Table", "cell", "num"]

PAGE = 25
"""Rows shown at a time in a long table."""


@dataclass(frozen=True, slots=True)
class Cell:
    text: str
    sort: float | None = None
    """The number a figure sorts by (None: the cell sorts as text)."""
    wrap: bool = False
    """Long prose (a message): wrapped; other cells keep to one line."""
    link: str | None = None
    """An anchor on this page (``#s1``) the text links to."""


def cell(text: str, *, wrap: bool = False) -> Cell:
    return Cell(text, wrap=wrap)


def num(text: str, value: float | None) -> Cell:
    """A figure: right-aligned, sorted by ``value`` (None sorts first)."""
    return Cell(text, float("-inf") if value is None else value)


@dataclass(frozen=True, slots=True)
class Table:
    caption: str
    headers: tuple[str, ...]
    rows: Sequence[tuple[Cell, ...]]
    foot: Sequence[tuple[Cell, ...]] = field(default_factory=tuple)
    """Rows that stay at the bottom (totals); never sorted or paged."""

    def node(self) -> Node:
        figures = [
            bool(self.rows) and self.rows[0][i].sort is not None for i in range(len(self.headers))
        ]
        head = el(
            "tr",
            *(
                el(
                    "th",
                    el("button", name, type="button", class_="sort"),
                    scope="col",
                    class_="n" if figure else None,
                )
                for name, figure in zip(self.headers, figures, strict=True)
            ),
        )
        body = el("tbody", *(_row(row) for row in self.rows))
        parts = [el("caption", self.caption), el("thead", head), body]
        if self.foot:
            parts.append(el("tfoot", *(_row(row) for row in self.foot)))
        paged = len(self.rows) > PAGE
        return el(
            "table",
            *parts,
            class_="data",
            data_page=PAGE if paged else None,
        )


def _row(row: tuple[Cell, ...]) -> Node:
    return el(
        "tr",
        *(el("td", _content(item), class_=_class(item), data_v=_sort(item)) for item in row),
    )


def _content(item: Cell) -> Node | str:
    return el("a", item.text, href=item.link) if item.link else item.text


def _sort(item: Cell) -> str | None:
    if item.sort is None:
        return None
    return "-1e308" if item.sort == float("-inf") else repr(item.sort)


def _class(item: Cell) -> str | None:
    if item.sort is not None:
        return "n"
    return "w" if item.wrap else None
