"""How faithfully the cache simulator reproduces recorded caching: ``costsim check-cache``.

The recorded traces that used caching are simulated exactly as recorded. Per call, the
predicted cache read, 5m write and 1h write are compared with the recorded ones; a call
matches when each is within the prefix estimate's tolerance (5% of the prompt, at least 32
tokens). A recording that starts warm (a call reads cache no earlier call in it wrote, and no
caching rule explains the miss) is seeded with that entry and reported as such, not as a
simulator error. A mismatch names its likely reason, and the caching rule the recording
breaks when there is one (a read after the TTL expired, a write below the minimum, ...).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from costsim.cache.results import CacheResult
from costsim.cache.rules import RULE_NAMES, tolerance
from costsim.engine.simulate import Engine
from costsim.metering.meter import Meter
from costsim.model import Call, CassetteTrace, Provenance

__all__ = ["FidelityReport", "Mismatch", "check_cache", "tolerance"]

_SERVER_SIDE = frozenset({"container", "mcp_servers", "context_management"})
_READ_RULES = ("ttl", "lookback", "breakpoints", "minimum")


@dataclass(frozen=True, slots=True)
class Mismatch:
    provenance: Provenance
    model: str
    recorded_read: int
    recorded_write: int
    predicted_read: int
    predicted_write: int
    reason: str
    recorded_write_1h: int = 0
    predicted_write_1h: int = 0
    rule: str | None = None
    """The caching rule the recording breaks (``ttl``, ``minimum``, ...), when one does."""

    @property
    def recorded_write_5m(self) -> int:
        return self.recorded_write - self.recorded_write_1h

    @property
    def predicted_write_5m(self) -> int:
        return self.predicted_write - self.predicted_write_1h


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
    server_side_compared: int = 0
    """Calls compared whose response records server-side tool iterations: the provider's own
    steps read and write cache there, which a replay of the client's requests cannot see."""
    server_side_matched: int = 0

    @property
    def match_rate(self) -> float | None:
        return self.calls_matched / self.calls_compared if self.calls_compared else None

    @property
    def client_match_rate(self) -> float | None:
        """Match rate on calls without server-side tool iterations."""
        compared = self.calls_compared - self.server_side_compared
        matched = self.calls_matched - self.server_side_matched
        return matched / compared if compared else None

    @property
    def rule_breaking(self) -> list[Mismatch]:
        return [m for m in self.mismatches if m.rule is not None]


def _used_caching(trace: CassetteTrace) -> bool:
    return any(
        (call.usage is not None and (call.usage.cache_read or call.usage.cache_write))
        for call in trace.calls
    )


def _broken_rule(call: Call, predicted: CacheResult, limit: float) -> tuple[str, str] | None:
    """The rule whose enforcement explains the difference: (rule, sentence)."""
    usage = call.usage
    assert usage is not None
    notes = {note.rule: note.message for note in predicted.rules}
    if usage.cache_read > predicted.read + limit:
        for rule in _READ_RULES:
            if rule in notes:
                return rule, f"recorded read of {usage.cache_read:,} tokens: {notes[rule]}"
    written = predicted.write_5m + predicted.write_1h
    if usage.cache_write > written + limit and "minimum" in notes:
        return "minimum", f"recorded write of {usage.cache_write:,} tokens: {notes['minimum']}"
    split = abs(usage.cache_write_1h - predicted.write_1h) > limit
    if split and "ttl-order" in notes:
        return "ttl-order", f"recorded 1h write of {usage.cache_write_1h:,}: {notes['ttl-order']}"
    if usage.cache_write > written + limit and "breakpoints" in notes:
        return "breakpoints", notes["breakpoints"]
    return None


