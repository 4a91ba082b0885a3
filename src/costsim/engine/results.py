"""What a simulation returns: each call as billed, per trace and per variant."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from pathlib import Path

from costsim.cache.results import CacheResult
from costsim.model import Call, Usage
from costsim.pricing.ledger import MeteredCall, Totals, meter
from costsim.strategies.registry import Variant
from costsim.strategies.trace import Event, SimCall

__all__ = ["SimulatedCall", "TraceResult", "VariantResult", "WarmStart", "trace_cost"]


@dataclass(frozen=True, slots=True)
class SimulatedCall:
    sim: SimCall
    usage: Usage | None
    cache: CacheResult | None = None
    resimulated: bool = False
    """The variant changed what this call is billed: it went through the cache simulation,
    in the variant and in its baseline alike (see :mod:`costsim.engine.anchoring`)."""
    hidden: int = 0
    """Prompt tokens server-side tool iterations added (never cacheable by the client)."""
    simulated: Usage | None = None
    """The simulation's own usage, when ``usage`` (what is billed) is anchored on the
    recording instead; None: ``usage`` is the simulation's (or the recording's)."""

    @property
    def call(self) -> Call:
        return self.sim.call

    @property
    def modelled(self) -> Usage | None:
        """The usage the simulation gave this call, before anchoring: what its bands, its
        cache economics and the replay's gap from the bill are measured on."""
        return self.simulated if self.simulated is not None else self.usage


@dataclass(frozen=True, slots=True)
class WarmStart:
    """A cache entry the recording shows existed before its first use in the trace."""

    path: Path
    index: int
    tokens: int


@dataclass(slots=True)
class TraceResult:
    path: Path
    calls: list[SimulatedCall]
    events: list[Event] = field(default_factory=list)
    warm: list[WarmStart] = field(default_factory=list)


@dataclass(slots=True)
class VariantResult:
    variant: Variant
    traces: list[TraceResult]
    baselines: list[TraceResult] = field(default_factory=list)
    """Per trace, what the variant is compared with: the recording, billed as recorded; the
    calls the variant bills differently carry the simulation of the recording beside it
    (``simulated``), from which the variant's change is measured."""
    sent: bool = False
    """Requests other than the recorded ones replaced some before the variant applied (what
    the code sends now: the pytest plugin's drifted calls)."""

    @property
    def events(self) -> list[Event]:
        return [event for trace in self.traces for event in trace.events]

    @property
    def divergences(self) -> int:
        return sum(1 for event in self.events if event.kind == "divergence")

    def metered(self, *, as_of: datetime | None = None) -> list[MeteredCall]:
        return [
            meter(item.call, as_of=as_of, usage=item.usage)
            for trace in self.traces
            for item in trace.calls
        ]

    def totals(self, *, as_of: datetime | None = None) -> Totals:
        return Totals.of(self.metered(as_of=as_of))

    def totals_by_trace(self, *, as_of: datetime | None = None) -> dict[Path, Totals]:
        return _by_trace(self.traces, as_of)

    def baseline_metered(self, *, as_of: datetime | None = None) -> list[MeteredCall]:
        return [
            meter(item.call, as_of=as_of, usage=item.usage)
            for trace in self.baselines
            for item in trace.calls
        ]

    def baseline_by_trace(self, *, as_of: datetime | None = None) -> dict[Path, Totals]:
        return _by_trace(self.baselines, as_of)


def trace_cost(trace: TraceResult) -> Decimal | None:
    return Totals.of(meter(item.call, usage=item.usage) for item in trace.calls).cost_usd


def _by_trace(traces: list[TraceResult], as_of: datetime | None) -> dict[Path, Totals]:
    return {
        trace.path: Totals.of(
            meter(item.call, as_of=as_of, usage=item.usage) for item in trace.calls
        )
        for trace in traces
    }
