"""Per-test cost figures, baselines of them, and regression checks.

A baseline is a format-versioned JSON file (``.costsim/NAME.json``) mapping test ids to their
figures. Regression checks are tiny objects whose ``fails()`` returns a sentence or None.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

from costsim.analysis.test_cost import CostChange, TestCost, cost_change
from costsim.analysis.tolerances import METRICS, TOKEN_METRICS, parse_tolerances
from costsim.errors import InputError
from costsim.io.documents import DocumentError, parse_document
from costsim.model.ordering import naturally
from costsim.model.quoting import quoted, short_name
from costsim.pricing.money import money

__all__ = [
    "BASELINE_FORMAT_VERSION",
    "METRICS",
    "Comparison",
    "CostChange",
    "Regression",
    "RegressionCheck",
    "TestCost",
    "compare_baselines",
    "cost_change",
    "load_baseline",
    "parse_tolerances",
    "save_baseline",
]

BASELINE_FORMAT_VERSION = 3
"""2 adds ``priced_cost_usd`` and ``unpriced_calls``, 3 ``unrecognised_calls`` (a test whose
cost is null for calls costsim cannot meter, which a costsim reading version 2 would call
malformed); files of versions 1 and 2 are still read."""
READABLE_VERSIONS = (1, 2, 3)


def save_baseline(path: Path, tests: Mapping[str, TestCost]) -> None:
    from costsim.io.files import write_atomic

    # version 3 only where a test holds calls costsim cannot meter: a costsim reading version
    # 2 reads every other baseline written now
    needs = any(cost.unrecognised_calls for cost in tests.values())
    document = {
        "format_version": BASELINE_FORMAT_VERSION if needs else 2,
        "kind": "costsim.baseline",
        "tests": {name: tests[name].to_json() for name in sorted(tests)},
    }
    write_atomic(path, json.dumps(document, indent=2) + "\n")


def load_baseline(path: Path) -> dict[str, TestCost]:
    """Read a baseline; any problem is an InputError naming the file (one sentence)."""
    document = _document(path)
    if not isinstance(document, dict) or document.get("kind") != "costsim.baseline":
        raise InputError(f"baseline {path}: not a costsim baseline file")
    version = document.get("format_version")
    if type(version) is int and version > BASELINE_FORMAT_VERSION:
        raise InputError(
            f"baseline {path}: format_version {version} was written by a newer costsim (this "
            f"one reads {', '.join(map(str, READABLE_VERSIONS))}); upgrade costsim, or save "
            "the baseline again with this one"
        )
    if type(version) is not int or version not in READABLE_VERSIONS:  # not true, not 1.0
        raise InputError(
            f"baseline {path}: format_version {json.dumps(version)[:40]} is not one costsim "
            f"reads ({', '.join(map(str, READABLE_VERSIONS))}); save the baseline again"
        )
    tests = document.get("tests")
    if not isinstance(tests, dict):
        raise InputError(f"baseline {path}: has no 'tests' mapping")
    figures = {}
    for name, data in tests.items():
        try:
            _check_name(name)
            figures[name] = TestCost.from_json(data, version=version)
        except ValueError as exc:
            raise InputError(
                f"baseline {path}: malformed test entry {quoted(name)}: {exc}"
            ) from None
    return figures


def _document(path: Path) -> Any:
    """The JSON ``path`` holds (UTF-8, or UTF-16 / UTF-32 with a byte order mark)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise InputError(f"baseline {path}: no such file (save one with --costsim-save)") from None
    except OSError as exc:
        raise InputError(f"baseline {path}: cannot be read ({exc.strerror or exc})") from None
    try:
        return parse_document(data)
    except DocumentError as exc:
        raise InputError(f"baseline {path}: {exc}") from None


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def _check_name(name: str) -> None:
    """A test id holds no control character: pytest escapes them in ids, and one written
    to a terminal could move the cursor, retitle the window or clear the screen."""
    found = _CONTROL.search(name)
    if found is not None:
        raise ValueError(
            f"the test id holds a control character (U+{ord(found.group()):04X}), "
            "which pytest never writes"
        )


def _describe(limits: Mapping[str, float]) -> str:
    return ", ".join(f"{metric}:{percent:g}%" for metric, percent in limits.items())


@dataclass(frozen=True, slots=True)
class Regression:
    """A metric of a test that grew beyond its tolerance: the figures and the sentence."""

    test: str
    metric: str
    before: Decimal
    after: Decimal
    limit: float
    """The tolerance, in percent of ``before``."""
    change_pct: float | None
    """How much it grew, in percent of ``before`` (None: it rose from 0)."""
    message: str

    def __str__(self) -> str:
        return self.message


