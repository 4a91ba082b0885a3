"""The page: a self-contained HTML document of sections and figures (a chart, its numbers).

One file, no remote resource: the style sheet and script are inline and admitted by hash in
the Content-Security-Policy; charts are inline SVG. The answer comes first, under the title.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version

from costsim.render.html.markup import Node, el
from costsim.render.html.style import CSP, SCRIPT, STYLE
from costsim.render.html.tables import Table

__all__ = ["OPEN_ROWS", "Figure", "document", "section"]

OPEN_ROWS = 12
"""A figure's table is shown open when it has at most this many rows (else collapsed)."""


@dataclass(frozen=True, slots=True)
class Figure:
    """A chart and, beneath it, a table of the same numbers."""

    ident: str
    title: str
    chart: Node
    table: Table
    notes: Sequence[str] = field(default_factory=tuple)

    def node(self) -> Node:
        rows = len(self.table.rows)
        return el(
            "figure",
            el("figcaption", self.title, *(el("p", note) for note in self.notes)),
            self.chart,
            el(
                "details",
                el("summary", f"Table: {self.title.lower()} ({rows} row{'s' * (rows != 1)})"),
                el("div", self.table.node(), class_="scroll"),
                open=rows <= OPEN_ROWS,
            ),
            id=self.ident,
            class_="figure",
        )


def section(ident: str, title: str, *children: Node | None, level: int = 2) -> Node:
    return el("section", el(f"h{level}", title), *children, id=ident)


def _generator() -> str:
    try:
        return f"costsim {version('costsim')}"
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "costsim"


def document(
    title: str, answer: Sequence[str], body: Sequence[Node | None], meta: Sequence[str] = ()
) -> str:
    """The whole page as text."""
    head = el(
        "head",
        el("meta", charset="utf-8"),
        el("meta", http_equiv="Content-Security-Policy", content=CSP),
        el("meta", name="viewport", content="width=device-width, initial-scale=1"),
        el("meta", name="color-scheme", content="light dark"),
        el("meta", name="generator", content=_generator()),
        el("title", title),
        el("style", STYLE),
    )
    header = el(
        "header",
        el("h1", title),
        *(el("p", line, class_="answer") for line in answer),
        *(el("p", line, class_="meta") for line in meta),
    )
    page = el("html", head, el("body", header, el("main", *body), el("script", SCRIPT)), lang="en")
    return "<!DOCTYPE html>\n" + page.html() + "\n"
