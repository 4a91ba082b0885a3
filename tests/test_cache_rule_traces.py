"""Hand-built traces, one per caching rule, with the recorded usage computed by hand.

Each trace is what the provider would bill under the rules of DESIGN.md section 4 (TTL refresh
and expiry, minimum length per model, invalidation order tools -> system -> messages, the
20-block lookback, 1h entries before 5m ones, a warm start): ``check-cache`` must match every
call. Each rule-breaking twin records what the rules forbid (a read after the TTL expired, a
write below the minimum, a read beyond the lookback, a fifth breakpoint, a 1h entry after a 5m
one): ``check-cache`` must report it as a mismatch naming the rule.

Sizes are chosen so every section's share of the prompt is known by hand: sections are made of
one repeated word, so the calibrated counter splits a prompt in proportion to their lengths.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from costsim.analysis.cache_fidelity import FidelityReport, check_cache
from costsim.cache.prefix import PrefixBuilder
from costsim.model import (
    CacheControl,
    Call,
    CassetteTrace,
    Flavour,
    Message,
    Provenance,
    ReasoningBlock,
    TextBlock,
    ThinkingBlock,
    ToolDef,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
)

START = datetime(2025, 11, 3, 9, 0, tzinfo=UTC)
FIVE, HOUR = CacheControl("5m"), CacheControl("1h")
SONNET, HAIKU = "claude-sonnet-4-5-20250929", "claude-haiku-4-5-20251001"
PATH = Path("hand.yaml")


def _text(word: str, tokens: int, mark: CacheControl | None = None) -> TextBlock:
    return TextBlock(f"{word} " * tokens, cache_control=mark)


def _call(
    index: int,
    seconds: float,
    usage: Usage,
    *,
    system: tuple[TextBlock, ...] = (),
    messages: tuple[Message, ...] = (),
    tools: tuple[ToolDef, ...] = (),
    model: str = SONNET,
) -> Call:
    return Call(
        flavour=Flavour.ANTHROPIC_MESSAGES,
        model=model,
        provenance=Provenance(PATH, index),
        system=system,
        messages=messages or (Message("user", (_text("question", 20),)),),
        tools=tools,
        usage=usage,
        recorded_at=START + timedelta(seconds=seconds),
    )


def _check(*calls: Call) -> FidelityReport:
    return check_cache([CassetteTrace(PATH, tuple(calls), 0, 0)])


def _positions(call: Call, total: int) -> list[int]:
    return [b.tokens for b in PrefixBuilder().build(call, total).blocks]


def _rules(report: FidelityReport) -> dict[int, str | None]:
    return {m.provenance.index: m.rule for m in report.mismatches}


# --- TTL: a hit refreshes the 5 minutes; an idle entry expires -------------------------------

SYSTEM = (_text("policy", 2000, FIVE),)


def _ttl_trace(last_read: int) -> FidelityReport:
    # t=0 writes the 2,000-token system prompt; t=240 and t=480 read it (each read refreshes
    # the 5 minutes, so t=480 is alive though 480 s after the write); t=800 comes 320 s after
    # the last read: the entry expired, so the provider writes it again.
    return _check(
        _call(0, 0, Usage(uncached_input=20, cache_write_5m=2000), system=SYSTEM),
        _call(1, 240, Usage(uncached_input=20, cache_read=2000), system=SYSTEM),
        _call(2, 480, Usage(uncached_input=20, cache_read=2000), system=SYSTEM),
        _call(
            3,
            800,
            Usage(uncached_input=20, cache_read=last_read, cache_write_5m=2000 - last_read),
            system=SYSTEM,
        ),
    )


def test_ttl_refresh_and_expiry_match() -> None:
    report = _ttl_trace(last_read=0)
    assert (report.calls_compared, report.calls_matched) == (4, 4)
    assert report.warm_starts == []


def test_a_read_after_the_ttl_expired_breaks_the_ttl_rule() -> None:
    report = _ttl_trace(last_read=2000)
    assert (report.calls_compared, report.calls_matched) == (4, 3)
    assert _rules(report) == {3: "ttl"}
    assert "expired 20 s before this call (5m TTL)" in report.mismatches[0].reason
    assert report.warm_starts == []  # an expiry is never explained away as a warm start


# --- minimum cacheable length, per model --------------------------------------------------------


def test_minimum_length_per_model_matches() -> None:
    # Sonnet 4.5 caches 1,100 tokens (minimum 1,024); Haiku 4.5 does not cache 3,000 (4,096).
    sonnet = _call(
        0, 0, Usage(uncached_input=20, cache_write_5m=1100), system=(_text("rule", 1100, FIVE),)
    )
    haiku = _call(
        1,
        10,
        Usage(uncached_input=3020),
        system=(_text("rule", 3000, FIVE),),
        model=HAIKU,
    )
    report = _check(sonnet, haiku)
    assert (report.calls_compared, report.calls_matched) == (1, 1)  # haiku: nothing to compare
    assert report.mismatches == []


def test_a_1h_write_below_the_minimum_breaks_the_minimum_rule() -> None:
    haiku = _call(
        0,
        0,
        Usage(uncached_input=20, cache_write_1h=3000),
        system=(_text("rule", 3000, HOUR),),
        model=HAIKU,
    )
    report = _check(haiku)
    assert _rules(report) == {0: "minimum"}
    assert "below the 4,096-token minimum" in report.mismatches[0].reason
    assert (report.mismatches[0].recorded_write_1h, report.mismatches[0].predicted_write) == (
        3000,
        0,
    )


# --- invalidation order: tools -> system -> messages ---------------------------------------------


def _tool(word: str) -> ToolDef:
    return ToolDef("lookup", f"{word} " * 3000, {"type": "object"}, "custom", FIVE)


def test_invalidation_follows_tools_then_system_then_messages() -> None:
    # Three sections of ~3,000 tokens, each under its own breakpoint; the whole prompt is
    # 9,000 tokens. Changing the message re-reads tools+system (6,000); changing the system
    # re-reads the tools (3,000); changing a tool re-reads nothing.
    tools, system = (_tool("alpha"),), (_text("gamma", 3000, FIVE),)
    other_tools, other_system = (_tool("delta"),), (_text("kappa", 3000, FIVE),)
    first, second = ((Message("user", (_text(word, 3000, FIVE),)),) for word in ("omega", "sigma"))
    calls = [
        _call(0, 0, Usage(cache_write_5m=9000), tools=tools, system=system, messages=first),
        _call(1, 10, Usage(cache_read=6000, cache_write_5m=3000), tools=tools, system=system,
              messages=second),
        _call(2, 20, Usage(cache_read=3000, cache_write_5m=6000), tools=tools,
              system=other_system, messages=second),
        _call(3, 30, Usage(cache_write_5m=9000), tools=other_tools, system=other_system,
              messages=second),
    ]  # fmt: skip
    # by hand, within the check's tolerance (5% of the prompt): the tool section also carries
    # the tool-use system prompt Anthropic adds when tools are sent (~300 tokens)
    positions = _positions(calls[0], 9000)
    assert abs(positions[0] - 3000) < 450 and abs(positions[1] - 6000) < 450
    report = _check(*calls)
    assert (report.calls_compared, report.calls_matched) == (4, 4), report.mismatches


# --- the 20-block lookback ---------------------------------------------------------------------


def _lookback_trace(blocks_after: int, recorded_read: int) -> FidelityReport:
    # t=0 writes the 2,000-token system prompt. t=10 sends it again without a breakpoint,
    # followed by ``blocks_after`` message blocks of ~10 tokens, the last one marked: the
    # read looks back 20 blocks from that breakpoint.
    head = _call(0, 0, Usage(uncached_input=10, cache_write_5m=2000), system=SYSTEM)
    blocks = tuple(
        _text(f"step{i}", 10, FIVE if i == blocks_after - 1 else None) for i in range(blocks_after)
    )
    later = _call(
        1, 10, Usage(), system=(_text("policy", 2000),), messages=(Message("user", blocks),)
    )
    # the system prompt is 2,000 tokens: the messages are the rest, in proportion
    system_share = _positions(later, 10_000)[0] / 10_000
    messages = round(2000 * (1 - system_share) / system_share)
    write = messages + (2000 - recorded_read)
    usage = Usage(cache_read=recorded_read, cache_write_5m=write)
    return _check(head, _call(1, 10, usage, system=later.system, messages=later.messages))


def test_lookback_reaches_exactly_20_blocks_back() -> None:
    report = _lookback_trace(20, recorded_read=2000)
    assert (report.calls_compared, report.calls_matched) == (2, 2), report.mismatches


def test_lookback_misses_21_blocks_back() -> None:
    report = _lookback_trace(21, recorded_read=0)
    assert (report.calls_compared, report.calls_matched) == (2, 2), report.mismatches


def test_a_read_21_blocks_back_breaks_the_lookback_rule() -> None:
    report = _lookback_trace(21, recorded_read=2000)
    assert _rules(report) == {1: "lookback"}
    assert "21 blocks before the nearest breakpoint" in report.mismatches[0].reason
    assert report.warm_starts == []


# --- at most 4 breakpoints ---------------------------------------------------------------------


def test_a_fifth_breakpoint_breaks_the_breakpoint_rule() -> None:
    # Five 1,100-token blocks, each marked: the API uses the first four (4,400 tokens); the
    # recording writes all five.
    blocks = tuple(_text(f"part{i}", 1100, FIVE) for i in range(5))
    call = _call(0, 0, Usage(cache_write_5m=5500), messages=(Message("user", blocks),))
    report = _check(call)
    assert _rules(report) == {0: "breakpoints"}
    assert report.mismatches[0].predicted_write == 4400


# --- 1h entries before 5m ones -----------------------------------------------------------------


def _mixed(system_mark: CacheControl, message_mark: CacheControl, usage: Usage) -> Call:
    return _call(
        0,
        0,
        usage,
        system=(_text("policy", 3000, system_mark),),
        messages=(Message("user", (_text("case", 1000, message_mark),)),),
    )


def test_1h_before_5m_is_billed_in_order_and_outlives_it() -> None:
    # 3,000 system tokens under a 1h breakpoint, 1,000 message tokens under a 5m one. Ten
    # minutes later the 1h entry is read and the 5m part, expired, is written again.
    first = _mixed(HOUR, FIVE, Usage(cache_write_1h=3000, cache_write_5m=1000))
    later = _call(
        1, 600, Usage(cache_read=3000, cache_write_5m=1000), system=first.system,
        messages=first.messages,
    )  # fmt: skip
    report = _check(first, later)
    assert (report.calls_compared, report.calls_matched) == (2, 2), report.mismatches


def test_a_1h_entry_after_a_5m_one_breaks_the_order_rule() -> None:
    call = _mixed(FIVE, HOUR, Usage(cache_write_5m=3000, cache_write_1h=1000))
    report = _check(call)
    assert _rules(report) == {0: "ttl-order"}
    mismatch = report.mismatches[0]
    assert (mismatch.predicted_write_5m, mismatch.predicted_write_1h) == (4000, 0)


# --- a warm start --------------------------------------------------------------------------------


def test_a_first_call_reading_cache_is_a_warm_start() -> None:
    # The first recorded call reads the 2,000-token system prompt an earlier, unrecorded call
    # wrote: the simulation seeds that entry and says so; the next call reads it too.
    report = _check(
        _call(0, 0, Usage(uncached_input=20, cache_read=2000), system=SYSTEM),
        _call(1, 30, Usage(uncached_input=20, cache_read=2000), system=SYSTEM),
    )
    assert (report.calls_compared, report.calls_matched) == (2, 2)
    assert [p.index for p in report.warm_starts] == [0]


# --- thinking: a new user turn strips earlier thinking, and the cached prefix with it ----------


def test_a_new_user_turn_breaks_the_prefix_where_earlier_thinking_was_stripped() -> None:
    """Sonnet 4.5 strips the thinking of turns before the last user turn (DESIGN.md section
    6); within a tool loop the current turn's thinking stays. So the first request of a new
    user turn matches what the tool loop cached only up to the first turn that thought: a
    trial's recording read 2,081 tokens there where costsim, keeping the thinking in the
    prefix, predicted 7,910. A model that keeps earlier thinking (Opus 4.5) matches on."""
    question = Message("user", (_text("question", 20),))
    asked = ToolUseBlock("t1", "lookup", {"q": "refund"})
    first = Message("assistant", (ThinkingBlock("weigh " * 300, "sig"), asked))
    result = Message("user", (ToolResultBlock("t1", (_text("result", 500),)),))
    answer = Message("assistant", (ThinkingBlock("sum " * 100, "sig2"), _text("done", 30)))
    follow_up = Message("user", (_text("again", 20),))
    for model, kept in ((SONNET, False), ("claude-opus-4-5-20251101", True)):
        usage = Usage(uncached_input=3000)
        loop = _call(2, 20, usage, system=SYSTEM, messages=(question, first, result), model=model)
        turn = _call(
            3, 40, usage, system=SYSTEM, messages=(question, first, result, answer, follow_up),
            model=model,
        )  # fmt: skip
        builder = PrefixBuilder()
        looped, turned = builder.build(loop, 3000).blocks, builder.build(turn, 3000).blocks
        # system, the question, then the first answer's thinking and tool use, the result
        assert looped[1].key == turned[1].key  # the question: cached alike
        assert (looped[3].key == turned[3].key) is kept  # the tool use after the thinking
        if not kept:  # the stripped thinking adds nothing to the prefix
            assert turned[2].key == turned[1].key


def test_openai_reasoning_items_of_earlier_turns_leave_the_cached_prefix() -> None:
    """The Responses API reads reasoning items of the current turn only (the counting rule of
    costsim.metering.openai_framing): after a new user message the earlier turn's reasoning
    is not in the prompt, so the prefix cached during its tool loop matches only up to it (a
    trial's gpt-5 call read 5,760 tokens fewer than costsim predicted)."""
    question = Message("user", (_text("question", 20),))
    reasoning = Message("assistant", (ReasoningBlock(summary="", encrypted="x" * 400),))
    called = Message("assistant", (ToolUseBlock("c1", "lookup", {"q": "refund"}),))
    output = Message("tool", (ToolResultBlock("c1", (_text("result", 500),)),))
    follow_up = Message("user", (_text("again", 20),))

    def call(*messages: Message, context: str | None = None) -> Call:
        extra = {"reasoning_context": context} if context else {}
        return Call(
            flavour=Flavour.OPENAI_RESPONSES,
            model="gpt-5",
            provenance=Provenance(PATH, 0),
            messages=messages,
            extra=extra,  # type: ignore[arg-type]
        )

    builder = PrefixBuilder()
    loop = builder.build(call(question, reasoning, called, output), 2000).blocks
    turn = builder.build(call(question, reasoning, called, output, follow_up), 2100).blocks
    assert loop[0].key == turn[0].key and loop[2].key != turn[2].key  # the call after it
    kept = call(question, reasoning, called, output, follow_up, context="all_turns")
    assert builder.build(kept, 2100).blocks[2].key == loop[2].key


def test_a_prefix_that_breaks_far_from_the_simulated_one_is_not_called_an_estimate() -> None:
    """A read 1,800 tokens shorter than simulated is not the prefix estimate's few percent:
    the reason says the provider's prefix broke earlier than the request shows (a trial's
    thinking and chain mismatches were all put down to the token estimate)."""
    report = _check(
        _call(0, 0, Usage(uncached_input=20, cache_write_5m=2000), system=SYSTEM),
        _call(1, 60, Usage(uncached_input=20, cache_read=200, cache_write_5m=1800), system=SYSTEM),
    )
    (mismatch,) = report.mismatches
    assert mismatch.reason.startswith("the provider's prefix broke earlier than the request")


def test_a_platform_model_id_has_its_model_minimum() -> None:
    """Haiku 4.5 caches from 4,096 tokens through Bedrock and Vertex AI too: a trial's
    Bedrock id got the 1,024 default, and a 2,362-token prefix was read from cache."""
    from costsim.cache.rules import default_rules

    rules = default_rules()
    for model in (
        "claude-haiku-4-5",
        "us.anthropic.claude-haiku-4-5-20251001-v1:0",
        "claude-haiku-4-5@20251001",
    ):
        assert rules.minimum(model, START) == 4096, model
