"""Coverage of costsim's p90 dollar bands on held-out folds of real recordings.

      python benchmarks/bench_bands.py [FOLDER]

FOLDER defaults to ../shared/corpus. Folds are sources (a cassette's first folder under
FOLDER: the project it came from). For each fold, the token estimator is fitted on the other
sources, its error table measured on them (leave-one-source-out within them) and the output
estimate's error measured on them; then, on the held-out source:

- whole calls: the recorded usage is hidden, every call is estimated (prompt from the request,
  output from the response text) and priced; the band is the one costsim prints;
- increments: each call of a conversation is estimated from the call before it (its recorded
  prompt plus the calibrated difference), the way a strategy's changed request is;
- cache splits: recordings that used caching are re-simulated as recorded (the cache split
  hidden, the prompt total kept) and priced with the band of the estimated prefix positions.

It prints, for each, how often the recorded value falls inside the printed 90% band (the
target is at least 90%), per call and per cassette, and the output-error figures measured on
the whole folder (the ones shipped in ``costsim.metering.error_table.OUTPUT_ERRORS``).
"""

from __future__ import annotations

import dataclasses
import itertools
import statistics
import sys
from collections import defaultdict
from collections.abc import Iterable
from decimal import Decimal
from pathlib import Path

from costsim.analysis.bands import call_terms, changed_prompt_error
from costsim.analysis.report import load_traces
from costsim.analysis.spread import Spread
from costsim.engine import Engine, Variant
from costsim.metering.error_table import ErrorTable, RelativeError
from costsim.metering.evaluate import _is_continuation, calibrate, first_folder
from costsim.metering.meter import Meter
from costsim.model import CassetteTrace, ReasoningBlock, RedactedThinkingBlock, ThinkingBlock
from costsim.pricing.ledger import meter as price_call

ROOT = Path(__file__).resolve().parents[1]
_THINKING = (ThinkingBlock, RedactedThinkingBlock, ReasoningBlock)


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[int(q * (len(ordered) - 1))] if ordered else 0.0


def output_errors(traces: Iterable[CassetteTrace]) -> dict[tuple[str, bool], RelativeError]:
    """|estimated - recorded| / recorded output, per flavour and whether the response thinks."""
    estimator = Meter()
    errors: dict[tuple[str, bool], list[float]] = defaultdict(list)
    for trace in traces:
        for call in trace.calls:
            usage = call.usage
            if usage is None or usage.estimated or not usage.output or call.errored:
                continue
            thinks = any(isinstance(b, _THINKING) for b in call.response)
            estimate = estimator.estimate_output(call)
            errors[(call.flavour.shape.value, thinks)].append(
                abs(estimate - usage.output) / usage.output * 100
            )
    return {
        key: RelativeError(
            statistics.median(v), _p(v, 0.9), len(v), key[0], str(key[1]), "measured"
        )
        for key, v in errors.items()
        if len(v) >= 5
    }


class Tally:
    def __init__(self, unit: str = "cost") -> None:
        self.unit = unit
        self.inside = 0
        self.total = 0
        self.widths: list[float] = []

    def add(self, recorded: Decimal, estimate: Decimal, spread: Spread) -> None:
        """A recorded amount against the estimate and its range (below, above)."""
        self.total += 1
        self.inside += -spread.below <= recorded - estimate <= spread.above
        if recorded:
            self.widths.append(float((spread.below + spread.above) / 2 / recorded) * 100)

    def line(self, name: str) -> str:
        rate = self.inside / self.total if self.total else 0.0
        width = statistics.median(self.widths) if self.widths else 0.0
        return (
            f"  {name:<34} {self.inside:>5} of {self.total:<5} inside ({rate:6.1%}); "
            f"median half-width (mean of both sides) {width:.0f}% of the recorded {self.unit}"
        )


def _fold_meter(train: list[CassetteTrace], root: Path) -> Meter:
    report = calibrate(train, group=first_folder(root))
    fitted = Meter(report.families)
    fitted.errors = ErrorTable({}, {}).updated(report.cells)
    fitted.output_errors = output_errors(train)
    return fitted


def _hidden(trace: CassetteTrace) -> CassetteTrace:
    calls = tuple(dataclasses.replace(c, usage=None, usage_hint=None) for c in trace.calls)
    return dataclasses.replace(trace, calls=calls)


