"""Scenario files: which recordings, which variants, which budgets. Validated with pydantic."""

from __future__ import annotations

import re
from datetime import date
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator

__all__ = ["AgentRule", "Budget", "ModelRule", "Pricing", "Scenario", "StrategyEntry"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)


class Pricing(_Strict):
    """How calls are priced."""

    as_of: date | None = None
    """Price every call at this date instead of its recorded date."""


class ModelRule(_Strict):
    """An override of a dated caching rule (see costsim.cache.rules)."""

    rule: Literal["anthropic_minimum", "openai_retention"]
    """``anthropic_minimum``: the minimum cacheable prefix (tokens); ``openai_retention``: how
    long OpenAI keeps a cached prefix (seconds)."""
    model: str
    """The model the rule is for (a prefix matches its dated versions)."""
    value: int = Field(ge=0)
    """The rule's value (tokens or seconds)."""
    since: date | None = None
    """From this date on (recorded calls before it keep the shipped rule)."""


class AgentRule(_Strict):
    """How calls of an agent role are recognised: a regex on the system prompt, or the
    cassette files (globs, relative to the scenario) that hold only that role's calls."""

    match: str | None = None
    """A regular expression searched in the system prompt."""
    cassettes: list[str] = []
    """Globs of cassette files (relative to the scenario) that hold only this role's calls."""
    tier: Literal["light", "standard", "heavy"] | None = None
    """The role's cost tier, which ``routing`` maps to a model."""

    @field_validator("match")
    @classmethod
    def _regex(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                re.compile(value)
            except re.error as exc:
                raise ValueError(f"not a valid regular expression ({exc})") from None
        return value


def _percent(value: Any) -> Any:
    """``5``, ``5%`` or ``"2.5 %"`` -> the number (the same percentages the CLI takes)."""
    if isinstance(value, str):
        text = value.strip().removesuffix("%").strip()
        try:
            return float(text)
        except ValueError:
            raise ValueError(f"expected a percentage (5 or 5%), got {value!r}") from None
    return value


class Budget(_Strict):
    """Limits a variant must stay within; ``compare`` exits 1 when one is broken."""

    max_prompt_tokens: int | None = Field(default=None, ge=0)
    """Prompt tokens of the whole variant (cached or not)."""
    max_output_tokens: int | None = Field(default=None, ge=0)
    """Output tokens of the whole variant (thinking included)."""
    max_cost_usd: float | None = Field(default=None, ge=0)
    """Dollars of the whole variant; an unpriced variant breaks it (its cost is unknown)."""
    max_regression_pct: Annotated[float | None, BeforeValidator(_percent)] = Field(
        default=None, ge=0
    )
    """The variant's Δ % may be at most this (5 or 5%): its cost change against the recording,
    as the table's Δ % column shows it."""


StrategyEntry = str | dict[str, dict[str, Any] | None]
"""``caching``, ``caching:ttl=1h`` (the strategy syntax) or ``{caching: {ttl: 1h}}``."""


class Scenario(_Strict):
    """A scenario file: which recordings, which variants, which budgets."""

    name: str
    """Printed above the scenario's table."""
    description: str = ""
    """One or two sentences under the name."""
    cassettes: list[str] = Field(min_length=1)
    """Globs of cassette files (or folders), relative to the scenario file."""
    pricing: Pricing = Pricing()
    """``as_of``: price every call at this date instead of its recorded date."""
    model_rules: list[ModelRule] = []
    """Overrides of dated caching rules (minimum cacheable prefix, OpenAI retention)."""
    warm: Literal["steady", "first"] | None = None
    """A cache the recording found warm (written before it began), for requests a variant
    changed: ``steady``, each run once the change ships (read at the same place of the changed
    prefix); ``first``, the first run after it ships (read only as far as the prefix is
    unchanged). Unset: ``[tool.costsim] warm``, else steady; ``compare --warm`` overrides it."""
    agents: dict[str, AgentRule] = {}
    """Agent roles: how their calls are recognised, their cost tier (routing, --by agent)."""
    variants: dict[str, list[Any] | str] = Field(min_length=1)
    """Name -> the strategies applied in order: a list of entries (``caching``,
    ``caching:ttl=1h``, ``{caching: {ttl: 1h}}``), or one line of strategy syntax
    (``truncation & caching:ttl=1h``)."""
    budgets: dict[str, Budget] = {}
    """Per variant name; ``"*"`` applies to every variant."""