def _reason(call: Call, predicted: CacheResult, engine: Engine, granularity: int) -> str:
    usage = call.usage
    assert usage is not None
    if call.server_tools:
        steps = sorted(set(call.server_tools))
        return (
            f"server-side tool iterations ({', '.join(steps)}) re-read and extend the prompt "
            f"inside the request: ~{engine.hidden(call):,} prompt tokens the client never sent"
        )
    server_side = _SERVER_SIDE.intersection(call.extra)
    if server_side:
        return f"server-side additions to the prompt ({', '.join(sorted(server_side))})"
    if call.provider == "openai" and usage.cache_read % granularity:
        return (
            f"recorded read of {usage.cache_read:,} tokens is not a multiple of {granularity}: "
            "OpenAI's documented 128-token granularity does not produce it"
        )
    if predicted.read and not usage.cache_read and call.provider == "openai":
        return "the provider did not reuse a prefix it had cached (OpenAI caching is best-effort)"
    if predicted.read and not usage.cache_read:
        return "the simulator found a live entry the provider did not use (TTL or concurrency)"
    if usage.cache_read and not predicted.read:
        return "recorded read has no earlier entry in the trace the simulator could match"
    if usage.cache_write and call.provider == "openai":
        return "OpenAI write boundary (GPT-5.6+) is approximated"
    nothing = not (predicted.read or predicted.write_5m or predicted.write_1h)
    if usage.cache_write > tolerance(usage.prompt_total) and nothing:
        return (
            f"recorded write of {usage.cache_write:,} tokens where the simulator writes none: "
            "no breakpoint in the request caches that prefix (one added on the way, by a "
            "proxy or an SDK, is not in the recording)"
        )
    if abs(usage.cache_write_1h - predicted.write_1h) > tolerance(usage.prompt_total):
        return (
            f"the 5m/1h split differs: recorded {usage.cache_write_5m:,} / "
            f"{usage.cache_write_1h:,}, predicted {predicted.write_5m:,} / {predicted.write_1h:,}"
        )
    gap = predicted.read - usage.cache_read
    if abs(gap) > usage.prompt_total * _BROKEN_SHARE:
        where = "earlier" if gap > 0 else "later"
        return (
            f"the provider's prefix broke {where} than the request shows ({abs(gap):,} tokens, "
            "more than an estimate misses): the server changed or kept history the request "
            "does not show (thinking or reasoning it drops, a stored conversation)"
        )
    return "prefix token estimate differs from the recorded boundary"


_BROKEN_SHARE = 0.2
"""A read this far (share of the prompt) from the simulated one is not a token estimate's
miss (the prefix estimate's p90 is a few percent) but a prefix that breaks elsewhere."""


def _matches(call: Call, predicted: CacheResult) -> bool:
    usage = call.usage
    assert usage is not None
    limit = tolerance(usage.prompt_total)
    return (
        abs(predicted.read - usage.cache_read) <= limit
        and abs(predicted.write_5m - usage.cache_write_5m) <= limit
        and abs(predicted.write_1h - usage.cache_write_1h) <= limit
    )


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
        matched = _matches(call, predicted)
        report.calls_compared += 1
        report.calls_matched += matched
        if not warm:
            report.unseeded_compared += 1
            report.unseeded_matched += matched
        tally = counts.setdefault(call.provider, [0, 0])
        tally[0] += 1
        tally[1] += matched
        if call.server_tools:
            report.server_side_compared += 1
            report.server_side_matched += matched
        if matched:
            continue
        broken = (
            None
            if call.server_tools
            else _broken_rule(call, predicted, tolerance(usage.prompt_total))
        )
        granularity = engine.rules.openai_granularity(call.model, call.recorded_at)
        rule, reason = broken if broken else (None, _reason(call, predicted, engine, granularity))
        if rule is not None:
            reason = f"breaks the {RULE_NAMES[rule]} rule: {reason}"
        report.mismatches.append(
            Mismatch(
                call.provenance,
                call.priced_model,
                usage.cache_read,
                usage.cache_write,
                predicted.read,
                written,
                reason,
                recorded_write_1h=usage.cache_write_1h,
                predicted_write_1h=predicted.write_1h,
                rule=rule,
            )
        )
    report.by_provider = {name: (c, m) for name, (c, m) in sorted(counts.items())}
    return report
