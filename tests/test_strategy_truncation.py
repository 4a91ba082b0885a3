"""``truncation`` on hand-built traces: exact tokens and cost, consistency, divergence."""

from __future__ import annotations

import copy
import dataclasses
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import pytest

from costsim.engine import Engine, Variant, make_step
from costsim.errors import ConfigError
from costsim.metering.serialise import serialise
from costsim.metering.tokenizers import counter
from costsim.model import (
    Call,
    CassetteTrace,
    Flavour,
    Message,
    Provenance,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
)
from costsim.pricing.prices import price
from costsim.strategies.truncation import truncate_text

WHEN = datetime(2025, 11, 3, 10, 0, tzinfo=UTC)
BIG = "\n".join(f"line {i:04d}: the parser reads token {i} from the stream" for i in range(400))
QUOTED = "line 0200: the parser reads token 200 from the stream"


def _trace(*, quote: bool = False, error: bool = False, reply_text: str = "") -> CassetteTrace:
    first = Message("user", (TextBlock("Read the log."),))
    use = Message("assistant", (ToolUseBlock("c1", "read_log", {}),))
    result = Message("tool", (ToolResultBlock("c1", (TextBlock(BIG),), is_error=error),))
    text = reply_text or (f"I found: {QUOTED}" if quote else "Done.")
    reply = Message("assistant", (TextBlock(text),))
    second = Message("user", (TextBlock("Thanks."),))
    histories = [(first,), (first, use, result), (first, use, result, reply, second)]
    calls = []
    for index, messages in enumerate(histories):
        call = Call(
            flavour=Flavour.OPENAI_CHAT,
            model="gpt-4o",
            provenance=Provenance(Path("t.yaml"), index),
            messages=messages,
            response=reply.content if index == 1 else (TextBlock("ok"),),
            recorded_at=WHEN.replace(minute=index),
        )
        # Recorded prompt = the cookbook count plus tokens costsim does not model: anchoring on
        # the recording must carry them over unchanged.
        recorded = serialise(call).raw + 7
        calls.append(dataclasses.replace(call, usage=Usage(uncached_input=recorded, output=10)))
    return CassetteTrace(Path("t.yaml"), tuple(calls), 0, 0)


def test_truncate_text_keeps_head_tail_and_counts_lines() -> None:
    text, middle = truncate_text(BIG, head=3000, tail=2000)
    assert text.startswith(BIG[:3000]) and text.endswith(BIG[-2000:])
    assert f"[... {middle.count(chr(10))} lines truncated for context efficiency ...]" in text


def test_exact_tokens_and_cost() -> None:
    trace = _trace()
    engine = Engine([trace])
    result = engine.run(Variant("t", (make_step("truncation"),)))
    count = counter("o200k_base")
    truncated, _ = truncate_text(BIG, head=3000, tail=2000)
    saved = count(BIG) - count(truncated)
    assert saved > 1000
    usages = [item.usage for item in result.traces[0].calls]
    recorded = [c.usage for c in trace.calls]
    assert usages[0] == recorded[0]  # first call has no tool result
    for new, old in zip(usages[1:], recorded[1:], strict=True):
        assert new is not None and old is not None
        assert new.prompt_total == old.prompt_total - saved  # both later calls re-send it
        assert new.output == old.output
    expected = sum(
        price(u, model="gpt-4o", provider="openai", at=c.recorded_at).amount or 0
        for u, c in zip(usages, trace.calls, strict=True)
        if u is not None
    )
    assert result.totals().cost_usd == expected
    assert [e.kind for e in result.events] == ["change"]  # announced once, applied twice


def test_a_result_resent_as_another_object_is_announced_once() -> None:
    """Each request body is parsed on its own: a result resent in later calls is an equal
    copy, not the same object, and is still one change (where it is first cut)."""
    trace = _trace()
    copies = tuple(
        dataclasses.replace(call, messages=copy.deepcopy(call.messages)) for call in trace.calls
    )
    result = Engine([dataclasses.replace(trace, calls=copies)]).run(
        Variant("t", (make_step("truncation"),))
    )
    changes = [e for e in result.events if e.kind == "change"]
    assert len(changes) == 1 and changes[0].provenance == trace.calls[1].provenance


