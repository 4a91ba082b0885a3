"""What genai-prices says of a model besides its prices."""

from __future__ import annotations

from datetime import UTC, datetime
from functools import cache

from genai_prices import Usage as PriceUsage
from genai_prices import calc_price

__all__ = ["context_window"]


@cache
def context_window(model: str, provider: str) -> int | None:
    """The model's context window in tokens, per genai-prices (None when unknown)."""
    try:
        result = calc_price(
            PriceUsage(input_tokens=1, output_tokens=0),
            model,
            provider_id=provider,
            genai_request_timestamp=datetime(2026, 1, 1, tzinfo=UTC),
        )
    except (LookupError, ValueError):
        return None
    window = result.model.context_window
    return int(window) if window else None
