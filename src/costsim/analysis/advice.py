"""``costsim advise caching``: the placement and TTL that minimise cost on these traces, the
saving with its band, and why money is left on the table.

Every placement policy is simulated (``static`` and ``auto`` with 5m and 1h TTLs, which a
client can implement; ``oracle``, which knows the future and bounds what any placement could
save). The recommendation is the cheapest implementable one, or the recording's own placement
when none beats it. The leaks are measured on the requests as recorded: for each request, the
longest prefix it shares with an earlier one, and why that prefix could not be (fully) read
from cache: too short for the model's minimum, re-sent after the TTL, or broken early by a
block that changes between requests while what follows it does not.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from difflib import SequenceMatcher

from costsim.analysis.comparison import VariantSummary, summarise
from costsim.analysis.left_out import counted, with_left_out
from costsim.cache.openai import shared_chars, tokens_into
from costsim.cache.prefix import PrefixBlock
from costsim.engine.simulate import Engine
from costsim.model import Block, Call, TextBlock, ToolDef
from costsim.model.quoting import quoted
from costsim.pricing.ledger import Totals
from costsim.pricing.platform_ids import price_list
from costsim.pricing.units import UnitPrices, unit_prices
from costsim.strategies.registry import Variant, make_step
from costsim.strategies.system_split import MIN_STATIC_CHARS, opening
from costsim.strategies.trace import SimCall

__all__ = ["KEEP_TTLS", "POLICIES", "CachingAdvice", "Leak", "advise_caching"]

POLICIES: tuple[tuple[str, dict[str, str]], ...] = (
    ("static 5m", {"policy": "static", "ttl": "5m"}),
    ("static 1h", {"policy": "static", "ttl": "1h"}),
    ("auto 5m", {"policy": "auto", "ttl": "5m"}),
    ("auto 1h", {"policy": "auto", "ttl": "1h"}),
    ("oracle", {"policy": "oracle"}),
)
"""The placements advice compares, by name; ``oracle`` is the bound, not a recommendation."""

KEEP_TTLS = ("static kept", {"policy": "static"})
"""Static placement keeping the TTLs the requests carry (5m breakpoints added beside recorded
1h ones): compared too where a recording writes for the hour, as ``static 5m`` lowers those."""


@dataclass(slots=True)
class Leak:
    """Re-sent prompt tokens that no placement could read from cache, and why."""

    reason: str
    calls: int = 0
    tokens: int = 0
    usd: Decimal = Decimal(0)
    """What reading those tokens from cache instead would have saved."""
    examples: list[str] = field(default_factory=list)
    unpriced: int = 0
    """Calls of them without a known price (what they left is not in ``usd``)."""


@dataclass(slots=True)
class CachingAdvice:
    baseline: Totals
    options: list[VariantSummary]
    leaks: list[Leak]
    never_resent_calls: int = 0
    """Requests no later request shares a prefix with (nothing to cache)."""
    as_of: datetime | None = None
    warm_starts: str = "steady"
    """What a placement's changed requests find of a warm start (see ``WARM_STARTS``)."""

    @property
    def oracle(self) -> VariantSummary | None:
        return next((o for o in self.options if o.variant.name == "oracle"), None)

    @property
    def best(self) -> VariantSummary | None:
        """The cheapest placement a client can implement, if it saves anything."""
        candidates = [
            o
            for o in self.options
            if o.variant.name != "oracle" and o.delta.value is not None and o.delta.value < 0
        ]
        return min(candidates, key=lambda o: o.delta.value or Decimal(0), default=None)


def _name(call: Call, index: int) -> str:
    tools, system = len(call.tools), len(call.system)
    if index < tools:
        return f"tool definition {quoted(call.tools[index].name)}"
    if index < tools + system:
        return f"system block {index - tools}"
    index -= tools + system
    for number, message in enumerate(call.messages):
        if index < len(message.content):
            return f"message {number} ({message.role}) block {index}"
        index -= len(message.content)
    return "a block"


def _excerpt(old: Block | ToolDef, new: Block | ToolDef) -> str:
    if isinstance(old, TextBlock) and isinstance(new, TextBlock):
        at = next(
            (i for i, (a, b) in enumerate(zip(old.text, new.text, strict=False)) if a != b),
            min(len(old.text), len(new.text)),
        )
        return f" at character {at:,}: {old.text[at : at + 24]!r} -> {new.text[at : at + 24]!r}"
    return ""


@dataclass(slots=True)
class _Seen:
    call: Call
    at: float
    keys: dict[str, int]
    texts: dict[str, str] = field(default_factory=dict)
    """Its text blocks where a cache matches token by token, by what precedes each."""


