"""Run a variant over recorded traces and bill the result like the provider would.

1. Strategies transform each trace, in the variant's order.
2. Every request is metered: untouched calls keep their recorded prompt total; transformed
   ones are anchored on it (recorded + calibrated difference); added calls are estimated.
3. Caching is simulated over the trace in time order with the provider's rules, seeded with
   any warm cache the recording itself shows (a call that reads cache its trace never wrote,
   which no caching rule explains).
4. Anchored on the bill: a trace the variant changes is compared with the same trace as
   recorded, simulated the same way. A call whose simulated usage is the same in both keeps
   its recorded usage in both; the others (``resimulated``) are billed as recorded in the
   baseline and, in the variant, as recorded plus the change between the two simulations
   (:mod:`costsim.engine.anchoring`): what the replay of the recording misses is neither
   the strategy's saving nor part of the variant's cost.

The identity variant (no strategies) returns the recorded usage, field by field.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from decimal import Decimal
from pathlib import Path

from costsim.cache.prefix import Prefix, PrefixBuilder
from costsim.cache.rules import CacheRules, default_rules
from costsim.cache.simulators import SIMULATORS, CacheResult, CacheSimulator
from costsim.engine.anchoring import anchored, billed_tier, estimated_as_replayed
from costsim.engine.results import (
    SimulatedCall,
    TraceResult,
    VariantResult,
    WarmStart,
    trace_cost,
)
from costsim.engine.warm import WarmSeed, infer_warm, lost_warm_start, seed_warm, timeline
from costsim.metering.meter import Meter
from costsim.model import Call, CassetteTrace, Provenance, Usage, UsageSource, split_prompt
from costsim.model.sharing import distinct_path_runs
from costsim.strategies.registry import AgentSpec, Context, Variant, get_strategy
from costsim.strategies.trace import Event, SimCall, SimTrace

__all__ = ["Engine", "SimulatedCall", "TraceResult", "VariantResult", "WarmStart"]


def _cache_events(notes: dict[str, dict[Provenance, None]]) -> list[Event]:
    """The cache simulator's notes on a trace, each once: where it first applied, and on how
    many calls when more than one."""
    events = []
    for note, calls in notes.items():
        where = list(calls)
        text = note if len(where) == 1 else f"{note} ({len(where)} calls)"
        events.append(Event("cache", "note", text, where[0]))
    return events


class Engine:
    """Simulates variants of a set of recorded traces; one engine per analysis run."""

    def __init__(
        self,
        traces: Iterable[CassetteTrace],
        *,
        meter: Meter | None = None,
        rules: CacheRules | None = None,
        tags: dict[str, str] | None = None,
        agents: dict[str, AgentSpec] | None = None,
    ) -> None:
        self.traces = list(traces)
        self.meter = meter or Meter.for_traces(self.traces)
        self.rules = rules or default_rules()
        self.context = Context(
            self.meter, self.rules, tags or {}, agents or {}, self.evaluate, self.layout, self.warm
        )
        self._prefixes = PrefixBuilder(self.meter.serialiser)
        self._warm: dict[Path, list[WarmSeed]] | None = None
        self._by_path = {trace.path: trace for trace in self.traces}
        self._replayed: dict[Path, TraceResult] = {}
        self._hidden: dict[int, tuple[Call, int]] = {}
        self._estimates: dict[Path, dict[int, SimulatedCall]] = {}
        self._recorded_costs: dict[Path, Decimal | None] = {}
        # per trace, its calls as recorded: one list for every run that leaves it alone
        self._as_recorded: dict[Path, tuple[CassetteTrace, list[SimulatedCall]]] = {}

    def by_distinct_paths(self) -> list[Engine]:
        """This engine; or, when traces share a path (a file named twice), one engine per run
        of traces with distinct paths, in order, alike otherwise: an engine knows traces by
        path."""
        runs = distinct_path_runs(self.traces)
        if len(runs) == 1:
            return [self]
        tags, agents = dict(self.context.tags), dict(self.context.agents)
        return [
            Engine(r, meter=self.meter, rules=self.rules, tags=tags, agents=agents) for r in runs
        ]

    # --- variants ------------------------------------------------------------------------

    def run(
        self, variant: Variant, *, requests: Mapping[Path, Sequence[Call]] | None = None
    ) -> VariantResult:
        """Simulate ``variant`` on every trace.

        ``requests`` replaces a trace's recorded requests (one per recorded call, in order)
        before the variant applies: what the code sends now, while the cassette replays what
        it recorded. A replaced request is metered like any transformed one: its recorded
        prompt plus the calibrated difference, through the cache simulator.
        """
        if variant.identity and not requests:
            recorded = [self.recorded(trace) for trace in self.traces]
            return VariantResult(variant, recorded, list(recorded))
        results, baselines = [], []
        for trace in self.traces:
            sim = SimTrace.recorded(trace)
            if requests and trace.path in requests:
                sim = sim.with_requests(requests[trace.path])
            events: list[Event] = []
            for step in variant.steps:
                sim, step_events = get_strategy(step.strategy).apply(sim, step.params, self.context)
                events.extend(step_events)
            unchanged = len(sim.calls) == len(trace.calls) and all(
                item.origin is call
                and item.output is None
                and (item.call is call or item.call == call)
                for item, call in zip(sim.calls, trace.calls, strict=True)
            )
            # A trace the variant leaves alone (the same requests, even as new objects) keeps
            # its recorded numbers, field by field.
            if unchanged:  # the recording's calls, the same list in every such run
                result = baseline = TraceResult(trace.path, self.recorded(trace).calls)
            else:
                result, baseline = self._anchored(trace, self._simulate(trace, sim))
            result.events[:0] = events
            results.append(result)
            baselines.append(baseline)
        return VariantResult(variant, results, baselines, sent=bool(requests))

    def replayed(self, trace: CassetteTrace) -> TraceResult:
        """``trace`` as recorded, simulated through the cache (its warm starts seeded)."""
        if trace.path not in self._replayed:
            self._replayed[trace.path] = self._simulate(trace, SimTrace.recorded(trace))
        return self._replayed[trace.path]

    def _anchored(
        self, trace: CassetteTrace, simulated: TraceResult
    ) -> tuple[TraceResult, TraceResult]:
        """The variant and its baseline, the recording: calls billed alike in both keep their
        recorded usage in both; the others are billed as recorded in the baseline and as
        recorded plus the simulated change in the variant (:mod:`costsim.engine.anchoring`),
        each with its simulated usage beside it."""
        replayed = {id(item.sim.origin): item for item in self.replayed(trace).calls}
        billed = self._billed(trace)
        same: set[int] = set()
        calls: list[SimulatedCall] = []
        for item in simulated.calls:
            origin = item.sim.origin
            twin = replayed.get(id(origin)) if origin is not None else None
            recorded = self._recorded_usage(origin, billed) if origin is not None else None
            if (
                origin is not None
                and twin is not None
                and item.sim.output is None
                and (item.call is origin or item.call == origin)
                and item.usage == twin.usage
            ):
                same.add(id(origin))
                calls.append(dataclasses.replace(item, usage=recorded, resimulated=False))
            elif (
                twin is not None
                and recorded is not None
                and item.usage is not None
                and twin.usage is not None
            ):
                charged = anchored(recorded, item.usage, twin.usage)
                calls.append(dataclasses.replace(item, usage=charged, simulated=item.usage))
            else:
                calls.append(item)
        baseline = [
            dataclasses.replace(
                item, usage=self._recorded_usage(item.call, billed), resimulated=False
            )
            if id(item.sim.origin) in same or not item.resimulated
            else dataclasses.replace(
                item, usage=self._recorded_usage(item.call, billed), simulated=item.usage
            )
            for item in self.replayed(trace).calls
        ]
        return (
            TraceResult(trace.path, calls, simulated.events, simulated.warm),
            TraceResult(trace.path, baseline, [], simulated.warm),
        )

    def evaluate(self, sim: SimTrace) -> tuple[Decimal, Decimal] | None:
        """What ``sim`` (a variant of one of the engine's traces) costs, billed as
        :meth:`run` bills it, and the recorded cost; None when a call cannot be priced."""
        trace = self._by_path.get(sim.path)
        if trace is None:
            return None
        result, _ = self._anchored(trace, self._simulate(trace, sim))
        if trace.path not in self._recorded_costs:  # a policy evaluates many placements
            self._recorded_costs[trace.path] = trace_cost(self.recorded(trace))
        cost, recorded = trace_cost(result), self._recorded_costs[trace.path]
        if cost is None or recorded is None:
            return None
        return cost, recorded

    def layout(self, sim: SimCall) -> Prefix:
        """The cache prefix of a simulated request: block identities and token positions."""
        return self.prefix(sim, self.prompt_total(sim)[0])

    def _usage_of(self, call: Call) -> Usage | None:
        """The call's recorded usage, or its plain estimate (what a request's prompt is
        anchored on); :meth:`recorded` bills an estimated call with its cache split too."""
        if call.usage is not None:
            return call.usage
        return None if call.errored else self.meter.estimated_usage(call)

    def _billed(self, trace: CassetteTrace) -> dict[int, SimulatedCall]:
        if trace.path not in self._estimates:  # its calls without usage, as the replay bills them
            some = any(call.usage is None and not call.errored for call in trace.calls)
            self._estimates[trace.path] = (
                estimated_as_replayed(self.replayed(trace)) if some else {}
            )
        return self._estimates[trace.path]

    def _recorded_usage(self, call: Call, billed: Mapping[int, SimulatedCall]) -> Usage | None:
        item = billed.get(id(call))
        return item.usage if item is not None else self._usage_of(call)

    def recorded(self, trace: CassetteTrace) -> TraceResult:
        """``trace`` as recorded: each call's recorded usage; a call without one estimated,
        its prompt split as the provider's caching rules split it among the trace's
        requests (it used to be billed wholly uncached)."""
        hit = self._as_recorded.get(trace.path)
        if hit is None or hit[0] is not trace:
            billed = self._billed(trace)
            made = (
                billed.get(id(c)) or SimulatedCall(SimCall(c, c), self._usage_of(c))
                for c in trace.calls
            )
            hit = self._as_recorded[trace.path] = (trace, list(made))
        return TraceResult(trace.path, hit[1])

    # --- metering a simulated trace --------------------------------------------------------

    def prompt_total(self, sim: SimCall) -> tuple[int, bool]:
        """(prompt total, estimated?) of a simulated request."""
        origin = sim.origin
        base = self._usage_of(origin) if origin is not None else None
        if origin is None or base is None:
            return round(self.meter.estimate_prompt(sim.call)), True
        total = self.meter.transformed_prompt(origin, sim.call, base.prompt_total)
        return total, base.estimated or sim.call is not origin

    def _anchor(self, sim: SimCall) -> int | None:
        origin = sim.origin
        if origin is None or sim.call is not origin or origin.usage is None:
            return None
        boundary = origin.usage.cache_read + origin.usage.cache_write
        return boundary or None

    def hidden(self, origin: Call | None) -> int:
        """Prompt tokens of a recorded call that server-side tool iterations added: its
        recorded prompt minus the calibrated estimate of what the client sent."""
        if origin is None or origin.usage is None or not origin.server_tools:
            return 0
        hit = self._hidden.get(id(origin))
        if hit is not None and hit[0] is origin:
            return hit[1]
        sent = round(self.meter.estimate_prompt(origin))
        hidden = max(0, origin.usage.prompt_total - sent)
        self._hidden[id(origin)] = (origin, hidden)
        return hidden

    def prefix(self, sim: SimCall, total: int) -> Prefix:
        origin = sim.origin
        hidden = min(self.hidden(origin), total)
        if origin is None or sim.call is origin or origin.usage is None:
            return self._prefixes.build(sim.call, total, anchor=self._anchor(sim), hidden=hidden)
        recorded = self._prefixes.build(
            origin,
            origin.usage.prompt_total,
            anchor=self._anchor(SimCall(origin, origin)),
            hidden=hidden,
        )
        return self._prefixes.build(
            sim.call, total, reference=recorded, origin=origin, hidden=hidden
        )

    def _simulate(self, trace: CassetteTrace, sim: SimTrace) -> TraceResult:
        times = self._sim_times(trace, sim)
        warm: dict[int, list[tuple[str, int, float, str]]] = {}  # by recorded call
        for position, key, tokens, seeded_at, ttl in self.warm_starts().get(trace.path, []):
            warm.setdefault(id(trace.calls[position]), []).append((key, tokens, seeded_at, ttl))
        caches: dict[str, CacheSimulator] = {}
        calls: list[SimulatedCall] = []
        notes: dict[str, dict[Provenance, None]] = {}
        previous: float | None = None
        for item, at in zip(sim.calls, times, strict=True):
            if previous is not None and at - previous > self.rules.session_gap_seconds:
                caches = {}  # recorded again later: a new cache world
            previous = at
            if item.origin is not None and item.origin.errored:
                calls.append(SimulatedCall(item, None))  # a recorded error stays unbilled
                continue
            total, estimated = self.prompt_total(item)
            prefix = self.prefix(item, total)
            cache = caches.get(item.call.provider)
            if cache is None:
                cache = caches[item.call.provider] = SIMULATORS[item.call.provider](self.rules)
            seeds, lost = warm.pop(id(item.origin), []) if item.origin else [], None
            for seed in seeds:  # what the recording shows was cached before this call
                lost = seed_warm(cache, item, prefix, seed, (self.prefix, self.rules))
            result = cache.request(prefix, model=item.call.model, at=at, when=item.call.recorded_at)
            if seeds and (
                lost := lost_warm_start(item, result.read, self.rules) if lost is None else lost
            ):
                notes.setdefault(lost, {})[item.call.provenance] = None
            for note in result.notes:  # a call that breaks a rule twice counts once
                notes.setdefault(note, {})[item.call.provenance] = None
            usage = self._usage(item, total, estimated, result)
            calls.append(SimulatedCall(item, usage, result, True, prefix.hidden))
        return TraceResult(trace.path, calls, _cache_events(notes))

    def _sim_times(self, trace: CassetteTrace, sim: SimTrace) -> list[float]:
        recorded = dict(
            zip(
                (id(c) for c in trace.calls),
                timeline(trace.calls, self.rules.default_gap_seconds),
                strict=True,
            )
        )
        times: list[float] = []
        for item in sim.calls:
            at = recorded.get(id(item.origin)) if item.origin is not None else None
            if at is None or (times and at <= times[-1]):
                at = (times[-1] + 0.001) if times else 0.0
            times.append(at)
        return times

    def _usage(self, item: SimCall, total: int, estimated: bool, cache: CacheResult) -> Usage:
        origin_usage = self._usage_of(item.origin) if item.origin is not None else None
        if item.output is not None:
            output, reasoning = item.output, item.reasoning
        elif origin_usage is not None:
            output, reasoning = origin_usage.output, origin_usage.reasoning
        else:
            output, reasoning = self.meter.estimate_output(item.call), None
        split = split_prompt(total, cache.read, cache.write_1h, cache.write_5m)
        return Usage(
            uncached_input=split.uncached_input,
            cache_read=split.cache_read,
            cache_write_5m=split.cache_write_5m,
            cache_write_1h=split.cache_write_1h,
            output=output,
            reasoning=reasoning,
            source=UsageSource.ESTIMATED if estimated else UsageSource.RECORDED,
            web_searches=origin_usage.web_searches if origin_usage is not None else 0,
            base_tier=origin_usage is not None and origin_usage.base_tier,
            tier=billed_tier(item, origin_usage),
        )

    # --- warm starts and fidelity ------------------------------------------------------------

    def warm_starts(self) -> dict[Path, list[WarmSeed]]:
        """Cache entries each recording shows were warm before its calls wrote them."""
        if self._warm is None:
            self._warm = {}
            for trace in self.traces:
                seeds = infer_warm(trace, self.rules, self.prefix)
                if seeds:
                    self._warm[trace.path] = seeds
        return self._warm

    def warm(self, path: Path) -> dict[int, frozenset[str]]:
        """The cache keys the recording of ``path`` shows warm before each of its calls, by
        recorded call (``id``: the engine holds its traces)."""
        found: dict[int, set[str]] = {}
        calls = self._by_path[path].calls if path in self._by_path else []
        for position, key, *_ in self.warm_starts().get(path, []):
            found.setdefault(id(calls[position]), set()).add(key)
        return {call: frozenset(keys) for call, keys in found.items()}

    def check(self) -> list[tuple[Call, CacheResult, bool]]:
        """Simulate every recorded trace as recorded: (call, predicted, warm-seeded) per call."""
        rows: list[tuple[Call, CacheResult, bool]] = []
        warm = self.warm_starts()
        for trace in self.traces:
            seeded = {id(trace.calls[position]) for position, *_ in warm.get(trace.path, [])}
            result = self.replayed(trace)
            for item in result.calls:
                if item.cache is not None:
                    rows.append((item.call, item.cache, id(item.call) in seeded))
        return rows