def test_two_results_of_one_id_are_two_changes() -> None:
    """Ids are not unique everywhere (a legacy function result's is its function's name): two
    different results cut under one id are each announced."""
    first = Message("user", (TextBlock("Read both logs."),))
    results = [
        Message("tool", (ToolResultBlock("read_log", (TextBlock(f"{tag} {BIG}"),)),))
        for tag in ("east", "west")
    ]
    call = Call(
        flavour=Flavour.OPENAI_CHAT,
        model="gpt-4o",
        provenance=Provenance(Path("t.yaml"), 0),
        messages=(first, *results),
        response=(TextBlock("ok"),),
        recorded_at=WHEN,
    )
    call = dataclasses.replace(call, usage=Usage(uncached_input=serialise(call).raw, output=5))
    trace = CassetteTrace(Path("t.yaml"), (call,), 0, 0)
    result = Engine([trace]).run(Variant("t", (make_step("truncation"),)))
    assert len([e for e in result.events if e.kind == "change"]) == 2


def test_error_results_capped_at_2000() -> None:
    trace = _trace(error=True)
    result = Engine([trace]).run(Variant("t", (make_step("truncation"),)))
    call = result.traces[0].calls[1].call
    block = call.messages[2].content[0]
    assert isinstance(block, ToolResultBlock)
    assert block.text.startswith(BIG[:2000]) and "lines truncated" in block.text
    assert len(block.text) < 2100


def test_quote_of_removed_text_is_a_divergence() -> None:
    result = Engine([_trace(quote=True)]).run(Variant("t", (make_step("truncation"),)))
    divergences = [e for e in result.events if e.kind == "divergence"]
    assert len(divergences) == 1 and "quotes truncated text of c1" in divergences[0].message


def test_a_reply_naming_what_only_the_removed_middle_held_is_a_divergence() -> None:
    """Not only a whole line: a reply naming an identifier or a number that only the removed
    middle held (a trial's reply named an error and a refund id from the middle of a 12,599-
    character log, and costsim counted no divergence). One the request still holds is not."""
    truncation = Variant("t", (make_step("truncation"),))
    named = _trace(reply_text="The stream broke: parse_token_0200 failed, so I stopped.")
    assert "parse_token_0200" not in BIG  # the middle holds it apart: 'token 200'
    middle = _trace(reply_text="It stopped after reading token 200 (the 201st); see above.")
    (event,) = [e for e in Engine([middle]).run(truncation).events if e.kind == "divergence"]
    assert event.message == "an assistant message refers to '200', only in truncated text of c1"
    # a number that is only part of one in the middle is not taken from it
    assert Engine([_trace(reply_text="Spent 020 ms on it.")]).run(truncation).divergences == 0
    head = _trace(reply_text="It began with token 0001 and line 0399 ended it.")
    assert Engine([head]).run(truncation).divergences == 0  # head and tail are still sent
    assert Engine([named]).run(truncation).divergences == 0  # in no result at all


def test_nothing_over_the_limit_changes_no_number() -> None:
    trace = _trace()
    engine = Engine([trace])
    base = engine.run(Variant("base")).totals()
    same = engine.run(
        Variant("t", (make_step("truncation", {"max_chars": 100_000, "head": 10, "tail": 10}),))
    ).totals()
    assert (same.prompt_tokens, same.cost_usd) == (base.prompt_tokens, base.cost_usd)


def test_parameters_validated() -> None:
    with pytest.raises(ConfigError, match="head"):
        make_step("truncation", {"head": 6000, "tail": 3000})
    with pytest.raises(ConfigError, match="max_chars='lots'"):
        make_step("truncation", {"max_chars": "lots"})


