"""Scenario files: which recordings, which variants, which budgets. Validated with pydantic."""

from __future__ import annotations

import re
from datetime import date
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

__all__ = ["AgentRule", "Budget", "ModelRule", "Pricing", "Scenario", "StrategyEntry"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Pricing(_Strict):
    as_of: date | None = None
    """Price every call at this date instead of its recorded date."""


class ModelRule(_Strict):
    """An override of a dated caching rule (see costsim.cache.rules)."""

    rule: Literal["anthropic_minimum", "openai_retention"]
    model: str
    value: int = Field(ge=0)
    since: date | None = None


class AgentRule(_Strict):
    """How calls of an agent role are recognised: a regex on the system prompt, or the
    cassette files (globs, relative to the scenario) that hold only that role's calls."""

    match: str | None = None
    cassettes: list[str] = []
    tier: Literal["light", "standard", "heavy"] | None = None

    @field_validator("match")
    @classmethod
    def _regex(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                re.compile(value)
            except re.error as exc:
                raise ValueError(f"not a valid regular expression ({exc})") from None
        return value


class Budget(_Strict):
    max_prompt_tokens: int | None = Field(default=None, ge=0)
    max_output_tokens: int | None = Field(default=None, ge=0)
    max_cost_usd: float | None = Field(default=None, ge=0)
    max_regression_pct: float | None = None
    """The variant may cost at most this % more than the recorded baseline."""


StrategyEntry = str | dict[str, dict[str, Any] | None]
"""``caching`` or ``{caching: {ttl: 1h}}``."""


class Scenario(_Strict):
    name: str
    description: str = ""
    cassettes: list[str] = Field(min_length=1)
    pricing: Pricing = Pricing()
    model_rules: list[ModelRule] = []
    agents: dict[str, AgentRule] = {}
    variants: dict[str, list[StrategyEntry]] = Field(min_length=1)
    budgets: dict[str, Budget] = {}
    """Per variant name; ``"*"`` applies to every variant."""
