"""Calls billed at a service tier's own prices: OpenAI's flex (about half) and priority
processing, and batch processing, as the response records them (``service_tier``).

genai-prices lists a tier's prices as variants of a model's price, selected by the request
context (``{"service_tier": "flex"}``, ``{"processing": "batch"}``), each from the date it
lists them from. A call recorded before that date is priced at the tier's first listed prices:
a flex call of 2025 cost half the standard price then as well, and its standard price would
be twice what was billed. A model with no price for the tier is unpriced (never priced at the
standard rate as though the tier did not exist); for priority, the standard price is the part
known (a lower bound).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from decimal import Decimal
from functools import lru_cache

from genai_prices import Usage as PriceUsage
from genai_prices import calc_price, data_snapshot

from costsim.model import Usage
from costsim.model.quoting import quoted
from costsim.pricing.priced import Price

__all__ = ["CONTEXTS", "listed_from", "tier_amount", "tier_price"]

CONTEXTS: dict[str, dict[str, str]] = {
    "flex": {"service_tier": "flex"},
    "priority": {"service_tier": "priority"},
    "batch": {"processing": "batch"},
}
"""The tiers a recorded ``service_tier`` can name that change the price, and how genai-prices
selects their prices."""


def tier_price(
    usage: Usage, model: str, provider: str, when: datetime, standard: Callable[[], Price]
) -> Price:
    """``usage`` at the prices of its service tier: a model with none is unpriced, never
    billed at the standard rate; for priority, whose prices are higher, ``standard()`` (the
    same usage at the standard price, made only then) is the part known."""
    tier = usage.tier or ""
    moment = listed_from(model, provider, tier, when)
    found = tier_amount(usage, model, provider, moment, tier) if moment is not None else None
    if isinstance(found, tuple):
        return Price(found[0], model_id=found[1], priced_at=when)
    known = standard()
    return Price(
        None,
        model_id=known.model_id,
        unpriced_reason=found
        or f"genai-prices has no {tier} price for {provider} model {quoted(model)}",
        priced_at=when,
        lower_bound=(known.amount or Decimal(0)) if tier == "priority" else Decimal(0),
    )


@lru_cache(maxsize=1 << 12)
def tier_amount(
    usage: Usage, model: str, provider: str, moment: datetime, tier: str
) -> tuple[Decimal, str] | str:
    """What ``usage`` costs at ``tier``'s prices in force at ``moment`` (see
    :func:`listed_from`), and the model genai-prices priced; or why it cannot say."""
    priced = PriceUsage(
        input_tokens=usage.prompt_total,
        cache_read_tokens=usage.cache_read,
        cache_write_tokens=usage.cache_write,
        cache_write_1h_tokens=usage.cache_write_1h,
        output_tokens=usage.output,
        web_searches=usage.web_searches,
    )
    try:
        result = calc_price(
            priced,
            model,
            provider_id=provider,
            genai_request_timestamp=moment,
            price_context=CONTEXTS[tier],
        )
    except (LookupError, ValueError, ArithmeticError) as exc:
        return f"genai-prices cannot price {quoted(model)} at the {tier} tier: {exc}"
    if usage.web_searches and getattr(result.model_price, "web_searches_kcount", None) is None:
        # as the standard path: a search with no fee leaves the cost unknown, never tokens only
        return (
            f"{usage.web_searches} web search(es) recorded but genai-prices has no web search "
            f"fee for {provider} model {quoted(model)}"
        )
    return result.total_price, result.model.id


@lru_cache(maxsize=1 << 10)
def listed_from(model: str, provider: str, tier: str, when: datetime) -> datetime | None:
    """The moment whose tier prices bill a call at ``when``: ``when`` once genai-prices lists
    them, the first day it lists them before that; None when it lists none for the model."""
    try:
        _, found = data_snapshot.get_snapshot().find_provider_model(model, None, provider, None)
    except (LookupError, ValueError):
        return None
    context = CONTEXTS[tier]
    starts = []
    for variant in getattr(found, "price_variants", None) or ():
        if variant.when != context:
            continue
        constraint = variant.constraint
        if constraint is None or constraint.active(when):
            return when
        start = getattr(constraint, "start_date", None)
        if start is not None:
            starts.append(datetime(start.year, start.month, start.day, tzinfo=UTC))
    return min(starts, default=None)
