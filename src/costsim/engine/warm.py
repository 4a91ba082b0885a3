"""When each recorded call was sent, and what the recording shows was cached before it.

A recording can start with a warm cache: its first call reads a prefix that calls outside the
recording wrote (DESIGN.md section 4). The replay cannot see those calls, so the warm prefix
is inferred from the recorded reads and seeded into the simulated cache, and said.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from costsim.cache.alignment import moved_block
from costsim.cache.blocks import PrefixBlock
from costsim.cache.prefix import Prefix
from costsim.cache.rules import CacheRules, tolerance
from costsim.cache.simulators import SIMULATORS, CacheSimulator
from costsim.model import Call, CassetteTrace
from costsim.strategies.trace import SimCall

__all__ = [
    "FIRST_RUN_COLD",
    "LOST_WARM_START",
    "Layout",
    "WarmSeed",
    "carried",
    "followed",
    "infer_warm",
    "lost_warm_start",
    "same_place",
    "seed_warm",
    "timeline",
    "unseeded",
]

WarmSeed = tuple[int, str, int, float, str]
"""(the call's position in its trace, cache key, tokens, seeded at, ttl): by position, not
by the call's interaction index, which repeats in a test's trace of several cassettes."""

Layout = Callable[[SimCall, int], Prefix]
"""The engine's cache prefix of a request, given its prompt total."""


def timeline(calls: Sequence[Call], gap: float) -> list[float]:
    """Start time (seconds) of each call: recorded dates in order, else a fixed gap apart.

    Recorded dates have one-second resolution; sequential calls within one second are kept in
    order by a millisecond step, so a later call can read what an earlier one wrote.
    """
    times: list[float] = []
    previous: float | None = None
    for call in calls:
        if call.recorded_at is not None:
            at = call.recorded_at.timestamp()
            if previous is not None and at <= previous:
                at = previous + 0.001
        else:
            at = (previous + gap) if previous is not None else 0.0
        times.append(at)
        previous = at
    return times


def infer_warm(trace: CassetteTrace, rules: CacheRules, layout: Layout) -> list[WarmSeed]:
    """The cache entries the recording shows were warm before its calls wrote them."""
    if not any(c.usage is not None and c.usage.cache_read for c in trace.calls):
        return []
    seeds: list[WarmSeed] = []
    caches: dict[str, CacheSimulator] = {}
    times = timeline(trace.calls, rules.default_gap_seconds)
    previous: float | None = None
    for position, (call, at) in enumerate(zip(trace.calls, times, strict=True)):
        usage = call.usage
        if usage is None or call.errored:
            continue
        if previous is not None and at - previous > rules.session_gap_seconds:
            caches = {}  # recorded again later: a new cache world
        previous = at
        prefix = layout(SimCall(call, call), usage.prompt_total)
        cache = caches.setdefault(call.provider, SIMULATORS[call.provider](rules))
        if usage.cache_read:
            seed = cache.warm_seed(
                prefix,
                usage.cache_read,
                at,
                model=call.model,
                when=call.recorded_at,
                tolerance=tolerance(usage.prompt_total),
            )
            if seed is not None:
                key, tokens, ttl = seed
                cache.seed(key, tokens, at=at - 0.5, ttl=ttl)
                seeds.append((position, key, tokens, at - 0.5, ttl))
        cache.request(prefix, model=call.model, at=at, when=call.recorded_at)
    return seeds


Entry = tuple[str, int, float, str]
"""A cache entry to seed: (key, tokens, seeded at, ttl)."""


def carried(
    item: SimCall, prefix: Prefix, seed: Entry, layout: Layout, rules: CacheRules
) -> tuple[Entry, list[Entry]]:
    """What the recording's warm start ``seed`` of a request is in a variant: the entry the
    request reads (:func:`followed`; whether it is kept is :func:`unseeded`'s to say), and
    entries seeded beside it as they are.

    ``steady``: an entry moved onto the changed request keeps the recorded one beside it,
    in its own model's cache, for the trace's requests the variant left unchanged (the
    earlier sessions sent those too: routing only the first call to a light model must not
    leave the calls after it, on the recorded model, cold). ``first``: the recorded entry,
    and the entries of the recorded request's breakpoints before it, which the sessions
    before wrote on the way (a request changed past the system prompt still reads it)."""
    moved = followed(item, prefix, seed, layout, rules)
    origin = item.origin
    if rules.warm_starts == "steady":
        return moved, [seed] if moved[0] != seed[0] else []
    if origin is None or item.call is origin or origin.usage is None:
        return moved, []
    recorded = layout(SimCall(origin, origin), origin.usage.prompt_total)
    at = next((i for i, block in enumerate(recorded.blocks) if block.key == seed[0]), 0)
    return moved, [
        (block.key, block.tokens, seed[2], block.breakpoint.ttl)
        for block in recorded.blocks[:at]
        if block.breakpoint is not None
    ]


def seed_warm(
    cache: CacheSimulator,
    item: SimCall,
    prefix: Prefix,
    seed: Entry,
    how: tuple[Layout, CacheRules],
) -> str | None:
    """Seed ``cache`` with what the warm start ``seed`` of ``item`` is in the variant (see
    :func:`carried`); why the entry the request reads is not kept (see :func:`unseeded`), or
    None."""
    layout, rules = how
    (key, tokens, seeded_at, ttl), kept = carried(item, prefix, seed, layout, rules)
    lost = unseeded(item, (prefix, key, tokens, ttl), rules)
    if lost is None:
        cache.seed(key, tokens, at=seeded_at, ttl=ttl)
    for entry_key, entry_tokens, entry_at, entry_ttl in kept:
        cache.seed(entry_key, entry_tokens, at=entry_at, ttl=entry_ttl)
    return lost


def followed(
    item: SimCall,
    prefix: Prefix,
    seed: Entry,
    layout: Layout,
    rules: CacheRules,
) -> Entry:
    """A warm start of a request a variant changed, moved onto the same place of its new
    prefix: the requests sent before the recording began came from the same client, so in a
    deployment of the variant they were changed alike (steady state, not the first session
    after it ships). A system prompt edited since is warm as edited; a request with a tool
    added or left out is warm up to the same place (the last tool, the system prompt); one
    routed to another model is warm in that model's cache. Changed in content only, the
    block is the one at the same index; else the one at the same place counted from the end
    of its part of the request (tools, system, message N); where the new prefix has none, the
    recorded entry is kept, which the request reads only while its prefix is unchanged.
    With ``rules.warm_starts`` "first" (the first session after the change ships) the
    recorded entry is always kept."""
    origin, (key, tokens, seeded_at, ttl) = item.origin, seed
    if origin is None or item.call is origin or origin.usage is None:
        return seed
    if rules.warm_starts != "steady":
        return seed
    recorded = layout(SimCall(origin, origin), origin.usage.prompt_total)
    block = moved_block(key, recorded, prefix) if item.call.model == origin.model else None
    if block is None:
        block = same_place(key, recorded, prefix)
    was = next((b.tokens for b in recorded.blocks if b.key == key), None)
    if block is None or was is None:
        return seed
    # what the entry held short of its block (OpenAI's read, a multiple of 128) stays short
    return block.key, max(0, min(block.tokens, tokens + block.tokens - was)), seeded_at, ttl


def same_place(key: str, recorded: Prefix, now: Prefix) -> PrefixBlock | None:
    """The block of ``now`` at the place of ``recorded``'s block ``key``: in the part of the
    request its label names (tools, system, message N), as far from that part's end."""
    at = next((i for i, block in enumerate(recorded.blocks) if block.key == key), None)
    if at is None:
        return None
    label = recorded.blocks[at].label
    group = [i for i, block in enumerate(recorded.blocks) if block.label == label]
    from_end = len(group) - 1 - group.index(at)
    mine = [block for block in now.blocks if block.label == label]
    return mine[len(mine) - 1 - from_end] if from_end < len(mine) else None


LOST_WARM_START = (
    "a changed request no longer reads the cache the recording shows warm before it (written "
    "outside the recording): billed cold here, though a deployment always sending the changed "
    "request would warm a cache of its own"
)
"""Said where a variant loses a warm start: its cost reads high by what that read saved."""
FIRST_RUN_COLD = (
    "a changed request no longer reads the cache the recording shows warm before it (written "
    "outside the recording by the recorded requests): billed cold, as in the first run after "
    "the change ships (--warm steady: each run after that)"
)
"""The same, said in a first-run simulation, where it is the answer asked for."""


def lost_warm_start(item: SimCall, read: int, rules: CacheRules) -> str | None:
    """:data:`LOST_WARM_START` (or :data:`FIRST_RUN_COLD`) where ``item`` changed its recorded
    request and reads nothing where the recording read a cache it found warm; else None."""
    origin = item.origin
    if origin is None or item.call is origin or origin.usage is None:
        return None
    if read or not origin.usage.cache_read:
        return None
    return LOST_WARM_START if rules.warm_starts == "steady" else FIRST_RUN_COLD


SHORTER_TTL = (
    "a read the recording made from a cache written before it (outside the recording) is "
    "billed as a write where the request now caches it for less time than that entry lived: "
    "when the earlier request was sent is unknown, so a shorter TTL is not assumed to keep it"
)
"""Said where a variant shortens the TTL of a warm start (1h lowered to 5m, say): a saving
that kept the read would rest on sessions that start within the shorter TTL of each other."""


def unseeded(item: SimCall, entry: tuple[Prefix, str, int, str], rules: CacheRules) -> str | None:
    """Why the warm entry ``(prefix, key, tokens, ttl)`` of a request ``item`` changed is not
    seeded: :data:`SHORTER_TTL` where the breakpoint on it caches for less time now than the
    entry was recorded with; ``""`` (said by the cache's own note) where the model it was
    routed to caches no prefix that short; else None (seeded)."""
    origin = item.origin
    if origin is None or item.call is origin:
        return None
    prefix, key, tokens, ttl = entry
    routed = item.call.model != origin.model and item.call.provider == "anthropic"
    if routed and tokens < rules.minimum(item.call.model, item.call.recorded_at):
        return ""
    block = next((b for b in prefix.blocks if b.key == key), None)
    if block is None or block.breakpoint is None:
        return None
    now, was = rules.ttl_seconds.get(block.breakpoint.ttl), rules.ttl_seconds.get(ttl)
    return SHORTER_TTL if now is not None and was is not None and now < was else None
