"""Prompt-caching rules as data keyed by model and date (DESIGN.md sections 4-5).

Each rule is a list of (model prefix, from-date, value) entries: the longest matching prefix
wins, and among its entries the latest one in force at the call's date. Scenario files may add
overrides (``model_rules``) in the same shape.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime
from functools import lru_cache

from costsim.errors import ConfigError
from costsim.metering.models import base_model_name

__all__ = ["RULE_NAMES", "WARM_STARTS", "CacheRules", "DatedRule", "default_rules", "tolerance"]

RULE_NAMES: dict[str, str] = {
    "ttl": "TTL expiry",
    "minimum": "minimum cacheable length",
    "breakpoints": "at most 4 breakpoints",
    "lookback": "20-block lookback",
    "ttl-order": "1h breakpoints before 5m ones",
}
"""The Anthropic caching rules a request or a recording can break, by short name."""


def tolerance(prompt_total: int) -> float:
    """How far a predicted cache boundary may sit from a recorded one and still match: the
    prefix estimate's resolution (5% of the prompt, at least 32 tokens)."""
    return max(32.0, 0.05 * prompt_total)


@dataclass(frozen=True, slots=True)
class DatedRule:
    model: str
    value: int
    since: date = date(2000, 1, 1)


def _pick(rules: tuple[DatedRule, ...], model: str, when: datetime | None, default: int) -> int:
    """The rule for ``model`` on ``when``'s day; a platform's model id (Bedrock's
    ``us.anthropic.claude-haiku-4-5-20251001-v1:0``) is the model it names."""
    return _picked(rules, base_model_name(model), (when or datetime.now(UTC)).date(), default)


@lru_cache(maxsize=4096)
def _picked(rules: tuple[DatedRule, ...], name: str, day: date, default: int) -> int:
    """Once per rule set, model and day: the cache simulator asks at every request."""
    matching = [r for r in rules if name.startswith(r.model) and r.since <= day]
    if not matching:
        return default
    longest = max(len(r.model) for r in matching)
    return max((r for r in matching if len(r.model) == longest), key=lambda r: r.since).value


# Minimum cacheable prefix (tokens) for Anthropic models; a shorter prefix is silently not
# cached. Source: platform.claude.com prompt-caching docs (as archived 2026-08).
ANTHROPIC_MINIMUM: tuple[DatedRule, ...] = (
    DatedRule("claude", 1024),
    DatedRule("claude-opus-4-5", 4096),
    DatedRule("claude-opus-4-6", 4096),
    DatedRule("claude-haiku-4-5", 4096),
    DatedRule("claude-opus-4-7", 4096),
    DatedRule("claude-opus-4-7", 2048, date(2026, 6, 9)),
    DatedRule("claude-3-5-haiku", 2048),
    DatedRule("claude-3-haiku", 2048),
    DatedRule("claude-sonnet-4-6", 1024),
    DatedRule("claude-sonnet-4-6", 2048, date(2026, 3, 1)),
    DatedRule("claude-sonnet-4-6", 1024, date(2026, 5, 11)),
    DatedRule("claude-sonnet-4-5", 1024),
    DatedRule("claude-opus-4-1", 1024),
    DatedRule("claude-opus-4-0", 1024),
    DatedRule("claude-sonnet-4-0", 1024),
)

# OpenAI automatic caching: retention of an idle prefix, in seconds. in_memory is 5-10
# minutes (10 used); 24h is the default for most organisations since 2026-06-01.
OPENAI_RETENTION: tuple[DatedRule, ...] = (
    DatedRule("gpt", 600),
    DatedRule("o", 600),
    DatedRule("gpt", 86_400, date(2026, 6, 1)),
    DatedRule("o", 86_400, date(2026, 6, 1)),
    DatedRule("gpt-5.6", 1_800),
)

# OpenAI models that bill cache writes (GPT-5.6 and later): 1 when they do.
OPENAI_WRITES: tuple[DatedRule, ...] = (
    DatedRule("gpt-5.6", 1),
    DatedRule("gpt-5.7", 1),
    DatedRule("gpt-6", 1),
)


@dataclass(frozen=True, slots=True)
class CacheRules:
    anthropic_minimum: tuple[DatedRule, ...] = ANTHROPIC_MINIMUM
    openai_retention: tuple[DatedRule, ...] = OPENAI_RETENTION
    openai_writes: tuple[DatedRule, ...] = OPENAI_WRITES
    anthropic_max_breakpoints: int = 4
    anthropic_lookback: int = 20
    ttl_seconds: dict[str, int] = field(default_factory=lambda: {"5m": 300, "1h": 3600})
    openai_minimum: int = 1024
    openai_increment: int = 128
    default_gap_seconds: float = 5.0
    """Time between calls of a trace that recorded no dates."""
    session_gap_seconds: float = 172_800.0
    """A longer pause between two calls of one cassette (longer than any cache lives) means
    it was recorded again later: the cache starts afresh, and may start warm."""
    warm_starts: str = "steady"
    """What a request a variant changed finds cached before the recording began (see
    :data:`WARM_STARTS`)."""

    def minimum(self, model: str, when: datetime | None) -> int:
        return _pick(self.anthropic_minimum, model, when, 1024)

    def retention(self, model: str, when: datetime | None) -> int:
        return _pick(self.openai_retention, model, when, 600)

    def openai_bills_writes(self, model: str, when: datetime | None) -> bool:
        return bool(_pick(self.openai_writes, model, when, 0))

    def openai_granularity(self, model: str, when: datetime | None) -> int:
        """Tokens a reported OpenAI read is a multiple of: 128 (matched in 128-token
        increments) for automatic caching; 1 for models with explicit, billed writes
        (GPT-5.6+), whose recordings read back exactly what they wrote."""
        return 1 if self.openai_bills_writes(model, when) else self.openai_increment

    def with_overrides(self, overrides: Iterable[tuple[str, str, int, date | None]]) -> CacheRules:
        """Rules plus user overrides: (rule name, model prefix, value, since)."""
        minimum = list(self.anthropic_minimum)
        retention = list(self.openai_retention)
        targets = {"anthropic_minimum": minimum, "openai_retention": retention}
        for name, model, value, since in overrides:
            targets[name].append(DatedRule(model, value, since or date(2000, 1, 1)))
        return replace(self, anthropic_minimum=tuple(minimum), openai_retention=tuple(retention))

    def with_gap(self, seconds: float | None) -> CacheRules:
        """Rules assuming ``seconds`` between calls of traces without recorded dates."""
        if seconds is None:
            return self
        if not math.isfinite(seconds) or seconds < 0:
            raise ConfigError(f"a gap between calls is 0 seconds or more, not {seconds!r}")
        return replace(self, default_gap_seconds=seconds)

    def with_warm(self, mode: str | None) -> CacheRules:
        """Rules whose changed requests find warm what ``mode`` says (None: unchanged)."""
        if mode is None:
            return self
        if mode not in WARM_STARTS:
            raise ConfigError(f"warm starts are {' or '.join(WARM_STARTS)}, not {mode!r}")
        return replace(self, warm_starts=mode)


WARM_STARTS = {
    "steady": "each run once the change ships: the sessions before the recording sent the "
    "changed requests too, so a changed request reads the cache the recording found warm at "
    "the same place of its prefix",
    "first": "the first run after the change ships: the cache holds what the recorded "
    "requests wrote, so a changed request reads it only as far as its prefix is unchanged",
}
"""How a recording's warm start (a cache written before it began) carries over to a variant."""


def default_rules() -> CacheRules:
    return CacheRules()
