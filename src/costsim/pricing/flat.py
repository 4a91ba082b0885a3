"""genai-prices' calculation for no usage: the model price in force at a moment (its token
prices, tiers, per-request fee) and how genai-prices writes a zero amount, read once per
model, provider and moment."""

from __future__ import annotations

from datetime import datetime
from functools import cache
from typing import TYPE_CHECKING

from genai_prices import Usage as PriceUsage
from genai_prices import calc_price

if TYPE_CHECKING:
    from genai_prices.types import PriceCalculation

__all__ = ["flat"]


@cache
def flat(model: str, provider: str, when: datetime) -> PriceCalculation | None:
    """The calculation of no usage of ``model`` at ``provider`` on ``when``; None when
    genai-prices has no price for it."""
    if not model:
        return None
    try:
        return calc_price(
            PriceUsage(input_tokens=0, output_tokens=0),
            model,
            provider_id=provider,
            genai_request_timestamp=when,
        )
    except (LookupError, ValueError, ArithmeticError):
        return None
