"""What strategies work on: a recorded trace as a sequence of simulated calls, and events."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from costsim.model import Call, CassetteTrace, Provenance

__all__ = ["Event", "SimCall", "SimTrace", "said_of_the_run"]


@dataclass(frozen=True, slots=True)
class SimCall:
    """A request of the simulated trace and the recorded call it derives from.

    ``origin`` is None for a call the variant adds (a compaction summary, say); such a call is
    metered wholly by estimate. ``output`` / ``reasoning`` override the recorded output when a
    strategy changes what the model would say (routing, thinking budgets).
    """

    call: Call
    origin: Call | None
    output: int | None = None
    reasoning: int | None = None
    role: str | None = None
    """What the call is for when a strategy added it ("summary", ...)."""
    output_error: float = 0.0
    """Expected error (p90, tokens) of ``output`` when a strategy derived it from an estimate
    (thinking counted from its visible text, say); 0 when it rests on recorded numbers."""

    @property
    def untouched(self) -> bool:
        return self.origin is not None and self.call is self.origin and self.output is None


@dataclass(frozen=True, slots=True)
class Event:
    """Something a strategy did, or a risk it took.

    ``divergence``: a place where the recorded future would likely not have happened under
    the variant (a tool called that was not sent, a quoted line that was truncated away).
    """

    strategy: str
    kind: Literal["change", "divergence", "note"]
    message: str
    provenance: Provenance | None = None
    tokens: int = 0
    of_run: bool = False
    """A note that holds of a variant's run only when every trace with calls says it (a rule
    that found no call to apply to in a trace): said once then, else not at all (see
    :func:`said_of_the_run`)."""


def said_of_the_run(events: Sequence[Event], traces: int) -> list[Event]:
    """``events`` with each note said of the run (``of_run``) kept once, in place of where first
    said but naming no call (it is about the run, not that cassette), when all ``traces`` (the
    run's traces with calls) said it, and dropped otherwise: a strategy sees one trace at a
    time, says such a note at most once in each, and a rule that applies to no call of one
    trace may apply in another."""
    saying = Counter((e.strategy, e.message) for e in events if e.of_run)
    kept: list[Event] = []
    said: set[tuple[str, str]] = set()
    for event in events:
        key = (event.strategy, event.message)
        if event.of_run:
            if key in said or saying[key] < traces:
                continue
            said.add(key)
            kept.append(replace(event, provenance=None))
            continue
        kept.append(event)
    return kept


@dataclass(frozen=True, slots=True)
class SimTrace:
    path: Path
    calls: tuple[SimCall, ...]

    @classmethod
    def recorded(cls, trace: CassetteTrace) -> SimTrace:
        return cls(trace.path, tuple(SimCall(call, call) for call in trace.calls))

    def with_requests(self, requests: Sequence[Call]) -> SimTrace:
        """This trace with each call's request replaced (equal requests keep the original)."""
        if len(requests) != len(self.calls):
            raise ValueError(f"{len(requests)} requests for {len(self.calls)} calls")
        return SimTrace(
            self.path,
            tuple(
                item if new == item.call else replace(item, call=new)
                for item, new in zip(self.calls, requests, strict=True)
            ),
        )