class _Leaks:
    """Accumulates the leaks of one analysis."""

    def __init__(self) -> None:
        self.table: dict[str, Leak] = {}

    def add(self, reason: str, call: Call, tokens: int, total: int, example: str) -> None:
        prices = unit_prices(
            *price_list(call, prompt=total),
            call.recorded_at,
            prompt=total,
            base_tier=call.base_tier,
            tier=call.usage.tier if call.usage is not None else None,
        )
        # re-sent as it was billed: written again, else uncached
        saved = None if prices is None else _billed_at(call, tokens, prices) - prices.cache_read
        if saved is not None and saved <= 0:  # no cache discount (gpt-4o-2024-05-13): no loss
            return
        leak = self.table.setdefault(reason, Leak(reason))
        leak.calls += 1
        leak.tokens += tokens
        if saved is None:
            leak.unpriced += 1
        else:
            leak.usd += tokens * saved
        if len(leak.examples) < 3:
            leak.examples.append(example)


def _billed_at(call: Call, tokens: int, prices: UnitPrices) -> Decimal:
    """The price a request paid for ``tokens`` it re-sent: a write's, where it wrote at
    least that many (a breakpoint after a changing line writes the block again each time),
    else the input price."""
    usage = call.usage
    if usage is None or usage.cache_write < tokens:
        return prices.input
    return prices.write_1h if usage.cache_write_1h > usage.cache_write_5m else prices.write_5m


def _hour_priced(call: Call) -> bool:
    """Whether the model has a 1-hour cache-write price (Bedrock's Claude Sonnet 4 has none:
    a 1h write there is unpriced, see :mod:`costsim.pricing.hour_writes`)."""
    prices = unit_prices(*price_list(call), call.recorded_at)
    return prices is None or prices.hour_priced


def _leaks(engine: Engine) -> tuple[list[Leak], int]:
    leaks = _Leaks()
    never = 0
    for trace in engine.traces:
        seen: list[_Seen] = []
        shared_later: set[int] = set()
        for position, call in enumerate(trace.calls):
            if call.usage is None or call.errored:
                continue
            prefix = engine.layout(SimCall(call, call))
            at = call.recorded_at.timestamp() if call.recorded_at else float(position)
            keys = {block.key: i for i, block in enumerate(prefix.blocks)}
            where = f"{trace.path.name}#{call.provenance.index}"
            shared, tokens, source = _shared_with(prefix.blocks, seen)
            total = call.usage.prompt_total
            if source is not None:
                shared_later.add(id(source.call))
                minimum = (
                    engine.rules.openai_minimum
                    if call.provider == "openai"
                    else engine.rules.minimum(call.model, call.recorded_at)
                )
                gap = at - source.at
                if gap > engine.rules.session_gap_seconds:
                    pass  # recorded again later: a new cache world, not money left behind
                elif tokens < minimum:
                    leaks.add("below the model's minimum", call, tokens, total,
                              f"{where}: {tokens:,} shared tokens < {minimum:,}")  # fmt: skip
                elif gap > engine.rules.ttl_seconds["5m"]:
                    reason = (
                        "re-sent after the longest TTL (1h)"
                        if gap > engine.rules.ttl_seconds["1h"]
                        else "re-sent after 5 minutes (a 1h TTL keeps it)"
                        if _hour_priced(call)
                        else "re-sent after 5 minutes (a 1h TTL keeps it, at no known price)"
                    )
                    detail = f"{where}: {tokens:,} tokens re-sent after {_duration(gap)}"
                    leaks.add(reason, call, tokens, total, detail)
            previous = next((s for s in reversed(seen) if s.call.model == call.model), None)
            recent = previous is not None and at - previous.at <= engine.rules.ttl_seconds["1h"]
            if (
                previous is not None
                and recent
                and _dynamic(leaks, previous.call, call, prefix.blocks, shared, where, total)
            ):  # beyond the longest TTL no split keeps anything: a gap, not dynamic content
                shared_later.add(id(previous.call))
            texts = {block.head: block.text for block in prefix.blocks if block.text}
            seen.append(_Seen(call, at, keys, texts))
        never += sum(1 for s in seen if id(s.call) not in shared_later)
    return sorted(leaks.table.values(), key=lambda leak: -leak.usd), never


def _shared_with(
    blocks: tuple[PrefixBlock, ...], seen: list[_Seen]
) -> tuple[int, int, _Seen | None]:
    """(the last block a request shares whole with an earlier one, or -1; the tokens it
    shares; that earlier request): the latest to share the most. Where the cache matches
    token by token (OpenAI), the tokens run on into the next block as far as its text and
    the earlier request's at that place open alike (a question appended to a page)."""
    shared, source = -1, None
    for index in range(len(blocks) - 1, -1, -1):
        source = next((s for s in reversed(seen) if blocks[index].key in s.keys), None)
        if source is not None:
            shared = index
            break
    tokens = blocks[shared].tokens if shared >= 0 else 0
    following = shared + 1
    if following < len(blocks) and blocks[following].text:
        block = blocks[following]
        start = blocks[shared].tokens if shared >= 0 else 0
        for earlier in reversed(seen):
            text = earlier.texts.get(block.head)
            if text is None:
                continue
            common = shared_chars(text, block.text)
            within = tokens_into(start, block.tokens, common, len(block.text))
            if within > tokens:
                tokens, source = within, earlier
    return shared, tokens, source