def test_truncation_over_the_corpus(corpus: Path) -> None:
    from costsim.analysis.report import load_traces

    traces, _ = load_traces([corpus])
    engine = Engine(traces)
    base = engine.run(Variant("base")).totals()
    result = engine.run(
        Variant("t", (make_step("truncation", {"max_chars": 2000, "head": 800, "tail": 400}),))
    )
    totals = result.totals()
    assert 0 < base.prompt_tokens - totals.prompt_tokens < base.prompt_tokens
    assert all(
        item.usage is None or item.usage.prompt_total >= 0
        for t in result.traces
        for item in t.calls
    )
    assert (
        base.cost_usd is not None
        and totals.cost_usd is not None
        and totals.cost_usd <= base.cost_usd
    )
    assert result.divergences >= 0


def test_max_chars_alone_scales_head_and_tail() -> None:
    """``truncation:max_chars=2000`` works on its own: head and tail keep their share of it
    (3/8 and 1/4, as 3000 and 2000 are of the default 8000); given ones are kept."""
    from costsim.strategies.truncation import TruncationParams

    assert (TruncationParams(max_chars=2000).head, TruncationParams(max_chars=2000).tail) == (
        750,
        500,
    )
    assert TruncationParams().head == 3000 and TruncationParams().tail == 2000
    assert TruncationParams(max_chars=2000, head=100).head == 100


def test_a_scaled_head_and_tail_are_not_written_back() -> None:
    from costsim.strategies.syntax import parse_variant

    variant = parse_variant("truncation:max_chars=2000")
    assert variant.describe() == "truncation:max_chars=2000"  # reads as it was written
    params = variant.steps[0].params
    assert (params.head, params.tail) == (750, 500)  # type: ignore[attr-defined]
    assert parse_variant(variant.describe()).steps == variant.steps


def _as_claude(scale: float = 1.0) -> CassetteTrace:
    """The log-reading trace as Claude calls, their recorded prompts ``scale`` times the
    OpenAI count (how far Claude's bill is from costsim's offline proxy)."""
    calls = tuple(
        dataclasses.replace(
            call,
            flavour=Flavour.ANTHROPIC_MESSAGES,
            model="claude-sonnet-4-5",
            messages=tuple(
                Message("user", m.content) if m.role == "tool" else m for m in call.messages
            ),
            usage=Usage(uncached_input=round(call.usage.prompt_total * scale), output=10)
            if call.usage is not None
            else None,
        )
        for call in _trace().calls
    )
    return dataclasses.replace(_trace(), calls=calls)


def test_a_saving_that_only_takes_text_away_cannot_come_out_dearer() -> None:
    """Cutting a tool result cannot lengthen the prompt: the band of the saving stops at no
    change, however unsure its size (a trial saw -$0.02492 banded up to +$0.01092 on a
    recording without caching, where nothing else moves). Here Claude billed twice what
    costsim's offline proxy counts, so the size of a 2,500-character cut is unsure by more
    than the cut itself."""
    from costsim.analysis.comparison import compare_variants

    step = make_step("truncation", {"max_chars": 19000})
    (summary,) = compare_variants(Engine([_as_claude(2.0)]), [Variant("t", (step,))]).variants
    band = summary.delta
    assert band.value is not None and band.value < 0
    assert band.spread.below > -band.value >= band.spread.above  # the cap: no dearer
    assert band.high == 0


def test_a_cut_is_as_unsure_as_the_estimate_of_the_prompt_it_comes_from() -> None:
    """The recorded prompt says how far the offline count is from the bill on this very
    content: where it is close, a cut's size is as sure (a trial's tool-definition cut was
    banded at 144% of its size, reaching down to the whole cassette's cost); where it is far
    (twice), the wider band stands."""
    from costsim.analysis.comparison import compare_variants
    from costsim.analysis.prompt_band import SELF_FLOOR

    step = make_step("truncation", {"max_chars": 19000})
    close, far = (
        compare_variants(Engine([_as_claude(scale)]), [Variant("t", (step,))]).variants[0].delta
        for scale in (1.0, 2.0)
    )
    assert close.value == Decimal("-0.017202")
    assert close.spread.below < far.spread.below
    # at least a tenth of the cut and 10 tokens, at $3 per million
    assert close.spread.below >= -close.value * Decimal(str(SELF_FLOOR))
    assert close.high is not None and close.high < 0


