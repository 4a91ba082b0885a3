"""A test's row in the plugin's summary: its cells, money columns with one number of decimals."""

from __future__ import annotations

from decimal import Decimal

from costsim.api.testing import TestCost, WhatIfCost
from costsim.render.band_text import spread_text
from costsim.render.text import money, money_places, percent

__all__ = ["cells", "cost_text", "what_if_cell", "what_if_change"]


def _partial(
    priced: Decimal,
    unknown: int,
    calls: int | None = None,
    decimals: int | None = None,
    *,
    unpriced: bool = True,
) -> str:
    """``$0.0040``; a partial cost is starred (a note says what the star means); a cost with
    nothing priced reads ``unpriced``, never $0. ``decimals``: the column's."""
    shown = money(priced, decimals)
    if not unknown:
        return shown
    if not priced and (calls is None or unknown >= calls):
        return "unpriced" if unpriced else "unknown"
    return f"≥{shown}*"


def cost_text(cost: TestCost, decimals: int | None = None) -> str:
    unknown = cost.unpriced_calls + cost.unrecognised_calls
    calls = cost.calls + cost.unrecognised_calls
    return _partial(
        cost.priced_cost_usd, unknown, calls, decimals, unpriced=bool(cost.unpriced_calls)
    )


def _calls(cost: TestCost, flags: bool = True) -> str:
    """Calls, with how many were estimated (no usage), drifted (a changed request),
    errored, or only looked like LLM calls costsim cannot meter (in no other figure)
    (``flags``: else the count alone, as the TOTAL row writes it: the notes under the
    table count them, and its long cell took the room of the test names)."""
    if not flags:
        return str(cost.calls)
    said = [
        f"{count} {label}"
        for count, label in (
            (cost.unrecorded_calls, "est."),
            (cost.drifted_calls, "drifted"),
            (cost.errored_calls, "errored"),
            (cost.unrecognised_calls, "not metered"),
        )
        if count
    ]
    return f"{cost.calls} ({', '.join(said)})" if said else str(cost.calls)


def cells(cost: TestCost, decimals: int | None = None, *, flags: bool = True) -> dict[str, str]:
    return {
        "calls": _calls(cost, flags),
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


def what_if_change(value: WhatIfCost | None, tests: TestCost) -> str:
    """``: saves $0.0123 (12.3%) of $0.1000, p90 band $0.0113 to $0.0133; 1 divergence``:
    what a what-if column changes in the tests' cost, said as ``compare`` says a variant's
    Δ, with the band of that change (the estimates the tests' cost shares with it cancel
    out: a strategy that changes nothing costs the same, exactly; a saving reaches no
    further than what the calls it changes cost) and its divergences; only the divergences
    when the change is not known (a call without a price that the what-if bills otherwise
    than the tests' cost does; one billed alike in both cancels)."""
    if value is None:
        return ""
    count = value.divergences
    risks = f"; {count:,} divergence{'s' * (count != 1)}" if count else ""
    before = tests.cost_usd
    if value.cost_usd is not None and before is not None:
        delta: Decimal | None = value.cost_usd - before
    else:  # calls without a price, billed alike in both: their unknown cost cancels
        delta = value.delta
    if delta is None:
        return risks
    reach = before if value.touched is None else value.touched
    if before is not None and value.touched is not None:
        reach = min(value.touched, before)
    low = delta - value.change.below
    if reach is not None:  # no saving beyond the calls it changes
        low = max(low, min(-reach, delta))
    high = delta + value.change.above
    places = money_places([tests.priced_cost_usd, delta, low, high])
    share = f"{abs(delta) / before:.1%}" if before else ""
    base = (
        money(before, places) if before is not None else f"≥{money(tests.priced_cost_usd, places)}*"
    )
    if delta < 0:
        said = f"saves {money(-delta, places)}{f' ({share})' if share else ''} of {base}"
        band = f"p90 band {_amount(-high, places)} to {_amount(-low, places)}"
    else:
        said = f"adds {money(delta, places)}{f' (+{share})' if share else ''}" if delta else ""
        said = said or "costs the same as the tests"
        band = f"p90 Δ {_signed(low, places)} to {_signed(high, places)}"
    if not value.change_estimated:
        return f": {said}, exact{risks}" if delta else f": {said}{risks}"
    if not value.change:  # simulated, its band below a millionth: as compare says it
        return f": {said}, p90 band {spread_text(value.change, places)}{risks}"
    return f": {said}, {band}{risks}"


def _amount(amount: Decimal, places: int) -> str:
    """``$0.0477``; ``-$0.0404`` (a saving's band that reaches below nothing)."""
    return ("-" if amount < 0 else "") + money(abs(amount), places)


def _signed(amount: Decimal, places: int) -> str:
    return ("-" if amount < 0 else "+") + money(abs(amount), places)
