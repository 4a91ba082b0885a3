"""How faithfully the cache simulator reproduces recorded caching: ``costsim check-cache``.

The recorded traces that used caching are simulated exactly as recorded. Per call, the
predicted cache read and write are compared with the recorded ones; a call matches when both
are within the prefix estimate's tolerance (5% of the prompt, at least 32 tokens). A recording
that starts warm (a call reads cache no earlier call in it wrote) is seeded with that entry
and reported as such, not as a simulator error.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from costsim.cache.simulators import CacheResult
from costsim.engine.simulate import Engine
from costsim.metering.meter import Meter
from costsim.model import Call, CassetteTrace, Provenance

__all__ = ["FidelityReport", "Mismatch", "check_cache"]

_SERVER_SIDE = frozenset({"container", "mcp_servers", "context_management"})


@dataclass(frozen=True, slots=True)
class Mismatch:
    provenance: Provenance
    model: str
    recorded_read: int
    recorded_write: int
    predicted_read: int
    predicted_write: int
    reason: str


@dataclass(slots=True)
class FidelityReport:
    calls_compared: int = 0
    calls_matched: int = 0
    unseeded_compared: int = 0
    """Calls compared whose cache state the simulation did not seed from the recording."""
    unseeded_matched: int = 0
    warm_starts: list[Provenance] = field(default_factory=list)
    mismatches: list[Mismatch] = field(default_factory=list)
    by_provider: dict[str, tuple[int, int]] = field(default_factory=dict)

    @property
    def match_rate(self) -> float | None:
        return self.calls_matched / self.calls_compared if self.calls_compared else None


def _used_caching(trace: CassetteTrace) -> bool:
    return any(
        (call.usage is not None and (call.usage.cache_read or call.usage.cache_write))
        for call in trace.calls
    )


def tolerance(call: Call) -> float:
    total = call.usage.prompt_total if call.usage is not None else 0
    return max(32.0, 0.05 * total)


def _reason(call: Call, predicted: CacheResult) -> str:
    usage = call.usage
    assert usage is not None
    server_side = _SERVER_SIDE.intersection(call.extra)
    if server_side:
        return f"server-side additions to the prompt ({', '.join(sorted(server_side))})"
    if predicted.read and not usage.cache_read and call.provider == "openai":
        return "the provider did not reuse a prefix it had cached (OpenAI caching is best-effort)"
    if predicted.read and not usage.cache_read:
        return "the simulator found a live entry the provider did not use (TTL or concurrency)"
    if usage.cache_read and not predicted.read:
        return "recorded read has no earlier entry in the trace the simulator could match"
    if usage.cache_write and call.provider == "openai":
        return "OpenAI write boundary (GPT-5.6+) is approximated"
    return "prefix token estimate differs from the recorded boundary"


def check_cache(traces: Iterable[CassetteTrace], *, meter: Meter | None = None) -> FidelityReport:
    selected = [trace for trace in traces if _used_caching(trace)]
    report = FidelityReport()
    if not selected:
        return report
    engine = Engine(selected, meter=meter)
    counts: dict[str, list[int]] = {}
    for call, predicted, warm in engine.check():
        usage = call.usage
        if usage is None:
            continue
        written = predicted.write_5m + predicted.write_1h
        if not (usage.cache_read or usage.cache_write or predicted.read or written):
            continue
        if warm:
            report.warm_starts.append(call.provenance)
        limit = tolerance(call)
        matched = (
            abs(predicted.read - usage.cache_read) <= limit
            and abs(written - usage.cache_write) <= limit
        )
        report.calls_compared += 1
        report.calls_matched += matched
        if not warm:
            report.unseeded_compared += 1
            report.unseeded_matched += matched
        tally = counts.setdefault(call.provider, [0, 0])
        tally[0] += 1
        tally[1] += matched
        if not matched:
            report.mismatches.append(
                Mismatch(
                    call.provenance,
                    call.priced_model,
                    usage.cache_read,
                    usage.cache_write,
                    predicted.read,
                    written,
                    _reason(call, predicted),
                )
            )
    report.by_provider = {name: (c, m) for name, (c, m) in sorted(counts.items())}
    return report
