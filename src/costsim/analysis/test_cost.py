"""What one test's LLM calls used and cost, as a baseline keeps it, and what the tests two
sets of figures both hold cost in each (the priced part where some are unpriced)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any, ClassVar

from costsim.pricing.ledger import MeteredCall, Totals
from costsim.pricing.money import amount_text

__all__ = ["MAX_DOLLARS", "MAX_PLACES", "CostChange", "TestCost", "cost_change"]

_COUNTS = (
    "calls", "estimated_calls", "unrecorded_calls", "drifted_calls", "errored_calls",
    "prompt_tokens",
    "uncached_input_tokens", "cache_read_tokens", "cache_write_tokens", "output_tokens",
    "unpriced_calls", "unrecognised_calls", "cache_write_1h_tokens", "reasoning_tokens",
    "unreported_thinking_calls",
)  # fmt: skip

_PRECISION = 28
"""Significant digits of decimal's default context, the one costsim computes money in."""
MAX_PLACES = 18
"""Decimal places an amount read from a file may have. Prices are quoted per million tokens
to a few decimals, so a token's price, and any sum of calls, ends within about 12 places
(costsim's figures on the corpus end within 9); 18 leaves room for any price to come."""
MAX_DOLLARS = 10 ** (_PRECISION - MAX_PLACES)
"""An amount read from a file is below this ($10,000,000,000): with :data:`MAX_PLACES`
decimals it then fits decimal's 28 digits, so sums and differences of it stay exact and no
arithmetic on it overflows (``1e999999999`` did)."""


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
    cache_write_1h_tokens: int = 0
    """Of ``cache_write_tokens``, those written for an hour (twice the input price, against
    1.25 times for five minutes)."""
    reasoning_tokens: int = 0
    """Of ``output_tokens``, the model's reasoning (billed as output, never shown), where the
    usage counts it apart."""
    unreported_thinking_calls: int = 0
    """Calls that thought without counting it apart (Anthropic's): their thinking is in
    ``output_tokens`` and not in ``reasoning_tokens``, which is then no measure of it."""
    models: dict[str, int] = field(default_factory=dict)
    """Calls per model, by the name each call is priced under."""
    priced_cost_usd: Decimal = Decimal(0)
    unpriced_calls: int = 0
    """Calls whose cost is unknown: a model without a price, or a call without usage."""
    unrecognised_calls: int = 0
    """Interactions that look like LLM calls costsim cannot meter (``unrecognised-llm-call``,
    as ``costsim report`` notes them): in no other figure, so the cost is unknown (its priced
    part a lower bound), as in the report's totals."""
    unpriced: list[str] = field(default_factory=list)
    unrecorded: list[str] = field(default_factory=list)
    """Which calls were recorded without usable usage, and why (``file interaction N: ...``)."""

    @classmethod
    def of(cls, calls: Iterable[MeteredCall]) -> TestCost:
        metered = list(calls)
        totals = Totals.of(metered)
        return cls(
            calls=totals.llm_calls,
            estimated_calls=totals.estimated_calls,
            errored_calls=totals.errored_calls,
            prompt_tokens=totals.prompt_tokens,
            uncached_input_tokens=totals.uncached_input_tokens,
            cache_read_tokens=totals.cache_read_tokens,
            cache_write_tokens=totals.cache_write_tokens,
            output_tokens=totals.output_tokens,
            cache_write_1h_tokens=totals.cache_write_1h_tokens,
            reasoning_tokens=totals.reasoning_tokens,
            unreported_thinking_calls=totals.unreported_thinking_calls,
            models=dict(sorted(Counter(m.call.priced_model for m in metered).items())),
            priced_cost_usd=totals.priced_cost,
            unpriced_calls=totals.unpriced_calls + totals.unmetered_calls,
            unpriced=[f"{u.provenance}: {u.reason}" for u in totals.unpriced],
        )

    @property
    def cost_usd(self) -> Decimal | None:
        """The whole cost, or None when any call is unpriced or an LLM-looking interaction
        was left out (see ``priced_cost_usd``), as a report's total is."""
        return None if self.unpriced_calls or self.unrecognised_calls else self.priced_cost_usd

    @property
    def cache_hit_rate(self) -> float | None:
        return self.cache_read_tokens / self.prompt_tokens if self.prompt_tokens else None

    def merge(self, other: TestCost) -> None:
        for name in _COUNTS:
            setattr(self, name, getattr(self, name) + getattr(other, name))
        for model, count in other.models.items():
            self.models[model] = self.models.get(model, 0) + count
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
    def from_json(cls, data: Mapping[str, Any], *, version: int = 2) -> TestCost:
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
                raise ValueError(f"{name} must be a whole number of 0 or more, not {_shown(value)}")
            counts[name] = value
        unpriced = data.get("unpriced", [])
        if not isinstance(unpriced, list) or not all(isinstance(u, str) for u in unpriced):
            raise ValueError(f"unpriced must be a list of strings, not {_shown(unpriced)}")
        unrecorded = data.get("unrecorded", [])
        if not isinstance(unrecorded, list) or not all(isinstance(u, str) for u in unrecorded):
            raise ValueError(f"unrecorded must be a list of strings, not {_shown(unrecorded)}")
        models = data.get("models", {})  # absent from files written before it was kept
        if not isinstance(models, Mapping) or not all(
            isinstance(k, str) and type(v) is int and v > 0 for k, v in models.items()
        ):
            raise ValueError(f"models must map model names to call counts, not {_shown(models)}")
        cost = _money("cost_usd", data.get("cost_usd"))
        if version == 1:
            counts["unpriced_calls"] = 0 if cost is not None else max(1, len(unpriced))
            priced = cost or Decimal(0)
        else:
            priced = _money("priced_cost_usd", data.get("priced_cost_usd", "0")) or Decimal(0)
            if (cost is None) != bool(counts["unpriced_calls"] or counts["unrecognised_calls"]):
                raise ValueError(
                    "cost_usd must be null exactly when unpriced_calls or unrecognised_calls "
                    "is above 0"
                )
        return cls(
            **counts,
            models=dict(models),
            priced_cost_usd=priced,
            unpriced=list(unpriced),
            unrecorded=list(unrecorded),
        )


