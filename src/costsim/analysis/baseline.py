"""Per-test cost figures, baselines of them, and regression checks.

A baseline is a format-versioned JSON file (``.costsim/NAME.json``) mapping test ids to their
figures. Regression checks are tiny objects whose ``fails()`` returns a sentence or None.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any, ClassVar

from costsim.analysis.tolerances import METRICS, TOKEN_METRICS, parse_tolerances
from costsim.errors import InputError
from costsim.model.ordering import naturally
from costsim.model.quoting import quoted, short_name
from costsim.pricing.ledger import MeteredCall, Totals
from costsim.pricing.money import amount_text, money

__all__ = [
    "BASELINE_FORMAT_VERSION",
    "METRICS",
    "Comparison",
    "RegressionCheck",
    "TestCost",
    "compare_baselines",
    "load_baseline",
    "parse_tolerances",
    "save_baseline",
]

BASELINE_FORMAT_VERSION = 2
"""2 adds ``priced_cost_usd`` and ``unpriced_calls``; version 1 files are still read."""
READABLE_VERSIONS = (1, 2)


_COUNTS = (
    "calls", "estimated_calls", "unrecorded_calls", "drifted_calls", "errored_calls",
    "prompt_tokens",
    "uncached_input_tokens", "cache_read_tokens", "cache_write_tokens", "output_tokens",
    "unpriced_calls",
)  # fmt: skip


@dataclass(slots=True)
class TestCost:
    """What one test's LLM calls used and cost.

    ``priced_cost_usd`` sums the calls that have a price; ``unpriced_calls`` counts the others,
    so the cost is complete (``cost_usd``) only when that count is 0.
    """

    __test__: ClassVar[bool] = False  # not a pytest test class

    calls: int = 0
    estimated_calls: int = 0
    """Calls whose tokens are costsim's calibrated estimate (unrecorded or drifted)."""
    unrecorded_calls: int = 0
    """Calls recorded without usage (estimated)."""
    drifted_calls: int = 0
    """Replayed calls whose request, as the code sent it, differs from the recorded one."""
    errored_calls: int = 0
    """Calls the API answered with an error (4xx/5xx): unbilled, no tokens counted."""
    prompt_tokens: int = 0
    uncached_input_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    output_tokens: int = 0
    priced_cost_usd: Decimal = Decimal(0)
    unpriced_calls: int = 0
    """Calls whose cost is unknown: a model without a price, or a call without usage."""
    unpriced: list[str] = field(default_factory=list)
    unrecorded: list[str] = field(default_factory=list)
    """Which calls were recorded without usable usage, and why (``file interaction N: ...``)."""

    @classmethod
    def of(cls, calls: Iterable[MeteredCall]) -> TestCost:
        totals = Totals.of(calls)
        return cls(
            calls=totals.llm_calls,
            estimated_calls=totals.estimated_calls,
            errored_calls=totals.errored_calls,
            prompt_tokens=totals.prompt_tokens,
            uncached_input_tokens=totals.uncached_input_tokens,
            cache_read_tokens=totals.cache_read_tokens,
            cache_write_tokens=totals.cache_write_tokens,
            output_tokens=totals.output_tokens,
            priced_cost_usd=totals.priced_cost,
            unpriced_calls=totals.unpriced_calls + totals.unmetered_calls,
            unpriced=[f"{u.provenance}: {u.reason}" for u in totals.unpriced],
        )

    @property
    def cost_usd(self) -> Decimal | None:
        """The whole cost, or None when any call is unpriced (see ``priced_cost_usd``)."""
        return None if self.unpriced_calls else self.priced_cost_usd

    @property
    def cache_hit_rate(self) -> float | None:
        return self.cache_read_tokens / self.prompt_tokens if self.prompt_tokens else None

    def merge(self, other: TestCost) -> None:
        for name in _COUNTS:
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.priced_cost_usd += other.priced_cost_usd
        self.unpriced.extend(other.unpriced)
        self.unrecorded.extend(other.unrecorded)

    def metric(self, name: str) -> Decimal | None:
        value = self.cost_usd if name == "cost" else getattr(self, name)
        return None if value is None else Decimal(value)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["cost_usd"] = amount_text(self.cost_usd)
        data["priced_cost_usd"] = amount_text(self.priced_cost_usd)
        return data

    @classmethod
    def from_json(
        cls, data: Mapping[str, Any], *, version: int = BASELINE_FORMAT_VERSION
    ) -> TestCost:
        """Read one test's figures; a wrong type or value raises ValueError naming the field.

        Version 1 stored only ``cost_usd`` (null when anything was unpriced): its priced part
        is unknown, so such a test reads as unpriced with no priced cost.
        """
        if not isinstance(data, Mapping):
            raise ValueError(f"expected a mapping, got {type(data).__name__}")
        counts = {}
        for name in _COUNTS:
            value = data.get(name, 0)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ValueError(f"{name} must be a whole number of 0 or more, not {value!r}")
            counts[name] = value
        unpriced = data.get("unpriced", [])
        if not isinstance(unpriced, list) or not all(isinstance(u, str) for u in unpriced):
            raise ValueError(f"unpriced must be a list of strings, not {unpriced!r}")
        unrecorded = data.get("unrecorded", [])
        if not isinstance(unrecorded, list) or not all(isinstance(u, str) for u in unrecorded):
            raise ValueError(f"unrecorded must be a list of strings, not {unrecorded!r}")
        cost = _money("cost_usd", data.get("cost_usd"))
        if version == 1:
            counts["unpriced_calls"] = 0 if cost is not None else max(1, len(unpriced))
            priced = cost or Decimal(0)
        else:
            priced = _money("priced_cost_usd", data.get("priced_cost_usd", "0")) or Decimal(0)
            if (cost is None) != bool(counts["unpriced_calls"]):
                raise ValueError("cost_usd must be null exactly when unpriced_calls is above 0")
        return cls(
            **counts, priced_cost_usd=priced, unpriced=list(unpriced), unrecorded=list(unrecorded)
        )


