"""Prompt-cache rules, one hand-computed case each (DESIGN.md sections 4-5)."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from pathlib import Path

from costsim.cache.prefix import Prefix, PrefixBlock, PrefixBuilder
from costsim.cache.rules import default_rules
from costsim.cache.simulators import AnthropicCache, OpenAICache
from costsim.model import (
    CacheControl,
    Call,
    Flavour,
    Message,
    Provenance,
    TextBlock,
    ThinkingConfig,
    ToolDef,
)

WHEN = datetime(2025, 11, 1, tzinfo=UTC)
FIVE = CacheControl("5m")
HOUR = CacheControl("1h")


def _prefix(sizes: list[int], marks: dict[int, CacheControl], *, tag: str = "a") -> Prefix:
    """Blocks of the given token sizes; keys chain so equal heads share keys."""
    blocks, total, key = [], 0, tag
    for index, size in enumerate(sizes):
        total += size
        key = f"{key}/{index}:{size}"
        blocks.append(PrefixBlock(key, total, marks.get(index), "messages"))
    return Prefix(tuple(blocks), total)


def _cache() -> AnthropicCache:
    return AnthropicCache(default_rules())


def test_write_then_read() -> None:
    cache = _cache()
    prefix = _prefix([2000, 100], {0: FIVE})
    first = cache.request(prefix, model="claude-sonnet-4-5", at=0, when=WHEN)
    assert (first.read, first.write_5m) == (0, 2000)
    second = cache.request(prefix, model="claude-sonnet-4-5", at=10, when=WHEN)
    assert (second.read, second.write_5m) == (2000, 0)


def test_a_hit_reads_the_length_that_was_written() -> None:
    """Two estimates of one changed prefix may disagree by a few tokens; the same content has
    one length, so a hit reads what the writer wrote and the rest is uncached."""
    cache = _cache()
    written = _prefix([2000, 100], {0: FIVE})
    cache.request(written, model="claude-sonnet-4-5", at=0, when=WHEN)
    block = written.blocks[0]
    longer = Prefix(
        (
            dataclasses.replace(block, tokens=2040),
            dataclasses.replace(written.blocks[1], tokens=2200),
        ),
        2200,
    )
    second = cache.request(longer, model="claude-sonnet-4-5", at=10, when=WHEN)
    assert (second.read, second.write_5m) == (2000, 0)


def test_minimum_length_not_met_means_no_write() -> None:
    cache = _cache()
    short = _prefix([1000, 10], {0: FIVE})  # Sonnet 4.5 needs 1,024
    assert cache.request(short, model="claude-sonnet-4-5", at=0, when=WHEN).write_5m == 0
    assert cache.request(short, model="claude-sonnet-4-5", at=1, when=WHEN).read == 0
    haiku = _prefix([3000], {0: FIVE})  # Haiku 4.5 needs 4,096
    assert _cache().request(haiku, model="claude-haiku-4-5", at=0, when=WHEN).write_5m == 0


def test_minimum_is_dated() -> None:
    rules = default_rules()
    assert rules.minimum("claude-opus-4-7", datetime(2026, 6, 8, tzinfo=UTC)) == 4096
    assert rules.minimum("claude-opus-4-7", datetime(2026, 6, 9, tzinfo=UTC)) == 2048
    assert rules.minimum("claude-sonnet-4-6", datetime(2026, 4, 1, tzinfo=UTC)) == 2048
    assert rules.minimum("claude-sonnet-4-6", datetime(2026, 6, 1, tzinfo=UTC)) == 1024


def _lookback_case(blocks_after: int) -> int:
    cache = _cache()
    head = [1500] + [10] * 30
    cache.request(_prefix(head[:1], {0: FIVE}), model="claude-sonnet-4-5", at=0, when=WHEN)
    # The next request adds blocks after the written one and marks only its last block.
    later = _prefix(head[: 1 + blocks_after], {blocks_after: FIVE})
    return cache.request(later, model="claude-sonnet-4-5", at=5, when=WHEN).read


def test_lookback_hits_19_blocks_back_and_misses_21() -> None:
    assert _lookback_case(19) == 1500
    assert _lookback_case(21) == 0


def test_ttl_expires_after_5_minutes_and_a_hit_refreshes_it() -> None:
    prefix = _prefix([2000], {0: FIVE})
    cache = _cache()
    cache.request(prefix, model="claude-sonnet-4-5", at=0, when=WHEN)
    assert (
        cache.request(prefix, model="claude-sonnet-4-5", at=301, when=WHEN).read == 0
    )  # 5 min + 1 s
    refreshed = _cache()
    refreshed.request(prefix, model="claude-sonnet-4-5", at=0, when=WHEN)
    assert (
        refreshed.request(prefix, model="claude-sonnet-4-5", at=240, when=WHEN).read == 2000
    )  # 4 min
    assert refreshed.request(prefix, model="claude-sonnet-4-5", at=539, when=WHEN).read == 2000


def test_one_hour_ttl_outlives_five_minutes() -> None:
    prefix = _prefix([2000], {0: HOUR})
    cache = _cache()
    first = cache.request(prefix, model="claude-sonnet-4-5", at=0, when=WHEN)
    assert (first.write_1h, first.write_5m) == (2000, 0)
    assert cache.request(prefix, model="claude-sonnet-4-5", at=3000, when=WHEN).read == 2000


def test_mixed_1h_and_5m_billing() -> None:
    # tools+system 3,000 tokens under a 1h breakpoint, then 1,500 more under a 5m one.
    prefix = _prefix([3000, 1500, 200], {0: HOUR, 1: FIVE})
    result = _cache().request(prefix, model="claude-sonnet-4-5", at=0, when=WHEN)
    assert (result.read, result.write_1h, result.write_5m) == (0, 3000, 1500)
    # later: the 1h head is read, the 5m part is written again after it expired
    cache = _cache()
    cache.request(prefix, model="claude-sonnet-4-5", at=0, when=WHEN)
    later = cache.request(prefix, model="claude-sonnet-4-5", at=600, when=WHEN)
    assert (later.read, later.write_1h, later.write_5m) == (3000, 0, 1500)


def test_two_identical_requests_at_the_same_instant_both_miss() -> None:
    prefix = _prefix([2000], {0: FIVE})
    cache = _cache()
    first = cache.request(prefix, model="claude-sonnet-4-5", at=7, when=WHEN)
    second = cache.request(prefix, model="claude-sonnet-4-5", at=7, when=WHEN)
    assert (first.read, second.read) == (0, 0)
    assert (first.write_5m, second.write_5m) == (2000, 2000)


def test_more_than_four_breakpoints_is_noted() -> None:
    prefix = _prefix([1100] * 6, dict.fromkeys(range(6), FIVE))
    result = _cache().request(prefix, model="claude-sonnet-4-5", at=0, when=WHEN)
    assert any("accepts 4" in note for note in result.notes)
    assert result.write_5m == 4 * 1100


# --- invalidation through real requests -----------------------------------------------------

TOOL = ToolDef("grep", "Search files.", {"type": "object"})
LONG = "You are a careful assistant. " * 400


def _call(**changes: object) -> Call:
    base = Call(
        flavour=Flavour.ANTHROPIC_MESSAGES,
        model="claude-sonnet-4-5",
        provenance=Provenance(Path("x.yaml"), 0),
        tools=(TOOL,),
        system=(TextBlock(LONG, cache_control=FIVE),),
        messages=(Message("user", (TextBlock("hello " * 300, cache_control=FIVE),)),),
        tool_choice={"type": "auto"},
    )
    return dataclasses.replace(base, **changes)  # type: ignore[arg-type]


def _keys(call: Call) -> list[str]:
    return [block.key for block in PrefixBuilder().build(call, 5000).blocks]


def test_tool_change_invalidates_everything() -> None:
    changed = _call(tools=(ToolDef("grep", "Search files fast.", {"type": "object"}),))
    assert all(a != b for a, b in zip(_keys(_call()), _keys(changed), strict=True))


def test_tool_choice_and_thinking_change_invalidate_only_messages() -> None:
    base = _keys(_call())
    for changed in (_call(tool_choice={"type": "any"}), _call(thinking=ThinkingConfig(True, 2048))):
        keys = _keys(changed)
        assert keys[:2] == base[:2]  # tools, system
        assert keys[2] != base[2]  # messages


def test_other_model_misses() -> None:
    assert _keys(_call(model="claude-opus-4-1"))[0] != _keys(_call())[0]


def test_cache_control_marker_does_not_change_identity() -> None:
    unmarked = _call(system=(TextBlock(LONG),))
    assert _keys(unmarked) == _keys(_call())


# --- OpenAI automatic caching -----------------------------------------------------------------


def test_openai_caches_from_1024_tokens_in_128_token_steps() -> None:
    cache = OpenAICache(default_rules())
    prefix = _prefix([1000, 300], {})
    assert cache.request(prefix, model="gpt-4o", at=0, when=WHEN).read == 0
    assert cache.request(prefix, model="gpt-4o", at=5, when=WHEN).read == 1280  # 1,300 -> 1,280
    short = _prefix([900], {}, tag="b")
    cache.request(short, model="gpt-4o", at=10, when=WHEN)
    assert cache.request(short, model="gpt-4o", at=11, when=WHEN).read == 0


def test_openai_writes_billed_from_gpt_56() -> None:
    cache = OpenAICache(default_rules())
    prefix = _prefix([3000, 200], {})
    first = cache.request(prefix, model="gpt-5.6", at=0, when=datetime(2026, 7, 1, tzinfo=UTC))
    assert first.write_5m == 3000
    assert cache.request(prefix, model="gpt-4o", at=0, when=WHEN).write_5m == 0


def test_a_block_moved_to_another_position_keeps_every_other_field() -> None:
    import dataclasses

    from costsim.cache.alignment import placed as _placed
    from costsim.cache.prefix import PrefixBlock
    from costsim.model import CacheControl

    # a field added to PrefixBlock must be carried over by _placed (built field by field)
    assert [f.name for f in dataclasses.fields(PrefixBlock)] == [
        "key",
        "tokens",
        "breakpoint",
        "section",
        "content",
        "label",
        "exact",
        "text",
        "head",
    ]
    block = PrefixBlock(
        "k", 10, CacheControl("1h"), "messages", "c", "message 2", True, "some text", "h"
    )
    assert _placed(block, 42, False) == dataclasses.replace(block, tokens=42, exact=False)