def whole_calls(test: list[CassetteTrace], fitted: Meter, calls: Tally, cassettes: Tally) -> None:
    for trace in test:
        engine = Engine([_hidden(trace)], meter=fitted)
        result = engine.run(Variant("as recorded"))
        recorded_sum = estimate_sum = Decimal(0)
        spread_sum = Spread()
        usable = True
        for original, item in zip(trace.calls, result.traces[0].calls, strict=True):
            if original.usage is None or original.usage.estimated or original.errored:
                usable = False
                continue
            recorded = price_call(original).price
            estimated = price_call(item.call, usage=item.usage).price
            if recorded is None or estimated is None:
                usable = False
                continue
            if recorded.amount is None or estimated.amount is None:
                usable = False
                continue
            spread = Spread.total(call_terms(item, fitted).values())
            calls.add(recorded.amount, estimated.amount, spread)
            recorded_sum += recorded.amount
            estimate_sum += estimated.amount
            spread_sum += spread
        if usable and trace.calls:
            cassettes.add(recorded_sum, estimate_sum, spread_sum)


def increments(test: list[CassetteTrace], fitted: Meter, tally: Tally) -> None:
    for trace in test:
        calls = [c for c in trace.calls if c.usage is not None and not c.usage.estimated]
        for before, after in itertools.pairwise(calls):
            if (before.model, before.flavour) != (after.model, after.flavour):
                continue
            assert before.usage is not None
            assert after.usage is not None
            if after.usage.prompt_total <= before.usage.prompt_total:
                continue
            if not _is_continuation(before, after):  # the next turn of the same conversation
                continue
            estimate = before.usage.prompt_total + fitted.delta(before, after)
            error = changed_prompt_error(fitted, before, after)  # the band costsim prints
            tally.add(
                Decimal(after.usage.prompt_total),
                Decimal(str(round(estimate, 3))),
                Spread.even(Decimal(str(round(error, 3)))),
            )


def cache_splits(test: list[CassetteTrace], fitted: Meter, tally: Tally, client: Tally) -> None:
    cached = [
        t
        for t in test
        if any(c.usage and (c.usage.cache_read or c.usage.cache_write) for c in t.calls)
    ]
    if not cached:
        return
    engine = Engine(cached, meter=fitted)
    for trace in cached:
        for item in engine.replayed(trace).calls:
            origin = item.sim.origin
            if origin is None or origin.usage is None or item.usage is None:
                continue
            usage = origin.usage
            if not (usage.cache_read or usage.cache_write or item.usage.cache_read):
                continue
            recorded = price_call(origin).price
            simulated = price_call(item.call, usage=item.usage).price
            if recorded is None or simulated is None:
                continue
            if recorded.amount is None or simulated.amount is None:
                continue
            spread = Spread.total(call_terms(item, fitted).values())
            tally.add(recorded.amount, simulated.amount, spread)
            if not origin.server_tools:
                client.add(recorded.amount, simulated.amount, spread)


def main(argv: list[str]) -> None:
    folder = (Path(argv[0]) if argv else ROOT.parent / "shared" / "corpus").resolve()
    traces, _ = load_traces([folder], lenient=True)
    group = first_folder(folder)
    sources = sorted({group(t.path) for t in traces})
    tallies = {name: Tally() for name in ("calls", "cassettes", "cache", "client")}
    tallies["increments"] = Tally("prompt")
    for source in sources:
        train = [t for t in traces if group(t.path) != source]
        test = [t for t in traces if group(t.path) == source]
        fitted = _fold_meter(train, folder)
        whole_calls(test, fitted, tallies["calls"], tallies["cassettes"])
        increments(test, fitted, tallies["increments"])
        cache_splits(test, fitted, tallies["cache"], tallies["client"])
        print(f"fold {source}: {len(test)} cassettes held out", file=sys.stderr)
    print(f"p90 band coverage on {len(sources)} held-out sources of {folder.name} (target 90%):")
    print(tallies["calls"].line("whole calls, usage hidden"))
    print(tallies["cassettes"].line("whole cassettes, usage hidden"))
    print(tallies["increments"].line("increments (next turn of a chat)"))
    print(tallies["cache"].line("cache splits re-simulated"))
    print(tallies["client"].line("  without server-side tools"))
    print("\noutput-estimate error measured on the whole folder (median / p90 %, calls):")
    for (flavour, thinks), error in sorted(output_errors(traces).items()):
        kind = "thinking" if thinks else "plain"
        print(f"  {flavour:<20} {kind:<9} {error.median:6.1f} {error.p90:8.1f} {error.calls:6}")


if __name__ == "__main__":
    main(sys.argv[1:])
