"""Cache simulators: replay requests in time order against a cache that follows the
provider's rules, and split each prompt into read / 1h write / 5m write / uncached.

One simulator per provider, registered in ``SIMULATORS``; state lives in the simulator, one
per recorded trace (a recording is its own cache world).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Protocol

from costsim.cache.anthropic import AnthropicCache
from costsim.cache.openai import OpenAICache
from costsim.cache.prefix import Prefix
from costsim.cache.results import CacheResult, Entry, RuleNote, Write
from costsim.cache.rules import CacheRules

__all__ = [
    "SIMULATORS",
    "AnthropicCache",
    "CacheResult",
    "CacheSimulator",
    "Entry",
    "OpenAICache",
    "RuleNote",
    "Write",
]


class CacheSimulator(Protocol):
    """What the engine needs of a provider's cache."""

    def seed(
        self, key: str, tokens: int, *, at: float, ttl: str = ..., label: str = ...,
        exact: bool = ...,
    ) -> None: ...  # fmt: skip

    def readable(self, key: str, at: float) -> bool: ...

    def warm_seed(
        self, prefix: Prefix, read: int, at: float, *, model: str, when: datetime | None,
        tolerance: float,
    ) -> tuple[str, int, str] | None: ...  # fmt: skip

    def request(
        self, prefix: Prefix, *, model: str, at: float, when: datetime | None
    ) -> CacheResult: ...


SIMULATORS: dict[str, Callable[[CacheRules], CacheSimulator]] = {
    "anthropic": AnthropicCache,
    "openai": OpenAICache,
}