def test_a_tool_call_passing_on_what_only_the_middle_held_is_a_divergence() -> None:
    """An agent passes what it read on as tool input: the response's tool call counts as
    what the assistant says (a review's call refunded 'line 0200', only in the cut middle)."""
    trace = _trace()
    calls = list(trace.calls)
    refund = ToolUseBlock("r1", "refund", {"line": "line 0200", "reason": "duplicate"})
    calls[2] = dataclasses.replace(calls[2], response=(refund,))
    result = Engine([dataclasses.replace(trace, calls=tuple(calls))]).run(
        Variant("t", (make_step("truncation"),))
    )
    (event,) = [e for e in result.events if e.kind == "divergence"]
    assert event.message == "an assistant message refers to '0200', only in truncated text of c1"


def test_a_prompt_the_server_extends_keeps_the_tables_band() -> None:
    """A request with a server tool (tool search's deferred definitions, say) is billed for
    what the client never sent: its recorded prompt says nothing about the estimator, so its
    cut keeps the table's band (a review found a deferred-tools increment outside the
    self-checked band and inside the table's)."""
    from costsim.analysis.prompt_band import self_checked_error
    from costsim.metering.meter import Meter
    from costsim.model import ToolDef

    before, after = _as_claude(1.0).calls[1:3]
    meter = Meter()
    assert self_checked_error(meter, before, after, meter.delta(before, after)) is not None
    search = ToolDef("tool_search_tool_regex", type="tool_search_tool_regex_20251119")
    before, after = (dataclasses.replace(c, tools=(search,)) for c in (before, after))
    assert self_checked_error(meter, before, after, meter.delta(before, after)) is None


def test_a_text_cut_beside_untouched_images_is_self_checked_on_the_text() -> None:
    """A screenshot in the conversation made the whole request an images one, and its cut
    of a text result fell back to the table's band: nine times its text-only twin's."""
    from costsim.analysis.prompt_band import self_checked_error
    from costsim.metering.meter import Meter
    from costsim.model import ImageBlock, Message

    before, after = _as_claude(1.0).calls[1:3]
    shot = Message("user", (ImageBlock("image/png", "sha256:ab", 9_000, width=800, height=600),))
    meter = Meter()
    with_shot = [dataclasses.replace(c, messages=(shot, *c.messages)) for c in (before, after)]
    delta = meter.delta(with_shot[0], with_shot[1])
    assert self_checked_error(meter, with_shot[0], with_shot[1], delta) is not None
    # an image added by the change is no text change: the table's band
    added = dataclasses.replace(after, messages=(shot, *after.messages))
    assert self_checked_error(meter, before, added, meter.delta(before, added)) is None


@pytest.mark.parametrize(
    "spec",
    [
        "truncation:head=3000,max_chars=9000,tail=2000",  # the static defaults, kept
        "truncation:head=100",
        "truncation:max_chars=4000",
        "truncation:head=10,max_chars=4000",
    ],
)
def test_a_label_reads_back_as_the_variant_it_names(spec: str) -> None:
    """``max_chars=9000,head=3000,tail=2000`` was labelled ``truncation:max_chars=9000`` (the
    head and tail equal the defaults), which reads back as head 3,375 and tail 2,250."""
    from costsim.strategies.syntax import parse_variant

    variant = parse_variant(spec)
    again = parse_variant(variant.describe()).steps[0].params
    params = variant.steps[0].params
    assert variant.describe() == spec
    assert (again.head, again.tail) == (params.head, params.tail)  # type: ignore[attr-defined]
