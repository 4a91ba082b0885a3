"""What a recording's embeddings requests cost: not LLM calls, so in no LLM total, but billed
(a trial's 1.2M-token ``text-embedding-3-large`` request, $0.156, was 99.7% of its bill and
nowhere in the report). Each is priced at its input tokens from the price list of the host
that served it (an unknown host: the model's maker's, OpenAI's), at its recorded date or
``as_of``; a model without a price leaves the cost a lower bound, as an LLM call's does.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal

from costsim.model import CassetteTrace, EmbeddingCall, Usage
from costsim.pricing.hosts import host_provider
from costsim.pricing.prices import price

__all__ = ["EmbeddingTotals", "embedding_totals"]


@dataclass(slots=True)
class EmbeddingTotals:
    calls: int = 0
    tokens: int = 0
    priced_cost: Decimal = Decimal(0)
    unpriced_calls: int = 0
    models: Counter[str] = field(default_factory=Counter)
    """Calls per model, as the recording names it."""

    @property
    def cost_usd(self) -> Decimal | None:
        """The whole cost; None when a call has no price (``priced_cost`` is a lower bound)."""
        return None if self.unpriced_calls else self.priced_cost

    def add(self, call: EmbeddingCall, as_of: datetime | None) -> None:
        self.calls += 1
        self.tokens += call.tokens
        self.models[call.model] += 1
        provider = host_provider(call.host) or "openai"
        when = as_of or call.recorded_at
        cost = price(
            Usage(uncached_input=call.tokens), model=call.model, provider=provider, at=when
        )
        if cost.priced and cost.amount is not None:
            self.priced_cost += cost.amount
        else:
            self.unpriced_calls += 1


def embedding_totals(traces: Iterable[CassetteTrace], as_of: datetime | None) -> EmbeddingTotals:
    """The embeddings requests of ``traces``, summed and priced."""
    totals = EmbeddingTotals()
    for trace in traces:
        for call in trace.embeddings:
            totals.add(call, as_of)
    return totals
