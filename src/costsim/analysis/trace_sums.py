"""What is summed of a trace a run leaves as recorded, summed once for every such run.

A variant changes few of a comparison's traces; each trace it leaves alone is billed as
recorded, by the engine's one list of that trace's recorded calls (see
:meth:`costsim.engine.Engine.recorded`), in the baseline and in every variant. Its totals and
band terms are the same in every run, so they are made once per list and served again:
a comparison's sums then grow with what its variants change, not with its variants times
its cassettes. A trace a run changes is summed as before, every time.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from costsim.analysis.spread import Terms
from costsim.engine.results import SimulatedCall, TraceResult
from costsim.pricing.ledger import MeteredCall, Totals

__all__ = ["TraceSums"]


class TraceSums:
    """Totals and band terms of traces billed as recorded, by their list of calls."""

    def __init__(self) -> None:
        self._totals: dict[int, tuple[list[SimulatedCall], Totals]] = {}
        self._terms: dict[tuple[int, bool], tuple[list[SimulatedCall], Terms]] = {}

    def totals(self, trace: TraceResult, recorded: bool, metered: Sequence[MeteredCall]) -> Totals:
        """The totals of ``metered`` (``trace``'s calls, metered); remembered when the trace
        is ``recorded`` (the same list in every run). Totals are never changed in place
        (merges make new ones), so one object serves every run."""
        if not recorded:
            return Totals.of(metered)
        hit = self._totals.get(id(trace.calls))
        if hit is None or hit[0] is not trace.calls:
            hit = self._totals[id(trace.calls)] = (trace.calls, Totals.of(metered))
        return hit[1]

    def terms(
        self,
        trace: TraceResult,
        recorded: bool,
        shrinks: bool,
        make: Callable[[TraceResult, bool], Terms],
    ) -> Terms:
        """``make(trace, shrinks)``, the band terms of ``trace`` (``shrinks``: as a run that
        only takes content away bills them); remembered when the trace is ``recorded``.
        Terms are read, never changed in place."""
        if not recorded:
            return make(trace, shrinks)
        key = (id(trace.calls), shrinks)
        hit = self._terms.get(key)
        if hit is None or hit[0] is not trace.calls:
            hit = self._terms[key] = (trace.calls, make(trace, shrinks))
        return hit[1]
