"""The breakpoints an online client places by itself (the ``auto`` caching policy): the static
prefix once it is re-sent (or the conversation is multi-turn), and a rolling breakpoint on the
latest message of a multi-turn request, with a bridge when the lookback would miss the last
one. A prefix the recording shows warm counts as sent: the client had sent it before.
"""

from __future__ import annotations

from costsim.cache.alignment import moved_block
from costsim.cache.prefix import Prefix
from costsim.strategies.base import Context
from costsim.strategies.cache_policies import (
    Marks,
    candidates,
    eligible,
    layout_of,
    strip_marks,
)
from costsim.strategies.trace import SimCall, SimTrace

__all__ = ["auto_marks"]


def auto_marks(trace: SimTrace, ttl: str, context: Context) -> list[Marks | None]:
    """Per request, the breakpoints an online client would place (None: not Anthropic).

    The client knows the requests it sent: those of the trace before this one, and those the
    recording shows it had sent before the trace began (a prefix read warm): it marks a
    prefix it sent before, and one the recording shows warm where it ends."""
    lookback = context.rules.anthropic_lookback
    warm_at = context.warm(trace.path) if context.warm is not None else {}
    seen_static: set[str] = set()
    rolling: dict[str, int] = {}
    result: list[Marks | None] = []
    for item in trace.calls:
        if not eligible(item):
            result.append(None)
            continue
        call = strip_marks(item.call)
        prefix = layout_of(item, call, context)
        if prefix is None or not prefix.blocks:
            result.append({})
            continue
        minimum = context.rules.minimum(call.model, call.recorded_at)
        ends = candidates(call)
        static_count = len(call.tools) + len(call.system)
        static = [i for i in ends if i < static_count]
        multi_turn = any(m.role == "assistant" for m in call.messages)
        origin = item.origin
        warm = warm_at.get(id(origin), frozenset()) if origin else frozenset()
        if warm and origin is not None and item.call is not origin and context.layout:
            warm = _moved(warm, context.layout(SimCall(origin, origin)), prefix)
        seen_static |= warm
        marks: Marks = {
            i: ttl
            for i in ends
            if prefix.blocks[i].key in warm and prefix.blocks[i].tokens >= minimum
        }
        if static and prefix.blocks[static[-1]].tokens >= minimum:
            key = prefix.blocks[static[-1]].key
            if multi_turn or key in seen_static:
                marks[static[-1]] = ttl
            seen_static.add(key)
        latest = [i for i in ends if i >= static_count]
        if multi_turn and latest and prefix.blocks[latest[-1]].tokens >= minimum:
            last = latest[-1]
            marks[last] = ttl
            previous = max(
                (i for i in range(last) if prefix.blocks[i].key in rolling), default=None
            )
            if previous is not None and last - previous > lookback:
                bridge = max((i for i in ends if previous < i <= previous + lookback), default=None)
                if bridge is not None:
                    marks[bridge] = ttl
            rolling[prefix.blocks[last].key] = last
        result.append(marks)
    return result


def _moved(keys: frozenset[str], recorded: Prefix, now: Prefix) -> frozenset[str]:
    """Warm keys of a recorded request, on the request as changed (as the engine seeds them:
    the client's earlier requests were changed alike)."""
    found = set()
    for key in keys:
        block = moved_block(key, recorded, now)
        found.add(key if block is None else block.key)
    return frozenset(found)
