"""A call's cost split by what it paid for: uncached input, cache reads, cache writes, output.

Each token class is priced alone, at the call's model, provider and pricing date, and the
parts are scaled so that they add up to the call's cost, to Decimal precision (a long-context
tier, say, is decided by the whole prompt, so classes priced alone need not add up).
What cannot be split that way (a cost a gateway recorded, per-use fees) is ``other``.
An unpriced call has no split (``None``): its cost is unknown, never $0.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, fields
from decimal import Decimal

from costsim.model import Usage
from costsim.pricing.ledger import MeteredCall
from costsim.pricing.prices import price

__all__ = ["CLASSES", "ClassCost", "class_cost"]

CLASSES = ("uncached", "cache_read", "cache_write", "output", "other")
"""The classes a cost is split into, in the order charts stack them."""

ZERO = Decimal(0)


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
            *(getattr(self, f.name) + getattr(other, f.name) for f in fields(ClassCost))
        )

    def get(self, name: str) -> Decimal:
        value: Decimal = getattr(self, name)
        return value


def _alone(item: MeteredCall, usage: Usage) -> Decimal | None:
    """The price of ``usage`` alone at the call's model and pricing date (None: no price)."""
    call, when = item.call, item.price.priced_at if item.price else None
    if when is None:
        return None
    for provider in dict.fromkeys((call.price_provider, call.provider)):
        result = price(usage, model=call.priced_model, provider=provider, at=when)
        if result.amount is not None:
            return result.amount
    return None


def class_cost(item: MeteredCall) -> ClassCost | None:
    """``item``'s cost split by class, adding up to its cost; None when it has no cost."""
    usage, cost = item.usage, item.price
    if cost is None or cost.amount is None:
        return None
    if usage is None or not cost.amount or cost.source != "genai-prices":
        return ClassCost(other=cost.amount)
    parts = {
        "uncached": Usage(uncached_input=usage.uncached_input),
        "cache_read": Usage(cache_read=usage.cache_read),
        "cache_write": Usage(
            cache_write_5m=usage.cache_write_5m, cache_write_1h=usage.cache_write_1h
        ),
        "output": Usage(output=usage.output),
    }
    alone: dict[str, Decimal] = {}
    for name, part in parts.items():
        if part.prompt_total or part.output:
            value = _alone(item, part)
            if value is None:
                return ClassCost(other=cost.amount)
            alone[name] = value
    tokens = sum(alone.values(), start=ZERO)
    if not tokens:
        return ClassCost(other=cost.amount)
    fees = _fees(item, usage, cost.amount)
    scale = (cost.amount - fees) / tokens
    return ClassCost(**{name: value * scale for name, value in alone.items()}, other=fees)


def _fees(item: MeteredCall, usage: Usage, amount: Decimal) -> Decimal:
    """Per-use fees (web searches): what the call cost beyond its tokens priced together."""
    if not usage.web_searches:
        return ZERO
    together = _alone(item, dataclasses.replace(usage, web_searches=0))
    return ZERO if together is None else max(amount - together, ZERO)
