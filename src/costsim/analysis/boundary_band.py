"""The band terms of where a billed call's cache segments meet: a cache boundary whose
position is an estimate (a breakpoint placed where nothing was recorded, a prefix a variant
shortened), and the prompt tokens server-side tool iterations added, which the client's
breakpoints might have cached."""

from __future__ import annotations

from decimal import Decimal
from itertools import pairwise

from costsim.analysis.spread import ZERO, Spread, Terms
from costsim.cache.results import CacheResult
from costsim.engine.simulate import SimulatedCall
from costsim.metering.meter import Meter
from costsim.model import Call, Usage
from costsim.pricing.units import UnitPrices
from costsim.strategies.cache_policies import marks_of

__all__ = ["BOUNDARY_FACTOR", "boundary_terms", "segments"]

BOUNDARY_FACTOR = 2.0
"""An estimated prefix position: this many times the whole-prompt p90 on its distance to the
nearest recorded number."""


def segments(usage: Usage) -> list[tuple[str, int]]:
    parts = [
        ("read", usage.cache_read),
        ("1h", usage.cache_write_1h),
        ("5m", usage.cache_write_5m),
        ("uncached", usage.uncached_input),
    ]
    return [(kind, tokens) for kind, tokens in parts if tokens > 0]


def boundary_terms(
    item: SimulatedCall,
    usage: Usage,
    meter: Meter,
    prices: UnitPrices,
    ident: object,
    moved_error: float = 0.0,
) -> Terms:
    """The terms of the call's estimated cache boundaries. A boundary a variant moved from
    one the recording billed (a prefix read where the last request's write ended, that request
    shortened by the same cut) is unsure only by the change's own error (``moved_error``,
    tokens: the call's prompt error), not by a share of its distance from the prompt's ends
    (twice the whole-prompt p90 of 20,000 tokens put ±$0.07 on a $0.001 change)."""
    cache = item.cache
    if cache is None:
        return {}
    relative = meter.expected_error(item.call).p90 / 100 * BOUNDARY_FACTOR
    client = usage.prompt_total - item.hidden
    writes_exact = all(write.exact for write in cache.writes)
    parts = segments(usage)
    moved = _recorded_ends(item, usage)
    terms: Terms = {}
    position = 0
    for (kind, tokens), (following, _) in pairwise(parts):
        position += tokens
        exact = cache.read_exact if kind == "read" else writes_exact
        if position >= client and item.hidden:
            # the client's part ends where server-side iterations begin: an estimate
            error = relative * client
        elif exact or position >= client:
            continue
        else:
            error = relative * min(position, client - position)
            if moved is not None and any(abs(position - end) <= moved[1] for end in moved[0]):
                error = min(error, moved_error)
        step = abs(prices.of(kind) - prices.of(following))
        if error and step:
            key = ("boundary", ident, kind, following, position)
            terms[key] = Spread.even(Decimal(str(round(error, 3))) * step)
    unshown = _unshown_reads(item)
    if unshown and item.call.provider == "openai":
        # automatic caching is best-effort: a prefix the simulation reads may be missed
        terms[("best-effort", ident)] = Spread(ZERO, unshown * (prices.input - prices.cache_read))
    if item.hidden:
        hidden = _hidden_term(item, cache, prices)
        if hidden:
            terms[("hidden", ident)] = hidden
    return terms


MOVED_SLACK = 8
"""Tokens a moved boundary may lie beyond the change from a recorded one (framing)."""


def _recorded_ends(item: SimulatedCall, usage: Usage) -> tuple[list[int], int] | None:
    """Where the recorded request's billed segments ended, as the variant's request would
    reach them (another model's: scaled with the whole prompt), and how far the variant's
    change can have moved them (its prompt's change, and :data:`MOVED_SLACK`); None for a
    call estimated whole."""
    origin = item.sim.origin
    if origin is None or origin.usage is None or origin.usage.prompt_total <= 0:
        return None
    rate, moved = 1.0, abs(usage.prompt_total - origin.usage.prompt_total)
    if item.call.model != origin.model:  # the same content, counted by another tokenizer (or
        # by one, behind another tool-use system prompt: shifted, not scaled)
        rate = usage.prompt_total / origin.usage.prompt_total
    ends, end = [], 0
    for _, tokens in segments(origin.usage)[:-1]:
        end += tokens
        ends.append(round(end * rate))
    return ends, moved + MOVED_SLACK


def _unshown_reads(item: SimulatedCall) -> int:
    """Cache reads billed that the recording does not show. A read the recording shows is a
    fact (counted as uncertain in a replay, it moved a routed variant's saving by the whole
    read at the recorded model's price); one the simulation adds is a guess, and one the
    bill leaves out (anchored on a recording that missed it) is not billed at all."""
    billed = item.usage.cache_read if item.usage is not None else 0
    origin = item.sim.origin
    shown = origin.usage.cache_read if origin is not None and origin.usage is not None else 0
    return max(0, billed - shown)


def _hidden_term(item: SimulatedCall, cache: CacheResult, prices: UnitPrices) -> Spread:
    """Tokens server-side tool iterations added, billed uncached: the provider's loop re-sends
    the request, so where the request can cache (OpenAI's automatic caching always; elsewhere
    where this call's breakpoints cache something) they may have been read instead, and so
    may what the simulation writes; or written, at the dearest TTL written (where writing
    costs more)."""
    read_step = max(prices.input - prices.cache_read, ZERO)
    automatic = item.call.provider == "openai"  # caches every long prefix, unasked
    if not (automatic or cache.read or cache.writes):
        return Spread()  # no breakpoint caches anything: neither could the iterations
    ttls = {write.ttl for write in cache.writes} | set(_ttls(item.call))
    write = prices.write_1h if "1h" in ttls else prices.write_5m
    written = sum(
        (w.tokens * max(prices.of(w.ttl) - prices.cache_read, ZERO) for w in cache.writes),
        start=ZERO,
    )
    return Spread(item.hidden * read_step + written, item.hidden * max(write - prices.input, ZERO))


def _ttls(call: Call) -> set[str]:
    """The TTLs of the cache breakpoints a request carries."""
    ttls = set(marks_of(call).values())
    if call.cache_control is not None:
        ttls.add("1h" if call.cache_control.ttl == "1h" else "5m")
    return ttls
