"""Where ``caching`` puts Anthropic breakpoints under its ``auto`` and ``oracle`` policies.

``auto`` is what a sensible client does online, knowing only the requests it already sent:
a breakpoint at the end of the stable prefix (tools and system) once it reaches the model's
minimum and is being re-sent (or the conversation is multi-turn), a rolling breakpoint on the
latest message as soon as the conversation is multi-turn, and a bridging one when more than
20 blocks were added since the previous rolling breakpoint (the lookback would miss it).

``oracle`` knows the trace's future: it writes only prefixes a later request reads again
within the TTL, and chooses 5m or 1h per prefix by break-even from the model's prices and the
recorded gaps. It is checked against the engine's own simulation and never chosen when it
would cost more than the placement as recorded.

Both replace the breakpoints the recorded requests carried. Server-tool iterations add tokens
after the last block: no breakpoint reaches them.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal

from costsim.cache.prefix import Prefix
from costsim.model import (
    THINKING_BLOCKS,
    Block,
    CacheControl,
    Call,
    Flavour,
    TextBlock,
)
from costsim.pricing.platform_ids import price_list
from costsim.pricing.units import UnitPrices, unit_prices
from costsim.strategies.base import Context
from costsim.strategies.trace import SimCall, SimTrace

__all__ = [
    "Marks",
    "apply_marks",
    "candidates",
    "eligible",
    "layout_of",
    "oracle_marks",
    "strip_marks",
]

Marks = dict[int, str]
"""Breakpoints of one request: block index in prefix order -> TTL."""

_TTL_SECONDS = {"5m": 300.0, "1h": 3600.0}


def eligible(item: SimCall) -> bool:
    """Anthropic requests that were billed (errors stay as recorded)."""
    origin_failed = item.origin is not None and item.origin.errored
    return item.call.flavour is Flavour.ANTHROPIC_MESSAGES and not origin_failed


def _blocks(call: Call) -> list[Block | None]:
    """Blocks in prefix order (None for tool definitions, which can always be marked)."""
    return [
        *([None] * len(call.tools)),
        *call.system,
        *(block for message in call.messages for block in message.content),
    ]


def _markable(block: Block | None) -> bool:
    if isinstance(block, THINKING_BLOCKS):
        return False  # thinking blocks cannot carry cache_control
    return not (isinstance(block, TextBlock) and not block.text)


def candidates(call: Call) -> list[int]:
    """Block indices a policy may mark: the end of the tools, of the system prompt and of
    every message (its last block that can carry a marker)."""
    blocks = _blocks(call)
    ends = []
    if call.tools:
        ends.append(len(call.tools) - 1)
    if call.system:
        ends.append(len(call.tools) + len(call.system) - 1)
    start = len(call.tools) + len(call.system)
    for message in call.messages:
        end = start + len(message.content) - 1
        while end >= start and not _markable(blocks[end]):
            end -= 1
        if end >= start:
            ends.append(end)
        start += len(message.content)
    return [i for i in ends if _markable(blocks[i])]


def strip_marks(call: Call) -> Call:
    """The request without any cache breakpoint."""

    def clear(blocks: tuple[Block, ...]) -> tuple[Block, ...]:
        if all(b.cache_control is None for b in blocks):
            return blocks
        return tuple(dataclasses.replace(b, cache_control=None) for b in blocks)

    marked = (
        call.cache_control is not None
        or any(t.cache_control is not None for t in call.tools)
        or any(b.cache_control is not None for b in call.system)
        or any(b.cache_control is not None for m in call.messages for b in m.content)
    )
    if not marked:
        return call
    # what carries no mark stays the same object (what was counted of it serves again)
    tools = tuple(
        t if t.cache_control is None else dataclasses.replace(t, cache_control=None)
        for t in call.tools
    )
    messages = tuple(
        m if (content := clear(m.content)) is m.content else dataclasses.replace(m, content=content)
        for m in call.messages
    )
    return dataclasses.replace(
        call, cache_control=None, tools=tools, system=clear(call.system), messages=messages
    )


def marks_of(call: Call) -> Marks:
    """The breakpoints a request carries, by block index in prefix order."""
    blocks = [
        *call.tools,
        *call.system,
        *(block for message in call.messages for block in message.content),
    ]
    return {
        index: "1h" if block.cache_control.ttl == "1h" else "5m"
        for index, block in enumerate(blocks)
        if block.cache_control is not None
    }


def apply_marks(call: Call, marks: Marks) -> Call:
    """``call`` with a breakpoint of the given TTL on each block index."""
    if not marks:
        return call
    tools = list(call.tools)
    system = list(call.system)
    messages = [list(m.content) for m in call.messages]
    locate: list[tuple[str, int, int]] = [("tools", i, 0) for i in range(len(tools))]
    locate += [("system", i, 0) for i in range(len(system))]
    locate += [("messages", m, b) for m, msg in enumerate(messages) for b in range(len(msg))]
    for index, ttl in marks.items():
        mark = CacheControl("1h" if ttl == "1h" else "5m")
        section, first, second = locate[index]
        if section == "tools":
            tools[first] = dataclasses.replace(tools[first], cache_control=mark)
        elif section == "system":
            system[first] = dataclasses.replace(system[first], cache_control=mark)
        else:
            messages[first][second] = dataclasses.replace(
                messages[first][second], cache_control=mark
            )
    return dataclasses.replace(
        call,
        tools=tuple(tools),
        system=tuple(system),
        messages=tuple(
            dataclasses.replace(m, content=tuple(c)) if c != list(m.content) else m
            for m, c in zip(call.messages, messages, strict=True)
        ),
    )


def layout_of(item: SimCall, call: Call, context: Context) -> Prefix | None:
    if context.layout is None:
        return None
    return context.layout(dataclasses.replace(item, call=call))


# --- oracle ---------------------------------------------------------------------------------


@dataclass(slots=True)
class _Request:
    index: int
    call: Call
    prefix: Prefix
    at: float
    ends: list[int]
    prices: UnitPrices | None
    source: tuple[int, int] | None = None
    """(earlier request, block index) whose entry this one reads."""


def _times(calls: Sequence[SimCall], gap: float) -> list[float]:
    times: list[float] = []
    for item in calls:
        recorded = item.origin.recorded_at if item.origin is not None else None
        at = recorded.timestamp() if recorded is not None else None
        if at is None or (times and at <= times[-1]):
            at = (times[-1] + (gap if at is None else 0.001)) if times else 0.0
        times.append(at)
    return times


def _requests(trace: SimTrace, context: Context) -> list[_Request]:
    times = _times(trace.calls, context.rules.default_gap_seconds)
    requests = []
    for index, (item, at) in enumerate(zip(trace.calls, times, strict=True)):
        if not eligible(item):
            continue
        call = strip_marks(item.call)
        prefix = layout_of(item, call, context)
        if prefix is None or not prefix.blocks:
            continue
        minimum = context.rules.minimum(call.model, call.recorded_at)
        ends = [i for i in candidates(call) if prefix.blocks[i].tokens >= minimum]
        when: datetime | None = call.recorded_at
        prices = unit_prices(
            *price_list(call, prompt=prefix.total),
            when,
            prompt=prefix.total,
            base_tier=call.base_tier,
            tier=call.usage.tier if call.usage is not None else None,
        )
        requests.append(_Request(index, call, prefix, at, ends, prices))
    return requests


def _reads(requests: list[_Request]) -> dict[tuple[int, int], list[_Request]]:
    """Each request's best earlier entry: the longest prefix an earlier request of the same
    model could have written, the latest such request on ties."""
    written: dict[str, int] = {}
    demand: dict[tuple[int, int], list[_Request]] = defaultdict(list)
    for position, request in enumerate(requests):
        blocks = request.prefix.blocks
        for index in range(len(blocks) - 1, -1, -1):
            source = written.get(blocks[index].key)
            if source is not None and request.at - requests[source].at <= _TTL_SECONDS["1h"]:
                request.source = (source, index)
                demand[(source, index)].append(request)
                break
        for end in request.ends:
            written[blocks[end].key] = position
    return demand


def _value(writer: _Request, index: int, readers: list[_Request], ttl: str) -> Decimal:
    """Dollars saved by writing ``writer``'s prefix up to ``index`` with ``ttl``: what its
    readers within the TTL no longer pay, minus the write premium."""
    prices = writer.prices
    if prices is None:
        return Decimal(0)
    tokens = writer.prefix.blocks[index].tokens
    own = writer.prefix.blocks[writer.source[1]].tokens if writer.source else 0
    premium = (prices.write_1h if ttl == "1h" else prices.write_5m) - prices.input
    saving = Decimal(0)
    touched = writer.at
    for reader in sorted(readers, key=lambda r: r.at):
        if reader.at - touched > _TTL_SECONDS[ttl]:
            break
        touched = reader.at
        reader_prices = reader.prices or prices
        saving += tokens * (reader_prices.input - reader_prices.cache_read)
    return saving - max(tokens - own, 0) * premium


def _plan(requests: list[_Request], force: str | None) -> dict[int, Marks]:
    demand = _reads(requests)
    chosen: dict[tuple[int, int], str] = {}
    for (writer, index), readers in demand.items():
        options = [force] if force else ["5m", "1h"]
        values = {ttl: _value(requests[writer], index, readers, ttl) for ttl in options}
        best = max(values, key=lambda ttl: (values[ttl], ttl == "5m"))
        if values[best] > 0:
            chosen[(writer, index)] = best
    plans: dict[int, Marks] = {}
    for position, request in enumerate(requests):
        marks = {index: ttl for (writer, index), ttl in chosen.items() if writer == position}
        if request.source is not None and request.source in chosen:
            read_at = request.source[1]
            if not any(read_at <= b <= read_at + 20 for b in marks):
                marks[read_at] = chosen[request.source]
        plans[request.index] = valid_marks(marks)
    return plans


def valid_marks(marks: Marks) -> Marks:
    """Breakpoints a provider accepts: at most 4 (the latest kept), and no 1h breakpoint
    after a 5m one (those before the last 1h one become 1h)."""
    if len(marks) > 4:
        marks = {i: marks[i] for i in sorted(marks, reverse=True)[:4]}
    last_hour = max((i for i, ttl in marks.items() if ttl == "1h"), default=-1)
    return {i: "1h" if i < last_hour else ttl for i, ttl in marks.items()}


def oracle_marks(
    trace: SimTrace,
    context: Context,
    candidates: Callable[[], Sequence[list[Marks | None]]] = lambda: (),
) -> tuple[list[Marks | None] | None, str]:
    """The cheapest placement found with knowledge of the whole trace, or None when none
    beats the placement as recorded (with why). Besides its own plans it weighs the
    ``candidates`` (what the client policies place, made only where some prefix can be
    cached), so it is never worse than they are."""
    if context.evaluate is None:
        return None, "the oracle needs the engine's cache simulation"
    requests = _requests(trace, context)
    if not requests:
        return None, ""
    plans_tried: list[list[Marks | None]] = []
    for force in (None, "5m", "1h", "none"):
        plans = {} if force == "none" else _plan(requests, force)
        plans_tried.append(
            [
                plans.get(index, {}) if eligible(item) else None
                for index, item in enumerate(trace.calls)
            ]
        )
    best: tuple[Decimal, list[Marks | None]] | None = None
    # below every model's minimum nothing is cached, wherever the breakpoints go
    cacheable = any(request.ends for request in requests)
    clients = [
        [None if m is None else valid_marks(m) for m in marks]
        for marks in (candidates() if cacheable else ())
    ]
    seen: set[tuple[tuple[tuple[int, str], ...] | None, ...]] = set()
    for tried in [*plans_tried, *clients]:
        same = tuple(None if m is None else tuple(sorted(m.items())) for m in tried)
        if same in seen:  # one placement, simulated once
            continue
        seen.add(same)
        costs = context.evaluate(placed(trace, tried))
        if costs is None:
            continue
        cost, bound = costs
        if cost < bound and (best is None or cost < best[0]):
            best = (cost, tried)
    if best is None:
        return None, "no placement beats the breakpoints as recorded"
    return best[1], ""


def placed(trace: SimTrace, marks: list[Marks | None]) -> SimTrace:
    """``trace`` with every eligible request's breakpoints replaced by ``marks``."""
    calls = []
    for item, mark in zip(trace.calls, marks, strict=True):
        if mark is None:
            calls.append(item)
            continue
        call = apply_marks(strip_marks(item.call), mark)
        calls.append(item if call == item.call else dataclasses.replace(item, call=call))
    return SimTrace(trace.path, tuple(calls))
