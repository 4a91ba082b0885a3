"""The public API for test-runner integrations (costsim's own pytest plugin uses only this):
read the calls a test replays through vcrpy, meter them as recorded or as sent, and keep
per-test figures, budgets and baselines (and the run's embeddings requests, priced beside
them: :class:`EmbeddingTotals`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal
from pathlib import Path
from typing import Any

from costsim.analysis.bands import run_terms, variant_bands
from costsim.analysis.baseline import (
    TestCost,
    compare_baselines,
    cost_change,
    load_baseline,
    save_baseline,
)
from costsim.analysis.budgets import budget_failures
from costsim.analysis.drift import Difference, differences, summary
from costsim.analysis.embeddings import EmbeddingTotals
from costsim.analysis.spread import NONE, Spread, difference, difference_terms
from costsim.api._replayed import read_vcr_call, read_vcr_interaction
from costsim.api.gates import TOKEN_METRICS, Budget, parse_tolerances, tool_table
from costsim.cache.rules import default_rules
from costsim.engine import Engine, TraceResult
from costsim.io.files import write_atomic
from costsim.metering.meter import Meter
from costsim.metering.saved import read_calibration
from costsim.model import Call, CassetteTrace, Usage
from costsim.pricing.ledger import MeteredCall, Totals, meter
from costsim.pricing.money import amount_text
from costsim.providers.chains import chained
from costsim.strategies.registry import Variant
from costsim.strategies.syntax import parse_variants
from costsim.strategies.trace import said_of_the_run

__all__ = [
    "TOKEN_METRICS",
    "Budget",
    "Difference",
    "EmbeddingTotals",
    "MeteredCall",
    "TestCost",
    "TestMeter",
    "Totals",
    "Variant",
    "WhatIfCost",
    "amount_text",
    "budget_failures",
    "compare_baselines",
    "cost_change",
    "differences",
    "drift_summary",
    "load_baseline",
    "parse_strategies",
    "parse_tolerances",
    "read_calibration",
    "read_vcr_call",
    "read_vcr_interaction",
    "save_baseline",
    "tool_table",
    "write_atomic",
]

drift_summary = summary


def parse_strategies(text: str) -> list[Variant]:
    """``caching:ttl=1h, truncation & caching`` -> one what-if variant per comma-separated
    entry, named by its text.

    The strategy syntax costsim prints and ``costsim simulate -s`` reads (see
    :mod:`costsim.strategies.syntax`): a ``key=value`` part with no strategy name continues the
    previous entry's options, ``a & b`` stacks strategies in one variant. Unknown names and bad
    options raise ConfigError.
    """
    return parse_variants(text)


def _what_if_cost(
    variant: Totals,
    band: Spread,
    change: Spread,
    result: TraceResult,
    baseline: TraceResult,
    estimated: bool,
    own: Totals,
) -> WhatIfCost:
    """A test's cost under a variant, as the engine bills it: the test's recorded calls,
    each changed one plus the change the strategy makes (:mod:`costsim.engine.anchoring`),
    so a variant that changes nothing costs what the test did, to the digit. A call without
    a price counts as unpriced, never as $0; ``own``: the test's own cost, as billed."""
    unpriced = variant.unpriced_calls + variant.unmetered_calls
    diverged = sum(1 for event in result.events if event.kind == "divergence")
    changed = Totals.of(meter(i.call, usage=i.usage) for i in baseline.calls if i.resimulated)
    touched = None if changed.hidden_output_calls else changed.cost_usd
    return WhatIfCost(
        variant.priced_cost,
        unpriced,
        band,
        change,
        diverged,
        estimated,
        touched,
        variant.change_from(own),
    )


def _drifted(recorded: Sequence[Call], sent: Sequence[Call]) -> bool:
    """Whether a test sent other requests than it recorded (its cost is then what it sent)."""
    return any(new is not old for new, old in zip(sent, recorded, strict=True))


