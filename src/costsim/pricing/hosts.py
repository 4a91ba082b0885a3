"""Which provider's API a host serves, per genai-prices' provider patterns."""

from __future__ import annotations

import re
from functools import cache

from genai_prices import data_snapshot

__all__ = ["host_provider"]


@cache
def _provider_patterns() -> tuple[tuple[str, re.Pattern[str]], ...]:
    snapshot = data_snapshot.get_snapshot()
    return tuple(
        (provider.id, re.compile(provider.api_pattern))
        for provider in snapshot.providers
        if provider.api_pattern
    )


@cache
def host_provider(host: str) -> str | None:
    """The provider whose API lives on ``host`` (per genai-prices), or None for unknown hosts."""
    if not host:
        return None
    url = f"https://{host}/"
    for provider_id, pattern in _provider_patterns():
        if pattern.match(url):
            return provider_id
    return None
