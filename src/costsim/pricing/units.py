"""Per-token prices of a model at a date and prompt size: what a what-if weighs tokens with.

A whole-request tier (a prompt above 200K tokens billed at a higher rate) makes the price of a
token depend on the prompt it is part of, so the prompt's size is part of the question.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from functools import cache

from costsim.model import Usage
from costsim.pricing.hour_writes import hour_rate
from costsim.pricing.prices import price, price_moment, tier_starts, today

__all__ = ["UnitPrices", "unit_prices"]


@dataclass(frozen=True, slots=True)
class UnitPrices:
    """USD per token of each kind, for one model at one date and prompt size (whole-request
    tiers apply: a prompt above 200K tokens may be billed at a higher rate)."""

    input: Decimal
    cache_read: Decimal
    write_5m: Decimal
    write_1h: Decimal
    output: Decimal
    hour_priced: bool = True
    """False when the model has no 1-hour write price: ``write_1h`` is then the 5-minute
    rate, the least it can be (:mod:`costsim.pricing.hour_writes`)."""

    def of(self, kind: str) -> Decimal:
        """The price of ``uncached``, ``read``, ``5m``, ``1h`` or ``output`` tokens."""
        return {
            "uncached": self.input,
            "read": self.cache_read,
            "5m": self.write_5m,
            "1h": self.write_1h,
            "output": self.output,
        }[kind]


_PROBE = 100_000


def unit_prices(
    model: str,
    provider: str,
    at: datetime | None,
    *,
    prompt: int = _PROBE,
    base_tier: bool = False,
    tier: str | None = None,
) -> UnitPrices | None:
    """Per-token prices of ``model`` for a prompt of ``prompt`` tokens (None when unpriced);
    at the base tier whatever the prompt when ``base_tier`` (see :attr:`Usage.base_tier`);
    at a service tier's prices when ``tier`` names one (see :attr:`Usage.tier`)."""
    when = price_moment(model, provider, at or today())
    size = 1 if base_tier else max(prompt, 1)
    starts = tier_starts(model, provider, when)
    if starts is not None:  # every prompt of one tier has the same per-token prices
        size = next((start + 1 for start in reversed(starts) if size > start), 1)
    return _unit_prices(model, provider, when, size, tier)


@cache
def _unit_prices(
    model: str, provider: str, when: datetime, size: int, tier: str | None = None
) -> UnitPrices | None:
    probes = {
        "input": Usage(uncached_input=size, tier=tier),
        "cache_read": Usage(cache_read=size, tier=tier),
        "write_5m": Usage(cache_write_5m=size, tier=tier),
        "write_1h": Usage(cache_write_1h=size, tier=tier),
        "output": Usage(uncached_input=size, output=_PROBE, tier=tier),
    }
    amounts: dict[str, Decimal] = {}
    hour_priced = True
    for name, usage in probes.items():
        result = price(usage, model=model, provider=provider, at=when)
        amount = result.amount
        if name == "write_1h":
            amount, hour_priced = hour_rate(result)
        if amount is None:
            return None
        amounts[name] = amount
    return UnitPrices(
        input=amounts["input"] / size,
        cache_read=amounts["cache_read"] / size,
        write_5m=amounts["write_5m"] / size,
        write_1h=amounts["write_1h"] / size,
        output=(amounts["output"] - amounts["input"]) / _PROBE,
        hour_priced=hour_priced,
    )
