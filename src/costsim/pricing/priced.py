"""The price of one call: an amount in USD, or why there is none (and the part known)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal

from costsim.pricing.reads import ReadPricing
from costsim.pricing.snapshots import EarlySnapshot

__all__ = ["Price"]


@dataclass(frozen=True, slots=True)
class Price:
    """The cost of one call, or why it has none."""

    amount: Decimal | None
    model_id: str | None = None
    unpriced_reason: str | None = None
    priced_at: datetime | None = None
    undated: bool = False
    """True when no date was known and today's prices were used."""
    source: str = "genai-prices"
    """Where the amount comes from: ``genai-prices``, or ``gateway`` (the cost a gateway
    recorded in the response, used when genai-prices has no price for the model)."""
    lower_bound: Decimal = Decimal(0)
    """For an unpriced call, the part that could be priced (its tokens, when only a per-use
    fee has no price)."""
    reads: ReadPricing = ReadPricing.OWN
    """How its cache reads were priced, when the model has no cached-input price of its own
    (see :mod:`costsim.pricing.reads`)."""
    early: EarlySnapshot | None = None
    """Set when priced at ``--as-of`` before the snapshot date its model's id names (see
    :mod:`costsim.pricing.snapshots`)."""

    @property
    def priced(self) -> bool:
        return self.amount is not None