def _with_chains(
    recorded: Sequence[Call],
    sent: Sequence[Call],
    seen: tuple[dict[str, Call], dict[str, Call]] | None = None,
) -> tuple[list[Call], list[Call]]:
    """A test's recorded and sent requests, each that continues a stored response given the
    conversation it continues (as a cassette's are when loaded): the cache simulation sees
    the prefix the server saw. ``seen``: the responses earlier tests of the run stored
    (recorded, sent), for a conversation one test continues from another. A sent request
    whose chained form is the recorded one's stays that very call (it did not drift); one
    whose history drifted, did."""
    before_recorded, before_sent = seen if seen is not None else ({}, {})
    chained_recorded = chained(recorded, before_recorded)
    chained_sent = chained(sent, before_sent)
    return chained_recorded, [
        old if new is old or (new is not s and new == old) else new
        for new, old, s in zip(chained_sent, chained_recorded, sent, strict=True)
    ]


def _trace(position: int, calls: Sequence[Call]) -> CassetteTrace:
    """A test's calls as one trace, in the order it made them (tests are not files: the
    trace's path is the test's position)."""
    return CassetteTrace(Path(str(position)), tuple(calls), 0, 0)


@dataclass(frozen=True, slots=True)
class WhatIfCost:
    """A test's simulated cost under one what-if variant: the priced part, how many calls
    have no price (their cost is unknown, never $0), and how far (p90) the simulated cost may
    lie below and above (:class:`~costsim.analysis.spread.Spread`, summed over tests)."""

    priced: Decimal
    unpriced_calls: int = 0
    spread: Spread = NONE
    change: Spread = NONE
    """How far (p90) the change from the test's own cost may lie below and above the change
    shown: what ``compare`` says of a variant's Δ. The estimates the test's cost and the
    what-if share move both alike and leave it; a strategy that changes nothing has none."""
    divergences: int = 0
    """Calls whose recorded answer the variant may not reproduce (a call routed to a smaller
    model that answered with tools, a cut the answer quotes), as ``compare`` counts them."""
    change_estimated: bool = False
    """Something behind the change was simulated (its band may round to nothing); False: the
    change is exact (a re-pricing of recorded usage, or no change at all)."""
    touched: Decimal | None = None
    """What the calls the variant bills differently cost as the test's cost bills them: the
    most it can save (compare's floor); None when not known, or when some of their output
    is only a lower bound (a cut stream, a reasoning model recorded without usage)."""
    delta: Decimal | None = None
    """The variant's cost minus the test's: known when both are, and when calls without a
    price are billed alike in both (their unknown cost cancels); else None."""

    def __add__(self, other: WhatIfCost) -> WhatIfCost:
        return WhatIfCost(
            self.priced + other.priced,
            self.unpriced_calls + other.unpriced_calls,
            self.spread + other.spread,
            self.change + other.change,
            self.divergences + other.divergences,
            self.change_estimated or other.change_estimated,
            None if self.touched is None or other.touched is None else self.touched + other.touched,
            None if self.delta is None or other.delta is None else self.delta + other.delta,
        )

    @property
    def cost_usd(self) -> Decimal | None:
        return None if self.unpriced_calls else self.priced

    def to_json(self) -> dict[str, Any]:
        cost = self.cost_usd
        low, high = (None, None) if cost is None else self._range(cost)
        return {
            "cost_usd": amount_text(cost),
            "cost_usd_low": amount_text(low),
            "cost_usd_high": amount_text(high),
            "priced_cost_usd": amount_text(self.priced),
            "unpriced_calls": self.unpriced_calls,
            "below_usd": amount_text(self.spread.below),
            "above_usd": amount_text(self.spread.above),
            "change_below_usd": amount_text(self.change.below),
            "change_above_usd": amount_text(self.change.above),
            "divergences": self.divergences,
            "change_exact": not self.change_estimated,
            "touched_cost_usd": amount_text(self.touched),
            "delta_usd": amount_text(self.delta),
        }

    def _range(self, cost: Decimal) -> tuple[Decimal, Decimal]:
        """The p90 range around ``cost`` in its own decimals (at least 6, as money is
        priced), widened to them, never narrowed: ``0.004080`` to ``0.004080``, not to
        ``0.00408000``."""
        exponent = cost.as_tuple().exponent
        step = Decimal(1).scaleb(min(exponent if isinstance(exponent, int) else 0, -6))
        low = max(cost - self.spread.below, Decimal(0)).quantize(step, rounding=ROUND_FLOOR)
        high = (cost + self.spread.above).quantize(step, rounding=ROUND_CEILING)
        return low, high

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> WhatIfCost:
        spread = Spread(Decimal(data.get("below_usd", "0")), Decimal(data.get("above_usd", "0")))
        change = Spread(
            Decimal(data.get("change_below_usd", "0")), Decimal(data.get("change_above_usd", "0"))
        )
        priced, unpriced = Decimal(data["priced_cost_usd"]), int(data["unpriced_calls"])
        diverged, estimated = int(data.get("divergences", 0)), not data.get("change_exact", True)
        touched, delta = data.get("touched_cost_usd"), data.get("delta_usd")
        return cls(
            priced,
            unpriced,
            spread,
            change,
            diverged,
            estimated,
            None if touched is None else Decimal(touched),
            None if delta is None else Decimal(delta),
        )


