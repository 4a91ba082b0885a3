"""Per-breakpoint economics: for each breakpoint position (tools, system, message N, last
message, automatic), the tokens it wrote and that were read back from it, and the dollars it
made or lost: what its reads saved against paying full input price, minus the premium its
writes paid over full input price.

Computed from the cache simulation of the calls a variant re-simulated; calls billed as
recorded have no simulated breakpoints to attribute.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal

from costsim.engine.simulate import SimulatedCall, TraceResult
from costsim.pricing.platform_ids import price_list
from costsim.pricing.units import unit_prices

__all__ = ["BreakpointEconomics", "breakpoint_economics"]


@dataclass(slots=True)
class BreakpointEconomics:
    position: str
    writes: int = 0
    tokens_written_5m: int = 0
    tokens_written_1h: int = 0
    reads: int = 0
    tokens_read: int = 0
    saved_usd: Decimal | None = Decimal(0)
    """What reads of its entries saved against the input price."""
    premium_usd: Decimal | None = Decimal(0)
    """What its writes paid above the input price."""

    @property
    def tokens_written(self) -> int:
        return self.tokens_written_5m + self.tokens_written_1h

    @property
    def net_usd(self) -> Decimal | None:
        if self.saved_usd is None or self.premium_usd is None:
            return None
        return self.saved_usd - self.premium_usd


def _add(value: Decimal | None, amount: Decimal | None) -> Decimal | None:
    return None if value is None or amount is None else value + amount


def _account(
    table: dict[str, BreakpointEconomics], item: SimulatedCall, as_of: datetime | None
) -> None:
    cache, usage, call = item.cache, item.modelled, item.call
    if cache is None or usage is None:
        return
    prices = unit_prices(
        *price_list(call, prompt=usage.prompt_total),
        as_of or call.recorded_at,
        prompt=usage.prompt_total,
        base_tier=usage.base_tier,
        tier=usage.tier,
    )
    if cache.read and cache.read_label:
        row = table.setdefault(cache.read_label, BreakpointEconomics(cache.read_label))
        row.reads += 1
        row.tokens_read += cache.read
        saving = None if prices is None else cache.read * (prices.input - prices.cache_read)
        row.saved_usd = _add(row.saved_usd, saving)
    for write in cache.writes:
        row = table.setdefault(write.label, BreakpointEconomics(write.label))
        row.writes += 1
        if write.ttl == "1h":
            row.tokens_written_1h += write.tokens
        else:
            row.tokens_written_5m += write.tokens
        price = None if prices is None else prices.of(write.ttl) - prices.input
        row.premium_usd = _add(row.premium_usd, None if price is None else write.tokens * price)


def _order(position: str) -> tuple[int, int, str]:
    fixed = {"tools": 0, "system": 1, "last message": 3, "automatic": 4, "warm start": 5}
    if position.startswith("message "):
        return 2, int(position.split()[1]), position
    return fixed.get(position, 6), 0, position


def breakpoint_economics(
    traces: Iterable[TraceResult], *, as_of: datetime | None = None
) -> list[BreakpointEconomics]:
    """One row per breakpoint position, in prompt order."""
    table: dict[str, BreakpointEconomics] = {}
    for trace in traces:
        for item in trace.calls:
            if item.resimulated:
                _account(table, item, as_of)
    return [table[name] for name in sorted(table, key=_order)]
