"""Text cut to a width, and the bytes a cut costs: small and free of the table libraries, for
what the pytest plugin prints in the test process. Paths that would read alike cut from the
left are cut apart (:func:`distinct_cuts`); text of wide letters is wrapped (:func:`narrowed`).

Widths are display columns, as a terminal shows text: an east-asian wide or fullwidth
character (``日``, U+FF21 the fullwidth A) takes two, a combining mark or another zero-width
character (``é`` written as ``e`` and U+0301) none (:func:`display_width`; the standard library's
:mod:`unicodedata` knows each character's class).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Sequence
from functools import lru_cache

__all__ = [
    "ELLIPSIS",
    "byte_excess",
    "display_width",
    "distinct_cuts",
    "extra_bytes",
    "narrowed",
    "pad",
    "shorten_left",
    "shorten_right",
    "take",
    "take_end",
]

ELLIPSIS = "…"

_ZERO_WIDTH = frozenset({"Mn", "Me", "Cf"})
"""Combining marks and format characters (U+200B, U+200D): drawn over or between others."""


@lru_cache(maxsize=4096)
def _width(char: str) -> int:
    """The display columns of one character (not ASCII)."""
    if unicodedata.category(char) in _ZERO_WIDTH and char != "\N{SOFT HYPHEN}":
        return 0
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1


def display_width(text: str) -> int:
    """How many columns ``text`` takes on a terminal (``claude-日本`` takes 11)."""
    if text.isascii():
        return len(text)
    return sum(_width(char) for char in text)


def take(text: str, width: int) -> str:
    """The longest start of ``text`` within ``width`` columns (marks that sit on its last
    character kept with it)."""
    if text.isascii():
        return text[:width]
    used = 0
    for index, char in enumerate(text):
        used += _width(char)
        if used > width:
            return text[:index]
    return text


def take_end(text: str, width: int) -> str:
    """The longest end of ``text`` within ``width`` columns (never starting with a mark that
    has lost its character)."""
    if text.isascii():
        return text[max(len(text) - width, 0) :] if width > 0 else ""
    used = 0
    start = len(text)
    for index in range(len(text) - 1, -1, -1):
        used += _width(text[index])
        if used > width:
            break
        start = index
    while start < len(text) and _width(text[start]) == 0:
        start += 1
    return text[start:]


def shorten_left(text: str, width: int) -> str:
    """``text`` cut from the left to ``width`` columns (``…`` marks the cut)."""
    if display_width(text) <= width:
        return text
    kept = take_end(text, max(width - 1, 1))
    return ELLIPSIS + (kept or text[-1])


def shorten_right(text: str, width: int) -> str:
    """``text`` cut from the right to ``width`` columns (``…`` marks the cut)."""
    if display_width(text) <= width:
        return text
    kept = take(text, max(width - 1, 1))
    return (kept or text[0]) + ELLIPSIS


def pad(text: str, width: int, align: str = "left") -> str:
    """``text`` padded with spaces to ``width`` columns, on the right (``left``) or left."""
    room = " " * max(width - display_width(text), 0)
    return text + room if align == "left" else room + text


def extra_bytes(text: str) -> int:
    """Bytes beyond one per character (``…``, ``Δ``, ``±``): tools that measure lines in
    bytes (``awk``, ``wc -c``) see them too, so fitting keeps room for them."""
    return len(text.encode("utf-8", "surrogatepass")) - len(text)  # a name not UTF-8: no error


def byte_excess(text: str) -> int:
    """Bytes beyond the columns ``text`` takes (``…``: 2, ``日``: 1): what a line measured in
    bytes needs on top of its width (:func:`extra_bytes` for text one column a character)."""
    if text.isascii():
        return 0
    return len(text.encode("utf-8", "surrogatepass")) - display_width(text)


def narrowed(
    lines: Callable[[int], list[str]],
    width: int,
    measure: Callable[[str], int],
    *,
    least: int = 20,
) -> list[str]:
    """``lines(size)`` for the largest ``size`` (in characters, down to ``least``) whose lines
    all measure at most ``width``: text of wide letters (``日``, two columns and three bytes a
    character) wrapped to fit a width counted in characters."""
    size = width
    made = lines(size)
    while size > least and (over := max(map(measure, made), default=0) - width) > 0:
        size = max(size - max(over // 3, 1), least)  # three bytes a wide letter, at most
        made = lines(size)
    return made


def distinct_cuts(values: Sequence[str], size: int) -> dict[str, str]:
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
        if _distinct_count(best) < len(same):
            _separate(same, size, best)
        cuts.update(best)
    return cuts


def _separate(same: set[str], size: int, cuts: dict[str, str]) -> None:
    """Cuts that still read alike (paths that differ in two places, ``c1/x_a.yaml``,
    ``c1/x_b.yaml``, ``c2/x_a.yaml``: one window cannot show both) move their window to
    another place where they differ from a path of the group, one that no other cut shows,
    for as long as that helps."""
    for _ in range(3):
        moved = False
        for value in sorted(same):
            others = [cuts[other] for other in same - {value}]
            if cuts[value] not in others:
                continue
            starts = sorted({_common(value, other) for other in same - {value}})
            free = [cut for s in starts if (cut := _middle_cut(value, size, s)) not in others]
            if free:
                cuts[value], moved = free[0], True
        if not moved:
            return


def _distinct_count(cuts: dict[str, str]) -> int:
    return len(set(cuts.values()))


def _common(a: str, b: str) -> int:
    """The length of the longest common prefix of ``a`` and ``b``."""
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def _middle_cut(text: str, size: int, differs: int) -> str:
    """``text`` in ``size`` columns keeping its end and the stretch from ``differs`` on
    (the column keeps room for the bytes of two ellipses)."""
    room = size - 2  # the two ellipses
    tail = room // 2
    middle = room - tail
    end = take_end(text, tail)
    if room < 6 or display_width(text[differs:]) - display_width(end) <= middle:
        return shorten_left(text, size)
    start = max(differs - 2, 0)
    head = ELLIPSIS if start else ""
    return f"{head}{take(text[start:], middle + (0 if start else 1))}{ELLIPSIS}{end}"