class TestMeter:
    """Meters the calls of a test run (one per run) with the estimator the CLI uses: the
    shipped calibration, or the one saved at ``calibration`` (``[tool.costsim]``)."""

    __test__ = False  # not a pytest test class

    def __init__(self, calibration: Path | None = None, *, warm: str = "steady") -> None:
        self._meter: Meter | None = None
        self.calibration = calibration
        self.rules = default_rules().with_warm(warm)
        """Warm starts of drifted requests (and of what-ifs): ``steady`` or ``first``."""

    @property
    def estimator(self) -> Meter:
        if self._meter is None:
            report = read_calibration(self.calibration) if self.calibration else None
            self._meter = Meter(report) if report is not None else Meter()
        return self._meter

    def recorded(self, calls: Sequence[Call]) -> list[MeteredCall]:
        """A test's calls as recorded; one that recorded no usage estimated (and flagged),
        its prompt split by the provider's caching rules among the test's requests, as
        ``costsim report`` and compare's baseline estimate it."""
        if all(call.usage is not None or call.errored for call in calls):
            return [meter(call) for call in calls]
        # per cassette, as report splits them (a test may replay several)
        by_file: dict[Path, list[Call]] = {}
        for call in calls:
            by_file.setdefault(call.provenance.path, []).append(call)
        usage: dict[int, Usage | None] = {}
        for position, group in enumerate(by_file.values()):
            trace = _trace(position, group)
            engine = Engine([trace], meter=self.estimator, rules=self.rules)
            usage.update((id(i.call), i.usage) for i in engine.recorded(trace).calls)
        return [meter(call, usage=usage[id(call)]) for call in calls]

    def as_sent(self, recorded: Sequence[Call], sent: Sequence[Call]) -> list[MeteredCall]:
        """A test's calls metered for the requests the code sent: recorded prompt plus the
        calibrated difference, through the cache simulator (output stays as recorded)."""
        if not _drifted(recorded, sent):
            return self.recorded(recorded)
        recorded, sent = _with_chains(recorded, sent)
        trace = _trace(0, recorded)
        engine = Engine([trace], meter=self.estimator, rules=self.rules)
        return engine.run(Variant("as sent"), requests={trace.path: list(sent)}).metered()

    def what_if(
        self,
        tests: Mapping[str, tuple[Sequence[Call], Sequence[Call]]],
        strategies: str,
        *,
        unreadable: Mapping[str, int] | None = None,
        unmetered: Mapping[str, int] | None = None,
        notes: dict[str, list[str]] | None = None,
    ) -> dict[str, dict[str, WhatIfCost]]:
        """Per test (recorded calls, sent calls), each variant's simulated cost.

        ``unreadable``: per test, how many of its calls could not be read. No variant can
        price them, so each counts as unpriced in every variant's cost for its test (a
        partial cost, as the test's own), never as $0. ``unmetered``: per test, how many
        LLM-looking interactions costsim cannot meter it made: made under every variant too,
        their cost unknown there as in the test's own, and the same (the change known).
        ``notes``: filled, per variant, with
        the distinct notes its strategies gave (one that could not act says why: its column
        is then the tests' own cost for a reason, not a saving of nothing).
        """
        costs = self._simulated(tests, strategies, {} if notes is None else notes)
        for name, count in (unreadable or {}).items():
            if count:
                columns = costs.setdefault(name, {})
                for variant in parse_strategies(strategies):
                    known = columns.get(variant.name, WhatIfCost(Decimal(0)))
                    # the variant never saw them: what it would change there is unknown
                    columns[variant.name] = known + WhatIfCost(Decimal(0), count)
        for name, count in (unmetered or {}).items():
            if count:
                columns = costs.setdefault(name, {})
                for variant in parse_strategies(strategies):
                    known = columns.get(variant.name, WhatIfCost(Decimal(0), delta=Decimal(0)))
                    same = WhatIfCost(Decimal(0), count, touched=Decimal(0), delta=Decimal(0))
                    columns[variant.name] = known + same
        return costs

    def _simulated(
        self,
        tests: Mapping[str, tuple[Sequence[Call], Sequence[Call]]],
        strategies: str,
        notes: dict[str, list[str]],
    ) -> dict[str, dict[str, WhatIfCost]]:
        names = list(tests)
        seen: tuple[dict[str, Call], dict[str, Call]] = ({}, {})  # the run's, in test order
        chains = [_with_chains(*tests[name], seen) for name in names]
        traces = [_trace(position, chain[0]) for position, chain in enumerate(chains)]
        engine = Engine(traces, meter=self.estimator, rules=self.rules)
        pairs = list(zip(traces, names, strict=True))
        requests = {trace.path: chain[1] for trace, chain in zip(traces, chains, strict=True)}
        costs: dict[str, dict[str, WhatIfCost]] = {name: {} for name in names}
        # a test whose requests drifted costs what it sent now: its what-if's change is
        # banded against that (against the recording, as compare's Δ, for every other test)
        drifted = [_drifted(*tests[name]) for name in names]
        as_sent = engine.run(Variant("as sent"), requests=requests) if any(drifted) else None
        sent = run_terms(as_sent, self.estimator, None) if as_sent is not None else None
        sent_costs = as_sent.totals_by_trace() if as_sent is not None else {}
        own_costs = engine.run(Variant("as recorded")).totals_by_trace()
        for variant in parse_strategies(strategies):
            result = engine.run(variant, requests=requests)
            said = notes.setdefault(variant.name, [])
            for event in said_of_the_run(result.events, sum(1 for t in traces if t.calls)):
                if event.kind == "note" and event.message not in said:
                    said.append(event.message)
            by_trace = result.totals_by_trace()
            terms = run_terms(result, self.estimator, None)
            bands = variant_bands(result, self.estimator, None, terms).per_cassette
            for index, (trace, name) in enumerate(pairs):
                band, change, estimated = bands.get(trace.path, (NONE, NONE, False))
                if sent is not None and drifted[index]:
                    # both bills move from the recording by their own and the replay's
                    # estimates (the replay's at each one's prices: a routed variant's differ)
                    change = difference(
                        difference_terms(*terms[index]), difference_terms(*sent[index])
                    )
                    estimated = bool(change) or by_trace[trace.path] != sent_costs[trace.path]
                cost = _what_if_cost(
                    by_trace[trace.path],
                    band,
                    change,
                    result.traces[index],
                    result.baselines[index],
                    estimated,
                    (sent_costs if drifted[index] else own_costs)[trace.path],
                )
                # a drifted test's cost is what it sent, not what the recording billed: the
                # recorded calls' cost does not bound its saving
                costs[name][variant.name] = replace(cost, touched=None) if drifted[index] else cost
        return costs
