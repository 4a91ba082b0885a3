"""Per-test budgets: limits on one test's LLM calls, from markers or ``[tool.costsim]``."""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, NonNegativeInt, ValidationError

from costsim.errors import ConfigError
from costsim.pricing.money import money

if TYPE_CHECKING:
    from costsim.analysis.baseline import TestCost

__all__ = ["Budget", "budget_failures"]


class Budget(BaseModel):
    """Limits on one test's LLM calls; any left unset is not checked."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    prompt_tokens: NonNegativeInt | None = None
    output_tokens: NonNegativeInt | None = None
    cost_usd: Annotated[float, Field(ge=0)] | None = None
    cache_hit_rate_min: Annotated[float, Field(ge=0, le=1)] | None = None
    calls: NonNegativeInt | None = None
    """LLM calls the test may make (an agent loop that runs away shows here first)."""

    @classmethod
    def parse(cls, values: Mapping[str, Any], where: str) -> Budget:
        """Validate ``values`` (a marker's kwargs or a ``[tool.costsim]`` entry)."""
        try:
            return cls.model_validate({k: v for k, v in values.items() if k != "pattern"})
        except ValidationError as exc:
            error = exc.errors()[0]
            key = ".".join(str(part) for part in error["loc"][:1]) or "budget"
            if error["type"] == "extra_forbidden":
                close = difflib.get_close_matches(key, list(cls.model_fields), n=1)
                hint = f"did you mean {close[0]!r}? " if close else ""
                message = f"unknown budget key; {hint}valid: {', '.join(cls.model_fields)}"
            else:
                message = f"{error['msg']} (got {error.get('input')!r})"
            raise ConfigError(f"{where}: {key}: {message}") from None


def _cost_failure(test: str, cost: TestCost, limit: float) -> str | None:
    """A cost budget: the whole cost, or — with unpriced calls — the priced part as a floor."""
    bound = Decimal(str(limit))
    if cost.cost_usd is not None:
        if cost.cost_usd > bound:
            return f"{test}: cost_usd {money(cost.cost_usd)} over the budget of {money(bound)}"
        return None
    unknown = []
    if cost.unpriced_calls:
        unknown.append(f"+{cost.unpriced_calls} unpriced")
    if cost.unrecognised_calls:
        missed = cost.unrecognised_calls
        unknown.append(f"+{missed} LLM-looking interaction{'s' * (missed != 1)} not metered")
    floor = f"≥{money(cost.priced_cost_usd)} ({', '.join(unknown)})"
    if cost.priced_cost_usd > bound:
        return f"{test}: cost_usd {floor} over the budget of {money(bound)}"
    fix = "price the model" if cost.unpriced_calls else "record it with an API costsim meters"
    return (
        f"{test}: cost_usd {floor} cannot be checked against the budget of {money(bound)}: "
        f"budget its tokens instead, or {fix}"
    )


@dataclass(frozen=True, slots=True)
class _Limit:
    """One token or rate budget key: the figure it limits and how an excess is worded."""

    key: str
    actual: Callable[[TestCost], int | float]
    shown: Callable[[int | float], str]
    minimum: bool = False

    def fails(self, test: str, cost: TestCost, limit: float | None) -> str | None:
        if limit is None:
            return None
        actual = self.actual(cost)
        if (actual < limit) if self.minimum else (actual > limit):
            side = "under the minimum of" if self.minimum else "over the budget of"
            label = self.key.removesuffix("_min")
            failure = f"{test}: {label} {self.shown(actual)} {side} {self.shown(limit)}"
            if self.key == "calls" and cost.errored_calls:  # a retried error is a call too
                failure += f" ({cost.errored_calls:,} of them errored, unbilled)"
            return failure
        return None


_LIMITS = (
    _Limit("prompt_tokens", lambda c: c.prompt_tokens, lambda v: f"{v:,}"),
    _Limit("output_tokens", lambda c: c.output_tokens, lambda v: f"{v:,}"),
    _Limit(
        "cache_hit_rate_min", lambda c: c.cache_hit_rate or 0.0, lambda v: f"{v:.1%}", minimum=True
    ),
    _Limit("calls", lambda c: c.calls, lambda v: f"{v:,}"),
)


def budget_failures(test: str, cost: TestCost, budget: Budget) -> list[str]:
    """One sentence per limit the test went over: test, metric, limit, actual."""
    checked = [limit.fails(test, cost, getattr(budget, limit.key)) for limit in _LIMITS]
    if budget.cost_usd is not None:
        checked.insert(2, _cost_failure(test, cost, budget.cost_usd))
    return [failure for failure in checked if failure is not None]
