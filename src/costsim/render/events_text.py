"""A variant's events as lines: one per change or divergence, one per note said alike of
several cassettes."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from costsim.render.paths import shorten_path
from costsim.render.text import display_path, wrap
from costsim.strategies.trace import Event

__all__ = ["event_line", "said_once"]


def event_line(event: Event, width: int) -> list[str]:
    """``kind (strategy) path#i: message``, the path cut from the left at a folder, wrapped."""
    where = ""
    if event.provenance is not None:
        path = shorten_path(display_path(event.provenance.path), max(width - 40, 20))
        where = f" {path}#{event.provenance.index}"
    return wrap(f"{event.kind} ({event.strategy}){where}: {event.message}", width, indent="  ")


def said_once(events: Sequence[Event]) -> list[Event]:
    """Notes that say the same of several cassettes, once: where first, and how many more
    (changes and divergences are about their own call, and stay one each)."""
    grouped: dict[tuple[str, str], list[Event]] = {}
    kept: list[Event | tuple[str, str]] = []
    for event in events:
        if event.kind != "note":
            kept.append(event)
            continue
        key = (event.strategy, event.message)
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
        first = same[0]
        also = f"{len(same)} times" if len(same) > 1 else ""
        if more > 0:
            also = f"and {more} more cassette{'s' if more > 1 else ''}"
        if also:
            first = dataclasses.replace(first, message=f"{first.message} ({also})")
        said.append(first)
    return said
