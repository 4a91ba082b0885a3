"""What a recording's embeddings requests cost: not LLM calls, so in no LLM total, but billed
(a trial's 1.2M-token ``text-embedding-3-large`` request, $0.156, was 99.7% of its bill and
nowhere in the report). Each is priced at its input tokens from the price list of the host
that served it (an unknown host: the model's maker's, OpenAI's), at its recorded date or
``as_of``; a model without a price leaves the cost a lower bound, as an LLM call's does.

``costsim report`` sums a recording's; the pytest plugin sums those a test run replays (each
replay, as it counts an LLM call replayed twice), its xdist workers' through the JSON of
:meth:`EmbeddingTotals.to_json`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

from costsim.metering.tokenizers import counter
from costsim.model import CassetteTrace, EmbeddingCall, Provenance, Usage
from costsim.pricing.hosts import host_provider
from costsim.pricing.money import amount_text
from costsim.pricing.prices import price

__all__ = ["EmbeddingTotals", "UnpricedEmbedding", "embedding_tokens", "embedding_totals"]

ENCODING = "cl100k_base"
"""What counts the input of a request whose usage was not recorded: the encoding of OpenAI's
embeddings models (``text-embedding-3-*``, ``ada-002``, as tiktoken maps them); another
maker's model (Voyage, a local one) is counted with it too, an estimate."""


def embedding_tokens(call: EmbeddingCall) -> int:
    """The call's input tokens: as its response reported them, else counted offline from
    what it sent (token arrays as their length)."""
    if call.tokens is not None:
        return call.tokens
    sent = call.sent
    if sent is None:  # a reader never makes one: an estimate needs the input
        return 0
    count = counter(ENCODING)
    return sent.tokens + sum(count(text) for text in sent.texts)


@dataclass(frozen=True, slots=True)
class UnpricedEmbedding:
    """An embeddings request without a price: where it was recorded, its model, and why."""

    provenance: Provenance
    model: str
    reason: str

    def __str__(self) -> str:
        return f"{self.provenance}: {self.reason}"


@dataclass(slots=True)
class EmbeddingTotals:
    calls: int = 0
    tokens: int = 0
    priced_cost: Decimal = Decimal(0)
    unpriced_calls: int = 0
    estimated_calls: int = 0
    """Calls whose response recorded no usage: their tokens counted from their input."""
    models: Counter[str] = field(default_factory=Counter)
    """Calls per model, as the recording names it."""
    unpriced: list[UnpricedEmbedding] = field(default_factory=list)
    """Each call without a price (each replay of it, in a test run), as a test's unpriced
    LLM calls are listed."""

    @property
    def cost_usd(self) -> Decimal | None:
        """The whole cost; None when a call has no price (``priced_cost`` is a lower bound)."""
        return None if self.unpriced_calls else self.priced_cost

    def add(self, call: EmbeddingCall, as_of: datetime | None) -> None:
        tokens = embedding_tokens(call)
        self.calls += 1
        self.tokens += tokens
        self.estimated_calls += call.estimated
        self.models[call.model] += 1
        provider = host_provider(call.host) or "openai"
        when = as_of or call.recorded_at
        cost = price(Usage(uncached_input=tokens), model=call.model, provider=provider, at=when)
        if cost.priced and cost.amount is not None:
            self.priced_cost += cost.amount
        else:
            self.unpriced_calls += 1
            reason = cost.unpriced_reason or "no price"
            self.unpriced.append(UnpricedEmbedding(call.provenance, call.model, reason))

    def merge(self, other: EmbeddingTotals) -> None:
        self.calls += other.calls
        self.tokens += other.tokens
        self.priced_cost += other.priced_cost
        self.unpriced_calls += other.unpriced_calls
        self.estimated_calls += other.estimated_calls
        self.models.update(other.models)
        self.unpriced.extend(other.unpriced)

    def to_json(self, *, listed: bool = False) -> dict[str, Any]:
        """The figures as a report's JSON ``embeddings`` holds them; ``listed``: with the
        ``unpriced`` calls, each as recorded (an xdist worker's, for its controller: a
        report's own list names files as its renderer shows them)."""
        document: dict[str, Any] = {
            "calls": self.calls,
            "tokens": self.tokens,
            "cost_usd": amount_text(self.cost_usd),
            "priced_cost_usd": amount_text(self.priced_cost),
            "unpriced_calls": self.unpriced_calls,
            "estimated_calls": self.estimated_calls,
            "models": dict(sorted(self.models.items())),
        }
        if listed:
            document["unpriced"] = [
                {
                    "path": str(u.provenance.path),
                    "interaction": u.provenance.index,
                    "model": u.model,
                    "reason": u.reason,
                }
                for u in self.unpriced
            ]
        return document

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> EmbeddingTotals:
        """Figures :meth:`to_json` wrote (an xdist worker's, ``listed``); a key missing is
        none (a worker that could not gather its figures sends none)."""
        return cls(
            calls=int(data.get("calls", 0)),
            tokens=int(data.get("tokens", 0)),
            priced_cost=Decimal(data.get("priced_cost_usd", "0")),
            unpriced_calls=int(data.get("unpriced_calls", 0)),
            estimated_calls=int(data.get("estimated_calls", 0)),
            models=Counter({str(k): int(v) for k, v in data.get("models", {}).items()}),
            unpriced=[
                UnpricedEmbedding(
                    Provenance(Path(u["path"]), int(u["interaction"])),
                    str(u["model"]),
                    str(u["reason"]),
                )
                for u in data.get("unpriced", [])
            ],
        )


def embedding_totals(traces: Iterable[CassetteTrace], as_of: datetime | None) -> EmbeddingTotals:
    """The embeddings requests of ``traces``, summed and priced."""
    totals = EmbeddingTotals()
    for trace in traces:
        for call in trace.embeddings:
            totals.add(call, as_of)
    return totals
