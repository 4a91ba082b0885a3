"""Notes said alike of several cassettes or tests, once (``render.events_text``)."""

from __future__ import annotations

from pathlib import Path

from costsim.model import Provenance
from costsim.render.events_text import alike, said_once
from costsim.strategies.trace import Event

BELOW = (
    "all {n} breakpoints placed (last message, system) sit below the 1,024-token minimum for "
    "claude-sonnet-4-5 (the longest, an estimated {tokens} tokens): they cache nothing"
)


def test_notes_alike_but_for_their_numbers_are_one_with_ranges() -> None:
    """A trial's plugin run printed one such note per test, each with its own prompt length
    (580, 582, 583, 596 tokens): four near-identical notes under one column."""
    notes = [BELOW.format(n=6, tokens=t) for t in (583, 580, 596, 582)]
    notes.insert(1, "prefix shorter than the 1,024-token minimum for claude-sonnet-4-5")
    notes.append(BELOW.format(n=6, tokens=580).replace("claude-sonnet-4-5", "claude-sonnet-4-6"))
    merged = alike(notes)
    assert [text for text, _ in merged] == [
        BELOW.format(n=6, tokens="580 to 596"),
        "prefix shorter than the 1,024-token minimum for claude-sonnet-4-5",
        # a number inside a model's name is part of the name: another model, another note
        BELOW.format(n=6, tokens=580).replace("claude-sonnet-4-5", "claude-sonnet-4-6"),
    ]
    assert [indexes for _, indexes in merged] == [[0, 2, 3, 4], [1], [5]]
    # only token counts become ranges: a count of calls would want a sum, an index or a
    # version is a name (a review's "message 4 to 9", "2 to 4 of the 5 to 9", "v1:0 to 1")
    others = [
        "3 calls routed (message 4)",
        "12 calls routed (message 9)",
        "2 of the 5",
        "4 of the 9",
    ]
    assert [text for text, _ in alike(others)] == others
    assert alike(["1,200 tokens in 3 calls", "999 tokens in 3 calls"]) == [
        ("999 to 1,200 tokens in 3 calls", [0, 1])
    ]


def test_said_once_names_the_first_cassette_and_counts_the_others() -> None:
    events = [
        Event("caching", "note", BELOW.format(n=n, tokens=t), Provenance(Path(f"{n}{t}.yaml"), 0))
        for n, t in ((6, 583), (4, 580), (6, 596))
    ]
    events.insert(1, Event("caching", "change", "placed 4 breakpoints", events[0].provenance))
    said = said_once(events)
    assert [e.kind for e in said] == ["note", "change", "note"]
    assert said[0].message == BELOW.format(n=6, tokens="583 to 596") + " (and 1 more cassette)"
    assert said[2].message == BELOW.format(n=4, tokens=580)  # another count of breakpoints
    assert said[0].provenance == events[0].provenance
