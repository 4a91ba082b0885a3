"""Which events a comparison lists under a variant: without -v a sample that shows every kind,
with -v every event where it happened (:mod:`costsim.render.comparison_text`)."""

from __future__ import annotations

from pathlib import Path

from costsim.model import Provenance
from costsim.render.comparison_text import EVENTS_SHOWN, _sample
from costsim.strategies.trace import Event


def _event(kind: str, index: int, message: str = "m") -> Event:
    return Event("routing", kind, f"{message} {index}", Provenance(Path("c.yaml"), index))  # type: ignore[arg-type]


def test_many_divergences_do_not_hide_the_one_note() -> None:
    """A trial: ten divergences filled the three lines listed, and the note saying why every
    routed prompt grew 13.5% was only seen with -v."""
    events = [_event("divergence", i) for i in range(10)] + [_event("note", 0, "why")]
    events.insert(0, _event("change", 9))
    shown = _sample(events)
    assert [e.kind for e in shown] == ["divergence", "divergence", "note"]
    assert shown[-1].message == "why 0"
    assert len(_sample([_event("divergence", i) for i in range(10)])) == EVENTS_SHOWN
    assert _sample([_event("change", 1)]) == []
    assert _sample([_event("note", 1)]) == [_event("note", 1)]


def test_verbose_lists_each_note_where_it_happened() -> None:
    """A trial: ``-v`` still printed ``(and 16 more cassettes)``; the README says it lists
    every event with its file and interaction."""
    import costsim
    from tests.conftest import EXAMPLES

    result = costsim.simulate(str(EXAMPLES), "routing")
    quiet = " ".join(result.render("table", width=100).split())
    verbose = " ".join(result.render("table", width=100, verbose=True).split())
    assert "more cassette" in quiet
    assert "more cassette" not in verbose
    assert verbose.count("no rule routes any call") > 1