def _shown(value: Any, limit: int = 40) -> str:
    """``value`` as the file has it, cut (a hostile file's value can be megabytes long)."""
    shown = repr(value)
    return shown if len(shown) <= limit else f"{shown[: limit - 4]}...{shown[-1]}"


def _money(name: str, value: Any) -> Decimal | None:
    """An amount as a baseline writes it (a decimal string; a whole number is taken too)."""
    if value is None:
        return None
    amount = None
    if isinstance(value, str | int) and not isinstance(value, bool):
        try:
            amount = Decimal(value)
        except InvalidOperation:
            amount = None
    if amount is None or not amount.is_finite() or amount < 0:
        raise ValueError(
            f"{name} must be a decimal string of 0 or more, or null, not {_shown(value)}"
        )
    if not amount.is_zero() and (amount >= MAX_DOLLARS or _places(amount) > MAX_PLACES):
        raise ValueError(
            f"{name} {_shown(value)} is not an amount a test can cost: it must be below "
            f"${MAX_DOLLARS:,} with at most {MAX_PLACES} decimal places"
        )
    return amount


def _places(amount: Decimal) -> int:
    """Decimal places of ``amount`` that are not trailing zeros (``0.0450`` has 3)."""
    _, digits, exponent = amount.as_tuple()
    assert isinstance(exponent, int)  # a finite amount
    trailing = len(digits) - len("".join(map(str, digits)).rstrip("0"))
    return max(0, -(exponent + trailing))


@dataclass(frozen=True, slots=True)
class CostChange:
    """What the tests two sets of figures both hold cost in each: those priced in both (a
    test with an unpriced call on either side is left out, and counted)."""

    tests: int
    """Tests in both, priced in both: the ones summed."""
    unpriced: int
    """Tests in both left out: an unpriced call on one side or the other."""
    before: Decimal
    after: Decimal

    @property
    def change(self) -> Decimal:
        return self.after - self.before

    @property
    def change_pct(self) -> float | None:
        """The change in percent of ``before`` (None when that is $0)."""
        return float(self.change / self.before * 100) if self.before else None


def cost_change(old: Mapping[str, TestCost], new: Mapping[str, TestCost]) -> CostChange:
    """The priced tests both ``old`` and ``new`` hold: their cost in each, and how many of
    those both hold were left out because a call of theirs is unpriced."""
    both = [test for test in new if test in old]
    priced = [t for t in both if not (old[t].unpriced_calls or new[t].unpriced_calls)]
    return CostChange(
        tests=len(priced),
        unpriced=len(both) - len(priced),
        before=sum((old[t].priced_cost_usd for t in priced), Decimal(0)),
        after=sum((new[t].priced_cost_usd for t in priced), Decimal(0)),
    )
