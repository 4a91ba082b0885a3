"""A changed call is billed as recorded plus the change the simulation makes, class by class.

The cache simulator replays a recording with the provider's rules, from what the client sent.
Where the provider billed something the client's requests do not show (a server-side tool
whose own iterations read the cache, an entry warmed by a process the cassette did not
record), the replay of the recording differs from the bill. A variant simulated the same way
carries the same gap; so a changed call is billed as

    recorded usage + (variant's simulated usage - recording's simulated usage)

for each token class. The gap stays out of the variant's change, as in a like-for-like
comparison, and out of its cost too: the variant's cost is the recording's plus its change,
so a saving never exceeds what the calls cost, and a call routed to another model keeps the
cache reads the replay cannot explain (a server-side tool's own), priced at the new model;
reads the replay does explain (an entry the old model wrote, in the trace or before it)
follow the new model's own simulation. What a class has beyond the replay
shrinks with the prompt, in proportion (a server-side loop re-reads what it is sent); what it
lacks (a read the provider did not serve) stays as it was. A class cannot go below zero or
past the prompt's total; what would is clamped (reads first, then 1h and 5m writes), and the
prompt's remaining tokens are uncached.
"""

from __future__ import annotations

import dataclasses

from costsim.engine.results import SimulatedCall, TraceResult
from costsim.model import Usage, split_prompt
from costsim.pricing.platform_ids import price_list
from costsim.pricing.prices import today
from costsim.pricing.tiers import listed_from
from costsim.strategies.trace import SimCall

__all__ = ["anchored", "billed_tier", "estimated_as_replayed"]


def anchored(recorded: Usage, variant: Usage, replay: Usage) -> Usage:
    """``variant`` (the simulation of a changed call) moved onto ``recorded`` (what the call
    was billed) by the difference between ``replay`` (the simulation of the call as recorded)
    and ``recorded``, class by class. ``variant`` when the replay is the recording."""
    if replay == recorded:
        return variant
    total = max(recorded.prompt_total + variant.prompt_total - replay.prompt_total, 0)

    def gap(billed: int, replayed: int) -> int:
        # tokens the bill has beyond the replay shrink with the prompt (a server-side
        # loop re-reads what it is sent); fewer (a read not served) stay as they were
        more = billed - replayed
        if more <= 0 or variant.prompt_total >= replay.prompt_total:
            return more
        return (more * variant.prompt_total + replay.prompt_total // 2) // replay.prompt_total

    split = split_prompt(
        total,
        variant.cache_read + gap(recorded.cache_read, replay.cache_read),
        variant.cache_write_1h + gap(recorded.cache_write_1h, replay.cache_write_1h),
        variant.cache_write_5m + gap(recorded.cache_write_5m, replay.cache_write_5m),
    )
    output = max(recorded.output + variant.output - replay.output, 0)
    reasoning = variant.reasoning
    if reasoning is not None and recorded.reasoning is not None and replay.reasoning is not None:
        reasoning = recorded.reasoning + reasoning - replay.reasoning
    return dataclasses.replace(
        variant,
        uncached_input=split.uncached_input,
        cache_read=split.cache_read,
        cache_write_5m=split.cache_write_5m,
        cache_write_1h=split.cache_write_1h,
        output=output,
        reasoning=None if reasoning is None else min(max(reasoning, 0), output),
        web_searches=max(recorded.web_searches + variant.web_searches - replay.web_searches, 0),
    )


def estimated_as_replayed(replay: TraceResult) -> dict[int, SimulatedCall]:
    """The recorded calls without usage, by identity, as ``replay`` (the recording simulated)
    bills them: the estimated prompt split by the provider's caching rules (OpenAI caches a
    repeated prefix unasked; a breakpoint the request carries caches on Anthropic), with the
    replay's cache result, so a read the provider may not have served is banded. They used
    to be billed wholly uncached: an estimate above what such a recording was billed."""
    return {
        id(origin): dataclasses.replace(item, sim=SimCall(origin, origin), resimulated=False)
        for item in replay.calls
        if (origin := item.sim.origin) is not None
        and origin.usage is None
        and origin.usage_hint is None  # a cut stream keeps the input counts it recorded
        and not origin.errored
        and item.usage is not None
    }


def billed_tier(item: SimCall, origin: Usage | None) -> str | None:
    """The service tier a simulated request is billed at: its recording's, unless the request
    now goes to a model with no price at that tier (routed), which bills it at standard."""
    tier = origin.tier if origin is not None else None
    call = item.call
    if tier is None or item.origin is None or call.model == item.origin.model:
        return tier
    when = call.recorded_at or today()
    return tier if listed_from(*price_list(call), tier, when) else None