def _dynamic(
    leaks: _Leaks,
    previous: Call,
    call: Call,
    blocks: tuple[PrefixBlock, ...],
    shared: int,
    where: str,
    total: int,
) -> bool:
    """A block that changes between two requests while what follows it does not: the blocks
    after it, and, in a text block, its own lines after the first that changed (a timestamp
    line atop a long system prompt; a split moves the line and caches the rest). Whether
    there was such a block."""
    old, new = previous.prompt_blocks, call.prompt_blocks
    first = next((i for i, (a, b) in enumerate(zip(old, new, strict=False)) if a != b), None)
    if first is None or first <= shared:
        return False
    same_after = [i for i in range(first + 1, min(len(old), len(new))) if old[i] == new[i]]
    tokens = sum(_own(blocks, i) for i in same_after if i < len(blocks))
    if first < len(blocks):
        # a cache that matches token by token (OpenAI) reads the lines before the change
        before = call.provider != "openai"
        tokens += round(_own(blocks, first) * _same_lines(old[first], new[first], before))
    if tokens <= 0:
        return False
    detail = _excerpt(old[first], new[first])
    leaks.add(
        "dynamic content early in the prompt",
        call,
        tokens,
        total,
        f"{where}: {_name(call, first)} changes{detail}; {tokens:,} identical tokens after it",
    )
    return True


def _own(blocks: tuple[PrefixBlock, ...], index: int) -> int:
    """The tokens of block ``index`` alone (block positions are cumulative)."""
    return blocks[index].tokens - (blocks[index - 1].tokens if index else 0)


def _same_lines(old: Block | ToolDef, new: Block | ToolDef, before: bool) -> float:
    """The share of ``new``'s text that is lines ``old`` also has (matched line by line, as
    the caching split matches them), those before the first line that differs only with
    ``before`` (a breakpoint caches none of a block that changed anywhere; a cache that
    matches token by token reads up to the change); 0 for blocks that are not text, texts
    that do not open alike but for digits (two agents' prompts, which a split keeps apart),
    or when those lines are too few to reach any model's cache minimum."""
    if not (isinstance(old, TextBlock) and isinstance(new, TextBlock)) or not new.text:
        return 0.0
    if opening(old.text) != opening(new.text):
        return 0.0
    lines_before = old.text.splitlines(keepends=True)
    lines_after = new.text.splitlines(keepends=True)
    matches = SequenceMatcher(None, lines_before, lines_after, autojunk=False).get_matching_blocks()
    head = matches[0].size if matches and matches[0].a == matches[0].b == 0 and not before else 0
    same = sum(
        len(line)
        for match in matches
        for line in lines_after[max(match.b, head) : match.b + match.size]
    )
    return same / len(new.text) if same >= MIN_STATIC_CHARS else 0.0


def advise_caching(
    engine: Engine,
    *,
    as_of: datetime | None = None,
    on_option: Callable[[str], None] | None = None,
) -> CachingAdvice:
    options = []
    hours = any(_writes_hour(item) for trace in engine.traces for item in trace.calls)
    for name, params in POLICIES[:1] + ((KEEP_TTLS,) if hours else ()) + POLICIES[1:]:
        if on_option is not None:
            on_option(name)
        variant = Variant(name, (make_step("caching", params),))
        options.append(summarise(engine, variant, engine.run(variant), as_of))
    # what no sum holds (an LLM-looking interaction costsim cannot meter), said in each
    missed = with_left_out(engine.traces, [o.per_cassette for o in options])
    for option in options:
        with_left_out(engine.traces, [option.baseline_per_cassette])
        option.totals = counted(option.totals, missed)
        option.baseline = counted(option.baseline, missed)
    baseline = counted(engine.run(Variant("baseline")).totals(as_of=as_of), missed)
    leaks, never = _leaks(engine)
    return CachingAdvice(baseline, options, leaks, never, as_of, engine.rules.warm_starts)


def _writes_hour(call: Call) -> bool:
    """The request carries a 1h breakpoint (on a block, or its automatic one)."""
    blocks = [*call.tools, *call.system, *(b for m in call.messages for b in m.content)]
    marks = [block.cache_control for block in blocks]
    marks.append(call.cache_control)
    return any(mark is not None and mark.ttl == "1h" for mark in marks)


def _duration(seconds: float) -> str:
    """``95 s``, ``12 min``, ``3.5 h``: a pause as people say it."""
    if seconds < 120:
        return f"{seconds:,.0f} s"
    if seconds < 2 * 3600:
        return f"{seconds / 60:,.0f} min"
    return f"{seconds / 3600:,.1f} h"
