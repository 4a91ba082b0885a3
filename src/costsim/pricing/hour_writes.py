"""1-hour cache writes of a model genai-prices has no 1-hour write price for.

genai-prices prices a token class without a price of its own at its parent's price: 1-hour
cache writes at the 5-minute write rate. That is less than any 1-hour price it lists (every
Claude price that has one sets it at twice the input rate, against 1.25 times for 5 minutes:
Anthropic's multipliers, at Anthropic, AWS and Google alike), so a call with such writes is
unpriced, its amount at the 5-minute rate the part known (a lower bound), never a silent
discount. Bedrock's Claude Sonnet 4, for one, has no 1-hour price in genai-prices.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from functools import lru_cache

from costsim.model import Usage
from costsim.model.quoting import quoted
from costsim.pricing.flat import flat
from costsim.pricing.priced import Price

__all__ = ["hour_rate", "hour_writes"]


def hour_writes(result: Price, usage: Usage, model: str, provider: str, when: datetime) -> Price:
    """``result`` (priced, with 1h writes), or unpriced with it as the lower bound when the
    model has no 1-hour write price on ``when``'s day."""
    day = when.replace(hour=0, minute=0, second=0, microsecond=0)
    if _priced(model, provider, day):
        return result
    return Price(
        None,
        model_id=result.model_id,
        unpriced_reason=(
            f"genai-prices has no 1-hour cache-write price for {provider} model {quoted(model)} "
            f"(its {usage.cache_write_1h:,} 1h-written tokens priced at the 5-minute rate give "
            "only a lower bound)"
        ),
        priced_at=result.priced_at,
        lower_bound=result.amount or Decimal(0),
    )


@lru_cache(maxsize=1 << 10)
def _priced(model: str, provider: str, day: datetime) -> bool:
    """Whether the model's price on ``day`` names a 1-hour write price (True when it has no
    price at all: that is said already)."""
    found = flat(model, provider, day)
    return found is None or getattr(found.model_price, "cache_write_1h_mtok", None) is not None


def hour_rate(result: Price) -> tuple[Decimal | None, bool]:
    """The amount of a probe of 1h-written tokens alone, and whether it is the model's own 1h
    price: where there is none, the 5m-rate amount (the least it can be), for the rates that
    weigh and split costs (a call that writes for an hour there is unpriced all the same)."""
    if result.amount is not None:
        return result.amount, True
    return (result.lower_bound, False) if result.lower_bound else (None, False)
