"""Bar charts: horizontal bars stacked by class (with an error band), and a waterfall."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from costsim.render.html.markup import Node, el
from costsim.render.html.svg import (
    WIDTH,
    Scale,
    chart,
    legend,
    line,
    nice_ticks,
    rect,
    text,
    x_axis,
)

__all__ = ["Bar", "Step", "stacked_bars", "waterfall"]

ROW = 22.0
GAP = 8.0
TOP = 30.0
BOTTOM = 26.0
CHAR = 7.0
"""Width of one character of a 12px label, generously (labels are clipped to fit by it)."""


@dataclass(frozen=True, slots=True)
class Bar:
    """One bar: its segments (css class, value) stacked left to right, the text at its end,
    and the range the value may lie in (drawn as a whisker over the bar's end)."""

    label: str
    segments: tuple[tuple[str, float], ...]
    value_label: str
    band: tuple[float, float] | None = None

    @property
    def total(self) -> float:
        return sum(value for _, value in self.segments)


@dataclass(frozen=True, slots=True)
class Step:
    """One row of a waterfall: a level (``total``, drawn from zero) or a change of it."""

    label: str
    value: float
    kind: Literal["total", "change"]
    value_label: str


def _label_width(labels: Sequence[str]) -> float:
    return min(max((len(label) for label in labels), default=4) * CHAR + 16, 250.0)


def _label(label: str, width: float, y: float) -> Node:
    """A row's label right-aligned left of the bars, cut from the left to fit ``width`` (its
    end names it best: a file name); the whole label is its tooltip."""
    room = max(int((width - 10) / CHAR), 4)
    shown = label if len(label) <= room else "…" + label[len(label) - room + 1 :]
    return el("text", el("title", label), shown, x=width - 6, y=y + ROW * 0.7, text_anchor="end")


def _frame(labels: Sequence[str], high: float, low: float) -> tuple[float, Scale, list[float]]:
    left = _label_width(labels)
    value_room = 96.0
    ticks = nice_ticks(low, high or 1.0)
    scale = Scale(min(ticks[0], 0.0), ticks[-1], left, WIDTH - value_room)
    return left, scale, ticks


def stacked_bars(
    title: str,
    bars: Sequence[Bar],
    classes: Sequence[tuple[str, str]],
    tick_format: Callable[[float], str],
) -> Node:
    """One horizontal bar per entry, its segments stacked by class; the ``band`` is a
    whisker with end caps across the bar's end."""
    high = max((max(bar.total, bar.band[1] if bar.band else 0.0) for bar in bars), default=0.0)
    left, scale, ticks = _frame([bar.label for bar in bars], high, 0.0)
    height = TOP + len(bars) * (ROW + GAP) + BOTTOM
    bottom = height - BOTTOM
    marks: list[Node] = [x_axis(scale, ticks, TOP - 6, bottom, tick_format)]
    names = dict(classes)
    for row, bar in enumerate(bars):
        y = TOP + row * (ROW + GAP)
        marks.append(_label(bar.label, left, y))
        reached = 0.0
        parts: list[Node] = []
        for cls, value in bar.segments:
            if value <= 0:
                continue
            start, reached = scale(reached), reached + value
            tip = f"{bar.label}: {names.get(cls, cls)} {tick_format(value)}"
            parts.append(rect(start, y, scale(reached) - start, ROW, cls, tip))
        marks.append(el("g", *parts, class_="bar"))
        if bar.band is not None and bar.band[1] > bar.band[0]:
            tip = f"error band: {tick_format(bar.band[0])} to {tick_format(bar.band[1])}"
            marks.append(_whisker(scale, bar.band, y + ROW / 2, tip))
        end_x = scale(max(bar.total, bar.band[1] if bar.band else 0.0))
        marks.append(text(end_x + 6, y + ROW * 0.7, bar.value_label, cls="value"))
    marks.append(legend(classes, left, 14))
    return chart(height, title, *marks)


def _whisker(scale: Scale, band: tuple[float, float], y: float, tip: str) -> Node:
    low, high = scale(band[0]), scale(band[1])
    return el(
        "g",
        el("title", tip),
        line(low, y, high, y, "band"),
        line(low, y - 7, low, y + 7, "band"),
        line(high, y - 7, high, y + 7, "band"),
        class_="whisker",
    )


def waterfall(title: str, steps: Sequence[Step], tick_format: Callable[[float], str]) -> Node:
    """Levels drawn from zero, changes drawn from the running level (a saving steps left);
    thin connectors join each bar's end to the next bar's start."""
    levels: list[tuple[float, float]] = []
    running = 0.0
    for step in steps:
        if step.kind == "total":
            start, running = 0.0, step.value
        else:
            start, running = running, running + step.value
        levels.append((start, running))
    high = max((max(pair) for pair in levels), default=0.0)
    low = min((min(pair) for pair in levels), default=0.0)
    left, scale, ticks = _frame([step.label for step in steps], high, min(low, 0.0))
    height = TOP + len(steps) * (ROW + GAP) + BOTTOM
    bottom = height - BOTTOM
    marks: list[Node] = [x_axis(scale, ticks, TOP - 6, bottom, tick_format)]
    previous: float | None = None
    for row, (step, (start, end)) in enumerate(zip(steps, levels, strict=True)):
        y = TOP + row * (ROW + GAP)
        cls = "c-total" if step.kind == "total" else ("c-save" if end < start else "c-add")
        marks.append(_label(step.label, left, y))
        tip = f"{step.label}: {step.value_label}"
        marks.append(rect(scale(start), y, scale(end) - scale(start), ROW, cls, tip))
        if previous is not None:
            marks.append(line(scale(previous), y - GAP, scale(previous), y, "connector"))
        marks.append(text(scale(max(start, end)) + 6, y + ROW * 0.7, step.value_label, cls="value"))
        previous = end
    entries = [("c-total", "cost"), ("c-save", "saves"), ("c-add", "adds")]
    marks.append(legend(entries, left, 14))
    return chart(height, title, *marks)