def _money(name: str, value: Any) -> Decimal | None:
    if value is None:
        return None
    try:
        amount = Decimal(str(value)) if isinstance(value, str | int) else None
    except InvalidOperation:
        amount = None
    if amount is None or not amount.is_finite() or amount < 0:
        raise ValueError(f"{name} must be a decimal string of 0 or more, or null, not {value!r}")
    return amount


def save_baseline(path: Path, tests: Mapping[str, TestCost]) -> None:
    from costsim.io.files import write_atomic

    document = {
        "format_version": BASELINE_FORMAT_VERSION,
        "kind": "costsim.baseline",
        "tests": {name: tests[name].to_json() for name in sorted(tests)},
    }
    write_atomic(path, json.dumps(document, indent=2) + "\n")


def load_baseline(path: Path) -> dict[str, TestCost]:
    """Read a baseline; any problem is an InputError naming the file."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(f"baseline {path}: no such file (save one with --costsim-save)") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"baseline {path}: cannot be read ({exc})") from None
    except json.JSONDecodeError as exc:
        raise InputError(
            f"baseline {path}: not valid JSON (line {exc.lineno}: {exc.msg})"
        ) from None
    if not isinstance(document, dict) or document.get("kind") != "costsim.baseline":
        raise InputError(f"baseline {path}: not a costsim baseline file")
    version = document.get("format_version")
    if version not in READABLE_VERSIONS:
        raise InputError(
            f"baseline {path}: format_version {version!r} is not one costsim reads "
            f"({', '.join(map(str, READABLE_VERSIONS))}); save the baseline again"
        )
    tests = document.get("tests")
    if not isinstance(tests, dict):
        raise InputError(f"baseline {path}: has no 'tests' mapping")
    figures = {}
    for name, data in tests.items():
        try:
            figures[name] = TestCost.from_json(data, version=version)
        except ValueError as exc:
            raise InputError(
                f"baseline {path}: malformed test entry {quoted(name)}: {exc}"
            ) from None
    return figures


def _describe(limits: Mapping[str, float]) -> str:
    return ", ".join(f"{metric}:{percent:g}%" for metric, percent in limits.items())


@dataclass(frozen=True, slots=True)
class RegressionCheck:
    """A metric may grow by at most ``percent`` over the baseline."""

    metric: str
    percent: float

    def fails(self, test: str, old: TestCost, new: TestCost) -> str | None:
        before, after = old.metric(self.metric), new.metric(self.metric)
        if before is None or after is None:
            return None  # an unpriced cost: compare_baselines gates the tokens instead
        shown = money if self.metric == "cost" else (lambda value: f"{int(value):,}")
        if before == 0:
            return (
                None
                if after == 0
                else f"{short_name(test)}: {self.metric} rose from 0 to {shown(after)}"
            )
        change = float((after - before) / before * 100)
        if change > self.percent:
            return (
                f"{short_name(test)}: {self.metric} rose {_over(change, self.percent)} "
                f"({shown(before)} -> {shown(after)}), over the tolerance of {self.percent:g}%"
            )
        return None


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
    """A test that costs less than its baseline; said to rest on estimates when calls of it
    were (recorded without usable usage, or sent changed): within the estimator's error."""
    before, after = old.cost_usd, new.cost_usd
    estimated = new.unrecorded_calls + new.drifted_calls
    calls = f"{estimated} call{'' if estimated == 1 else 's'}"
    how = f" ({calls} estimated: within the estimate's error)" if estimated else ""
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
            failure = RegressionCheck(metric, percent).fails(test, old[test], new[test])
            if failure is not None:
                result.regressions.append(failure)
        improvement = _improvement(test, old[test], new[test])
        if improvement is not None:
            result.improvements.append(improvement)
    result.missing_tests = naturally(set(old) - set(new))
    return result
