"""A model's input price per million tokens, as routing compares models by it."""

from __future__ import annotations

from datetime import datetime
from functools import lru_cache

from costsim.model import Usage
from costsim.pricing.flat import period_start
from costsim.pricing.names import model_label
from costsim.pricing.prices import price

__all__ = ["input_price"]


def input_price(model: str, provider: str, when: datetime | None) -> tuple[float | None, str]:
    """(the model's input price per million tokens, or None; its name as ``--by model``
    names it: one name per price, so a dated name and its alias are one model). Once per
    model and price period (from one of genai-prices' start dates to the next): routing
    asks for every call it moves, and every call has its own time."""
    return _input_price(
        model, provider, None if when is None else period_start(model, provider, when)
    )


@lru_cache(maxsize=1 << 12)
def _input_price(model: str, provider: str, when: datetime | None) -> tuple[float | None, str]:
    # the thousand tokens after a first thousand, scaled to a million: below every
    # long-context tier (Sonnet 4.5's doubles its rate above 200K tokens, so priced at a
    # million it read dearer than Opus 4.5) and without a per-request fee
    result = price(Usage(uncached_input=2_000), model=model, provider=provider, at=when)
    first = price(Usage(uncached_input=1_000), model=model, provider=provider, at=when)
    model_id = result.model_id if result.source == "genai-prices" else None
    amount = None
    if result.amount is not None and first.amount is not None:
        amount = float((result.amount - first.amount) * 1_000)
    return amount, model_label(model, provider, model_id)
