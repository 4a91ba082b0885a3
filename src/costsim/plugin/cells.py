"""A test's row in the plugin's summary: its cells, money columns with one number of decimals."""

from __future__ import annotations

from decimal import Decimal

from costsim.api.testing import TestCost, WhatIfCost
from costsim.render.text import money, percent

__all__ = ["cells", "cost_text", "what_if_cell"]


def _partial(
    priced: Decimal, unknown: int, calls: int | None = None, decimals: int | None = None
) -> str:
    """``$0.0040``; a partial cost is starred (a note says what the star means); a cost with
    nothing priced reads ``unpriced``, never $0. ``decimals``: the column's."""
    shown = money(priced, decimals)
    if not unknown:
        return shown
    if not priced and (calls is None or unknown >= calls):
        return "unpriced"
    return f"≥{shown}*"


def cost_text(cost: TestCost, decimals: int | None = None) -> str:
    return _partial(cost.priced_cost_usd, cost.unpriced_calls, cost.calls, decimals)


def _calls(cost: TestCost) -> str:
    """Calls, with how many were estimated (no usage) or drifted (a changed request)."""
    flags = [
        f"{count} {label}"
        for count, label in (
            (cost.unrecorded_calls, "est."),
            (cost.drifted_calls, "drifted"),
            (cost.errored_calls, "errored"),
        )
        if count
    ]
    return f"{cost.calls} ({', '.join(flags)})" if flags else str(cost.calls)


def cells(cost: TestCost, decimals: int | None = None) -> dict[str, str]:
    return {
        "calls": _calls(cost),
        "prompt": f"{cost.prompt_tokens:,}",
        "uncached": f"{cost.uncached_input_tokens:,}",
        "cache read": f"{cost.cache_read_tokens:,}",
        "cache write": f"{cost.cache_write_tokens:,}",
        "output": f"{cost.output_tokens:,}",
        "hit rate": percent(cost.cache_hit_rate),
        "cost": cost_text(cost, decimals),
    }


def what_if_cell(value: WhatIfCost | None, decimals: int | None = None) -> str:
    return "-" if value is None else _partial(value.priced, value.unpriced_calls, None, decimals)