@dataclass(frozen=True, slots=True)
class RegressionCheck:
    """A metric may grow by at most ``percent`` over the baseline."""

    metric: str
    percent: float

    def fails(self, test: str, old: TestCost, new: TestCost) -> str | None:
        found = self.check(test, old, new)
        return None if found is None else found.message

    def check(self, test: str, old: TestCost, new: TestCost) -> Regression | None:
        """The regression of ``test``'s metric beyond the tolerance, or None."""
        before, after = old.metric(self.metric), new.metric(self.metric)
        if before is None or after is None:
            return None  # an unpriced cost: compare_baselines gates the tokens instead
        shown = money if self.metric == "cost" else (lambda value: f"{int(value):,}")
        if before == 0:
            if after == 0:
                return None
            said = f"{short_name(test)}: {self.metric} rose from 0 to {shown(after)}"
            return Regression(test, self.metric, before, after, self.percent, None, said)
        change = float((after - before) / before * 100)
        if change <= self.percent:
            return None
        said = (
            f"{short_name(test)}: {self.metric} rose {_over(change, self.percent)} "
            f"({shown(before)} -> {shown(after)}), over the tolerance of {self.percent:g}%"
            f"{_resting(new)}"
        )
        return Regression(test, self.metric, before, after, self.percent, change, said)


def _resting(new: TestCost) -> str:
    """What the new figure rests on besides what was billed (a trial's gate failed at +107%
    on two calls whose usage did not add up, estimated, and said nothing of it)."""
    said = [
        f"{n} call{'' if n == 1 else 's'} {what}"
        for n, what in (
            (new.unrecorded_calls, "recorded without usable usage: estimated"),
            (new.drifted_calls, "sent changed: simulated"),
        )
        if n
    ]
    return f" ({'; '.join(said)})" if said else ""


def _over(change: float, limit: float) -> str:
    """``+5.1%``; with more decimals where one would read as the limit itself (``+2.03%``
    over 2%, not ``+2.0%``)."""
    for places in range(1, 5):
        text = f"{change:+.{places}f}%"
        if float(text[:-1]) > limit:
            return text
    return f"{change:+g}%"


@dataclass(slots=True)
class Comparison:
    regressions: list[str] = field(default_factory=list)
    """Each regression beyond tolerance, as a sentence (``failed`` holds its figures)."""
    failed: list[Regression] = field(default_factory=list)
    improvements: list[str] = field(default_factory=list)
    new_tests: list[str] = field(default_factory=list)
    missing_tests: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    """What was checked differently from what was asked (a cost gate on an unpriced test)."""


def _limits_for(
    test: str,
    old: TestCost,
    new: TestCost,
    limits: dict[str, float],
    fallback: Mapping[str, float] | None,
) -> tuple[dict[str, float], str | None]:
    """The checks to run on one test, and a note when a cost gate fell back to tokens."""
    if "cost" not in limits or not (old.unpriced_calls or new.unpriced_calls):
        return limits, None
    percent = limits.pop("cost")
    tokens = dict(fallback) if fallback is not None else dict.fromkeys(TOKEN_METRICS, percent)
    added = {metric: pct for metric, pct in tokens.items() if metric not in limits}
    limits.update(added)
    unpriced = max(old.unpriced_calls, new.unpriced_calls)
    gated = _describe(added) if added else "its token tolerances"
    calls = f"{unpriced} unpriced call{'s' * (unpriced != 1)}"
    note = f"{short_name(test)}: cost not compared ({calls}); gated on {gated} instead"
    return limits, note


def _improvement(test: str, old: TestCost, new: TestCost) -> str | None:
    """A test that costs less than its baseline; said to rest on an estimate or a simulation
    when calls of it were recorded without usable usage, or sent changed (a cache-only change
    estimates no token: "within the estimate's error" misled a trial)."""
    before, after = old.cost_usd, new.cost_usd
    how = _resting(new)
    if before is not None and after is not None:
        return (
            f"{short_name(test)}: cost {money(before)} -> {money(after)}{how}"
            if after < before
            else None
        )
    if new.prompt_tokens < old.prompt_tokens:
        return (
            f"{short_name(test)}: prompt_tokens {old.prompt_tokens:,} -> {new.prompt_tokens:,} "
            "(unpriced)"
        )
    return None


def compare_baselines(
    old: Mapping[str, TestCost],
    new: Mapping[str, TestCost],
    tolerances: Mapping[str, float],
    *,
    overrides: Mapping[str, Mapping[str, float]] | None = None,
    unpriced_fallback: Mapping[str, float] | None = None,
) -> Comparison:
    """Regressions beyond tolerance (per metric, per-test overrides), improvements, new tests.

    A cost tolerance cannot be checked on a test with unpriced calls (its cost is unknown on
    one side): that test is gated on ``unpriced_fallback`` instead (by default prompt and
    output tokens at the cost tolerance), and a note says so.
    """
    result = Comparison()
    for test in naturally(new):
        if test not in old:
            result.new_tests.append(test)
            continue
        limits = {**tolerances, **(overrides or {}).get(test, {})}
        limits, note = _limits_for(test, old[test], new[test], limits, unpriced_fallback)
        if note is not None:
            result.notes.append(note)
        for metric, percent in sorted(limits.items()):
            failure = RegressionCheck(metric, percent).check(test, old[test], new[test])
            if failure is not None:
                result.failed.append(failure)
                result.regressions.append(failure.message)
        improvement = _improvement(test, old[test], new[test])
        if improvement is not None:
            result.improvements.append(improvement)
    result.missing_tests = naturally(set(old) - set(new))
    return result
