"""genai-prices' calculation for no usage: the model price in force at a moment (its token
prices, tiers, per-request fee) and how genai-prices writes a zero amount, read once per
model, provider and price period.

genai-prices dates a model's prices by the day (a ``StartDateConstraint`` per price after
the first): every moment between two start dates has the same price, so the calculation is
made once, at the period's first day, and shared by every moment in it (a comparison asks
for each day its calls were recorded on, and routing for each call it moves). A model whose
prices also vary by the time of day is read at each moment asked for. (Price variants, a
service tier's, need a price context, which no read here gives: :mod:`costsim.pricing.tiers`.)
"""

from __future__ import annotations

from datetime import UTC, datetime
from functools import cache
from typing import TYPE_CHECKING

from genai_prices import Usage as PriceUsage
from genai_prices import calc_price

if TYPE_CHECKING:
    from genai_prices.types import PriceCalculation

__all__ = ["flat", "period_start", "price_starts"]

_BEFORE = datetime(1970, 1, 1, tzinfo=UTC)
"""A moment before every dated price: the period before a model's first start date."""
_REFERENCE = datetime(2026, 1, 1, tzinfo=UTC)


@cache
def flat(model: str, provider: str, when: datetime) -> PriceCalculation | None:
    """The calculation of no usage of ``model`` at ``provider`` on ``when``; None when
    genai-prices has no price for it."""
    start = period_start(model, provider, when)
    if start != when:
        return flat(model, provider, start)
    return _calculated(model, provider, when)


def _calculated(model: str, provider: str, when: datetime) -> PriceCalculation | None:
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


def period_start(model: str, provider: str, when: datetime) -> datetime:
    """The first moment of the price period ``when`` falls in (midnight UTC of the start date
    in force, or a moment before them all); ``when`` itself for a model whose price may change
    within a day."""
    starts = _starts(model, provider)
    if starts is None:
        return when
    day = when.astimezone(UTC).date() if when.tzinfo is not None else when.date()
    begun = [start for start in starts if start.date() <= day]
    return begun[-1] if begun else _BEFORE


def price_starts(model: str, provider: str) -> tuple[datetime, ...] | None:
    """The start dates of the model's dated prices, in order (none: one price for all time,
    or no price); None when its price may change otherwise (by the time of day)."""
    return _starts(model, provider)


@cache
def _starts(model: str, provider: str) -> tuple[datetime, ...] | None:
    """The start dates of the model's dated prices, in order (none: one price for all time);
    None when its price may change otherwise (by the time of day)."""
    found = _calculated(model, provider, _REFERENCE)
    if found is None:  # a model genai-prices does not know (at that provider) at any date
        return ()
    info = getattr(found, "model", None)
    if info is None:  # its price variants need a price context, which no flat read gives
        return None
    prices = getattr(info, "prices", None)
    if not isinstance(prices, list):
        return ()
    starts = set()
    for conditional in prices:
        constraint = getattr(conditional, "constraint", "unknown")
        if constraint is None:
            continue
        start = getattr(constraint, "start_date", None)
        if type(constraint).__name__ != "StartDateConstraint" or start is None:
            return None
        starts.add(datetime(start.year, start.month, start.day, tzinfo=UTC))
    return tuple(sorted(starts))
