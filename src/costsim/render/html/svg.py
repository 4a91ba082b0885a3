"""SVG building blocks for the charts: a linear scale, round ticks, shapes, axes and legends.

Shapes take their colour from a CSS class (``c-uncached``, ``c-output``, ...) so the page's
light and dark schemes and print style apply; nothing here sets a style attribute (the
page's Content-Security-Policy forbids them).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from costsim.render.html.markup import Node, el, number

__all__ = [
    "WIDTH",
    "Scale",
    "chart",
    "legend",
    "line",
    "nice_ticks",
    "polygon",
    "polyline",
    "rect",
    "short_money",
    "short_tokens",
    "text",
    "x_axis",
]

WIDTH = 760.0
"""Every chart's width in SVG units (it scales to the page)."""
FONT = 12.0


@dataclass(frozen=True, slots=True)
class Scale:
    """Maps ``[low, high]`` linearly onto ``[start, end]`` (pixels)."""

    low: float
    high: float
    start: float
    end: float

    def __call__(self, value: float) -> float:
        span = self.high - self.low
        if not span:
            return self.start
        return self.start + (value - self.low) / span * (self.end - self.start)


def nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """Round tick values covering ``[low, high]`` (1, 2, 2.5 or 5 times a power of ten)."""
    if high <= low:
        return [low]
    raw = (high - low) / max(count, 1)
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
    first = math.floor(low / step) * step
    ticks = []
    value = first
    while value < high + step * 0.999:
        ticks.append(round(value, 12))
        value += step
    return ticks


def short_tokens(value: float) -> str:
    """``950``, ``12.5k``, ``3.2M``."""
    size = abs(value)
    if size >= 1e6:
        return f"{value / 1e6:.3g}M"
    if size >= 1e3:
        return f"{value / 1e3:.3g}k"
    return f"{value:.0f}"


def short_money(value: float) -> str:
    """``$1.23``, ``$0.042``, ``$1.2k`` — for axis ticks and labels (tables carry the exact
    figures)."""
    size = abs(value)
    sign = "-" if value < 0 else ""
    if size >= 1e3:
        return f"{sign}${size / 1e3:.3g}k"
    if size >= 1 or size == 0 or round(size, 2) == size:
        return f"{sign}${size:,.2f}"
    return f"{sign}${size:.6f}".rstrip("0")


def rect(x: float, y: float, width: float, height: float, cls: str, tip: str | None = None) -> Node:
    """A rectangle (negative sizes are flipped) with an optional tooltip."""
    if width < 0:
        x, width = x + width, -width
    if height < 0:
        y, height = y + height, -height
    return el(
        "rect",
        el("title", tip) if tip else None,
        x=x,
        y=y,
        width=max(width, 0.0),
        height=max(height, 0.0),
        class_=cls,
    )


def line(x1: float, y1: float, x2: float, y2: float, cls: str) -> Node:
    return el("line", x1=x1, y1=y1, x2=x2, y2=y2, class_=cls)


def _points(points: Sequence[tuple[float, float]]) -> str:
    return " ".join(f"{number(x)},{number(y)}" for x, y in points)


def polyline(points: Sequence[tuple[float, float]], cls: str) -> Node:
    return el("polyline", points=_points(points), class_=cls)


def polygon(points: Sequence[tuple[float, float]], cls: str, tip: str | None = None) -> Node:
    return el("polygon", el("title", tip) if tip else None, points=_points(points), class_=cls)


def text(
    x: float, y: float, content: str, *, anchor: str = "start", cls: str | None = None
) -> Node:
    return el("text", content, x=x, y=y, text_anchor=anchor, class_=cls)


def x_axis(
    scale: Scale, ticks: Sequence[float], top: float, bottom: float, label: Callable[[float], str]
) -> Node:
    """Vertical grid lines at ``ticks`` from ``top`` to ``bottom``, labelled below."""
    marks: list[Node] = []
    for tick in ticks:
        x = scale(tick)
        marks.append(line(x, top, x, bottom, "grid"))
        marks.append(text(x, bottom + FONT + 2, label(tick), anchor="middle", cls="tick"))
    return el("g", *marks, class_="axis")


def legend(entries: Sequence[tuple[str, str]], x: float, y: float) -> Node:
    """A row of (css class, label) swatches starting at ``(x, y)``."""
    items: list[Node] = []
    for cls, label in entries:
        items.append(rect(x, y - 9, 10, 10, cls))
        items.append(text(x + 14, y, label, cls="legend"))
        x += 24 + len(label) * 6.6
    return el("g", *items, class_="legend")


def chart(height: float, label: str, *children: Node) -> Node:
    """An ``<svg>`` chart of the standard width, labelled for assistive technology."""
    return el(
        "svg",
        el("title", label),
        *children,
        viewBox=f"0 0 {number(WIDTH)} {number(height)}",
        width=WIDTH,
        height=height,
        role="img",
        aria_label=label,
        class_="chart",
    )
