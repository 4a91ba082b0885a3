"""Small multiples of stacked areas: cumulative tokens per turn, one panel per variant.

Every panel shares the same axes, so a variant's area reads directly against the others; the
recorded baseline's running total is drawn as a dashed line on each variant's panel.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from costsim.render.html.markup import Node, el
from costsim.render.html.svg import (
    WIDTH,
    Scale,
    chart,
    legend,
    line,
    nice_ticks,
    polygon,
    polyline,
    text,
)

__all__ = ["Panel", "area_panels"]

PANEL_HEIGHT = 130.0
HEAD = 22.0
"""Room above a panel for its title."""
FOOT = 20.0
"""Room below a panel for the turn ticks."""
LEFT = 44.0
"""Room left of a panel for the token ticks."""
TOP = 30.0


@dataclass(frozen=True, slots=True)
class Panel:
    """One variant: per class (css class, label), the running total after each turn."""

    label: str
    layers: tuple[tuple[str, tuple[float, ...]], ...]
    reference: tuple[float, ...] = ()
    """The baseline's running total, drawn as a dashed line (empty: none)."""

    @property
    def turns(self) -> int:
        return max((len(values) for _, values in self.layers), default=0)

    def top(self) -> float:
        totals = [sum(values[i] for _, values in self.layers) for i in range(self.turns)]
        return max([*totals, *self.reference, 0.0])


def _columns(count: int) -> int:
    return 1 if count == 1 else 2 if count in (2, 4) else 3


def area_panels(
    title: str,
    panels: Sequence[Panel],
    classes: Sequence[tuple[str, str]],
    tick_format: Callable[[float], str],
) -> Node:
    """One stacked-area panel per entry, on a grid with shared scales."""
    columns = _columns(len(panels))
    rows = -(-len(panels) // columns)
    cell_width = WIDTH / columns
    turns = max((panel.turns for panel in panels), default=1) or 1
    ticks = nice_ticks(0.0, max((panel.top() for panel in panels), default=0.0) or 1.0, 3)
    height = TOP + rows * (HEAD + PANEL_HEIGHT + FOOT)
    marks: list[Node] = [legend([*classes, ("ref", "recorded running total")], 8, 14)]
    for position, panel in enumerate(panels):
        left = (position % columns) * cell_width + LEFT
        top = TOP + (position // columns) * (HEAD + PANEL_HEIGHT + FOOT) + HEAD
        x = Scale(0.0, float(turns), left, left + cell_width - LEFT - 12)
        y = Scale(0.0, ticks[-1], top + PANEL_HEIGHT, top)
        marks.append(_panel(panel, x, y, ticks, tick_format))
    return chart(height, title, *marks)


def _panel(
    panel: Panel, x: Scale, y: Scale, ticks: Sequence[float], tick_format: Callable[[float], str]
) -> Node:
    marks: list[Node] = [text(x.start, y.end - 8, panel.label, cls="panel-title")]
    for tick in ticks:
        marks.append(line(x.start, y(tick), x.end, y(tick), "grid"))
        marks.append(text(x.start - 4, y(tick) + 4, tick_format(tick), anchor="end", cls="tick"))
    step = max(1, round(x.high / 5))
    for turn in range(0, int(x.high) + 1, step):
        marks.append(text(x(turn), y.start + 14, str(turn), anchor="middle", cls="tick"))
    below = [0.0] * (panel.turns + 1)
    for cls, values in panel.layers:
        above = [below[0], *(below[i + 1] + values[i] for i in range(len(values)))]
        above += below[len(above) :]
        if any(a > b for a, b in zip(above, below, strict=True)):
            upper = [(x(i), y(v)) for i, v in enumerate(above)]
            lower = [(x(i), y(v)) for i, v in reversed(list(enumerate(below)))]
            tip = f"{panel.label}: {_label(cls)} {tick_format(above[-1] - below[-1])}"
            marks.append(polygon(upper + lower, cls, tip))
        below = above
    if panel.reference:
        points = [(x(0), y(0))] + [(x(i + 1), y(v)) for i, v in enumerate(panel.reference)]
        marks.append(polyline(points, "ref"))
    marks.append(line(x.start, y.start, x.end, y.start, "baseline-axis"))
    return el("g", *marks, class_="panel")


def _label(cls: str) -> str:
    return cls.removeprefix("c-").replace("_", " ")
