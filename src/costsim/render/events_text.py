"""A variant's events as lines: one per change or divergence, one per note said alike of
several cassettes."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from decimal import Decimal

from costsim.render.paths import shorten_path
from costsim.render.text import display_path, wrap
from costsim.strategies.trace import Event

__all__ = ["alike", "event_line", "said_once"]


def event_line(event: Event, width: int) -> list[str]:
    """``kind (strategy) path#i: message``, the path cut from the left at a folder, wrapped."""
    where = ""
    if event.provenance is not None:
        path = shorten_path(display_path(event.provenance.path), max(width - 40, 20))
        where = f" {path}#{event.provenance.index}"
    return wrap(f"{event.kind} ({event.strategy}){where}: {event.message}", width, indent="  ")


_NUMBER = re.compile(r"(?<![\w.-])\d+(?:,\d{3})*(?= tokens?\b)")
"""A count of tokens (``580 tokens``, ``1,024 tokens``): a measure a range reads right for.
Other numbers (a count of calls, which would want a sum; a message's index; a number inside a
name, ``claude-sonnet-4-5``) must be equal for two messages to be one."""


def alike(messages: Sequence[str]) -> list[tuple[str, list[int]]]:
    """Messages that say the same but for their token counts, once, each count a range where
    they differ (``the longest, an estimated 580 to 596 tokens``), with the indexes of the
    messages merged; in the order each first appears."""
    groups: dict[tuple[str, ...], list[int]] = {}
    numbers = [_NUMBER.findall(message) for message in messages]
    for index, message in enumerate(messages):
        groups.setdefault(tuple(_NUMBER.split(message)), []).append(index)
    merged = []
    for texts, indexes in groups.items():
        spans = [_span(values) for values in zip(*(numbers[i] for i in indexes), strict=True)]
        parts = [part for pair in zip(texts, [*spans, ""], strict=True) for part in pair]
        merged.append(("".join(parts), indexes))
    return merged


def _span(values: Sequence[str]) -> str:
    ordered = sorted(set(values), key=lambda value: Decimal(value.replace(",", "")))
    return ordered[0] if len(ordered) == 1 else f"{ordered[0]} to {ordered[-1]}"


def said_once(events: Sequence[Event]) -> list[Event]:
    """Notes that say the same of several cassettes (but for their token counts: see
    :func:`alike`), once: where first, and how many more (changes and divergences are about
    their own call, and stay one each)."""
    grouped: dict[tuple[str, ...], list[Event]] = {}
    kept: list[Event | tuple[str, ...]] = []
    for event in events:
        if event.kind != "note":
            kept.append(event)
            continue
        key = (event.strategy, *_NUMBER.split(event.message))
        if key not in grouped:
            kept.append(key)
        grouped.setdefault(key, []).append(event)
    said: list[Event] = []
    for item in kept:
        if isinstance(item, Event):
            said.append(item)
            continue
        same = grouped[item]
        more = len({e.provenance.path for e in same if e.provenance is not None}) - 1
        ((message, _),) = alike([event.message for event in same])
        first = dataclasses.replace(same[0], message=message)
        also = f"{len(same)} times" if len(same) > 1 else ""
        if more > 0:
            also = f"and {more} more cassette{'s' if more > 1 else ''}"
        if also:
            first = dataclasses.replace(first, message=f"{first.message} ({also})")
        said.append(first)
    return said
