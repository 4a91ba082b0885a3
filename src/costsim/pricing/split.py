"""A call's cost split by what it paid for: uncached input, cache reads, cache writes, output.

Each token class is weighted by its own rate at the call's model, provider and pricing day
(the price of a thousand tokens of that class alone), and the parts are scaled so that they
add up to the call's cost, to Decimal precision: totals stay exact, and a long-context tier,
which the whole prompt decides, scales every class alike. What cannot be split that way (a
cost a gateway recorded, per-use fees) is ``other``. An unpriced call has no split
(``None``): its cost is unknown, never $0.

The split is made once, when a call is metered (:func:`costsim.pricing.ledger.meter`), from
rates looked up once per model and day, so every total can carry it at the cost of an
addition.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime
from decimal import Decimal
from functools import cache
from typing import TYPE_CHECKING

from costsim.model import Usage
from costsim.pricing.hour_writes import hour_rate
from costsim.pricing.platform_ids import price_list
from costsim.pricing.prices import Price, price, price_period

if TYPE_CHECKING:
    from costsim.model import Call

__all__ = ["CLASSES", "ClassCost", "split_cost"]

CLASSES = ("uncached", "cache_read", "cache_write", "output", "other")
"""The classes a cost is split into, in the order charts stack them."""

ZERO = Decimal(0)
_PER = 1000
"""Tokens a class's rate is read for: few enough to stay in the base tier of tiered prices."""


@dataclass(frozen=True, slots=True)
class ClassCost:
    """Dollars per class; the fields add up to the cost they split."""

    uncached: Decimal = ZERO
    cache_read: Decimal = ZERO
    cache_write: Decimal = ZERO
    output: Decimal = ZERO
    other: Decimal = ZERO

    @property
    def total(self) -> Decimal:
        return self.uncached + self.cache_read + self.cache_write + self.output + self.other

    def __add__(self, other: ClassCost) -> ClassCost:
        return ClassCost(
            self.uncached + other.uncached,
            self.cache_read + other.cache_read,
            self.cache_write + other.cache_write,
            self.output + other.output,
            self.other + other.other,
        )

    @staticmethod
    def total_of(costs: Iterable[ClassCost], start: ClassCost | None = None) -> ClassCost:
        """``start`` plus every one of ``costs``, in order: what adding them one by one gives
        (each class summed in the same order), without a new object per addition."""
        first = start or ClassCost()
        uncached, read, write = first.uncached, first.cache_read, first.cache_write
        output, other = first.output, first.other
        for cost in costs:
            uncached += cost.uncached
            read += cost.cache_read
            write += cost.cache_write
            output += cost.output
            other += cost.other
        return ClassCost(uncached, read, write, output, other)

    def get(self, name: str) -> Decimal:
        value: Decimal = getattr(self, name)
        return value


_SAMPLES = {
    "uncached": Usage(uncached_input=_PER),
    "cache_read": Usage(cache_read=_PER),
    "cache_write_5m": Usage(cache_write_5m=_PER),
    "cache_write_1h": Usage(cache_write_1h=_PER),
    "output": Usage(output=_PER),
}


@cache
def _rates(model: str, provider: str, day: date) -> dict[str, Decimal] | None:
    """The price of :data:`_PER` tokens of each class alone (None: some class has no price),
    read once per price period (a recording spread over many days has few periods)."""
    when = datetime(day.year, day.month, day.day, tzinfo=UTC)
    period = price_period(model, provider, when)
    if period is None:
        return _rates_on(model, provider, when)
    if period not in _PERIOD_RATES:
        _PERIOD_RATES[period] = _rates_on(model, provider, when)
    return _PERIOD_RATES[period]


_PERIOD_RATES: dict[tuple[str, str, str], dict[str, Decimal] | None] = {}


def _rates_on(model: str, provider: str, when: datetime) -> dict[str, Decimal] | None:
    rates = {}
    for name, sample in _SAMPLES.items():
        result = price(sample, model=model, provider=provider, at=when)
        amount = hour_rate(result)[0] if name == "cache_write_1h" else result.amount
        if amount is None:
            return None
        rates[name] = amount
    return rates


def _lists(call: Call, usage: Usage) -> list[tuple[str, str]]:
    """The price lists ``call`` billed for ``usage`` is priced from, in the order
    :func:`meter` tries them."""
    own = price_list(call, prompt=usage.prompt_total)
    return list(dict.fromkeys((own, (call.priced_model, call.provider))))


def _rates_of(call: Call, usage: Usage, when: datetime) -> dict[str, Decimal] | None:
    for model, provider in _lists(call, usage):
        rates = _rates(model, provider, when.date())
        if rates is not None:
            return rates
    return None


def _fees(call: Call, usage: Usage, cost: Price) -> Decimal:
    """Per-use fees (web searches): what the call cost beyond its tokens priced together."""
    if not usage.web_searches or cost.amount is None:
        return ZERO
    tokens_only = dataclasses.replace(usage, web_searches=0)
    for model, provider in _lists(call, usage):  # as it was priced
        together = price(tokens_only, model=model, provider=provider, at=cost.priced_at)
        if together.amount is not None:
            return max(cost.amount - together.amount, ZERO)
    return ZERO


def split_cost(call: Call, usage: Usage | None, cost: Price | None) -> ClassCost | None:
    """The cost of ``call`` billed for ``usage`` split by class, adding up to it; None when
    it has no cost."""
    if cost is None or cost.amount is None:
        return None
    if usage is None or not cost.amount or cost.source != "genai-prices":
        return ClassCost(other=cost.amount)
    rates = _rates_of(call, usage, cost.priced_at) if cost.priced_at is not None else None
    if rates is None:
        return ClassCost(other=cost.amount)
    weights = {
        "uncached": usage.uncached_input * rates["uncached"],
        "cache_read": usage.cache_read * rates["cache_read"],
        "cache_write": usage.cache_write_5m * rates["cache_write_5m"]
        + usage.cache_write_1h * rates["cache_write_1h"],
        "output": usage.output * rates["output"],
    }
    tokens = sum(weights.values(), start=ZERO)
    if not tokens:
        return ClassCost(other=cost.amount)
    fees = _fees(call, usage, cost)
    scale = (cost.amount - fees) / tokens
    return ClassCost(**{name: value * scale for name, value in weights.items()}, other=fees)
