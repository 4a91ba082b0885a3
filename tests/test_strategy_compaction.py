"""``compaction``: a conversation compacted at call 12, its later calls, and the summary call."""

from __future__ import annotations

import dataclasses
import re
from datetime import UTC, datetime
from pathlib import Path

from costsim.engine import Engine, Variant, make_step
from costsim.metering.serialise import serialise
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
from costsim.strategies.compaction import SUMMARY_PROMPT

WHEN = datetime(2025, 11, 3, 10, 0, tzinfo=UTC)


def _history() -> list[Message]:
    messages = [Message("user", (TextBlock("Let us plan the release of version 7."),))]
    for i in range(1, 39):
        if i == 19:
            messages.append(
                Message(
                    "assistant", (ToolUseBlock("call_19", "read_file", {"path": "CHANGELOG.md"}),)
                )
            )
        elif i == 20:
            messages.append(
                Message(
                    "tool", (ToolResultBlock("call_19", (TextBlock("## 7.0\n- faster parser"),)),)
                )
            )
        elif i % 2:
            messages.append(
                Message(
                    "assistant",
                    (TextBlock(f"Step {i}: noted. " + "We checked the release notes. " * 6),),
                )
            )
        else:
            messages.append(Message("user", (TextBlock(f"Next item {i}, please."),)))
    return messages


HISTORY = _history()


def _trace() -> CassetteTrace:
    calls = []
    for k in range(1, 21):  # call k carries the first 2k - 1 messages
        call = Call(
            flavour=Flavour.OPENAI_CHAT,
            model="gpt-4o",
            provenance=Provenance(Path("c.yaml"), k - 1),
            messages=tuple(HISTORY[: 2 * k - 1]),
            response=(TextBlock("ok"),),
            recorded_at=WHEN.replace(minute=k),
        )
        calls.append(
            dataclasses.replace(call, usage=Usage(uncached_input=serialise(call).raw, output=20))
        )
    return CassetteTrace(Path("c.yaml"), tuple(calls), 0, 0)


STEP = make_step(
    "compaction",
    {"max_messages": 22, "keep_last": 4, "summary_model": "gpt-4.1-mini", "summary_tokens": 300},
)


def test_compacted_at_call_12_and_later_calls_carry_the_compacted_history() -> None:
    trace = _trace()
    result = Engine([trace]).run(Variant("c", (STEP,)))
    items = result.traces[0].calls
    assert len(items) == 21  # 20 recorded calls and one summary call
    summary_index = next(i for i, item in enumerate(items) if item.sim.role == "summary")
    assert summary_index == 11  # billed just before call 12 continues
    for k, item in enumerate(items[:summary_index], start=1):
        assert item.sim.untouched and item.usage == trace.calls[k - 1].usage
    # Call 12 has 23 messages; keeping the last 3 would cut at message 20, a tool result,
    # so the cut moves to 19 and keeps the tool_use with its result. Later calls stay within
    # 22 messages (call 20: first + summary + 20 kept), so there is no second compaction.
    for k, item in zip(range(12, 21), items[summary_index + 1 :], strict=True):
        messages = item.call.messages
        assert messages[0] == HISTORY[0]
        assert (
            messages[1].content[0].text.startswith("[Summary of 18 earlier messages, 300 tokens]")
        )  # type: ignore[union-attr]
        assert messages[2:] == tuple(HISTORY[19 : 2 * k - 1])
        assert item.usage is not None
        assert item.usage.prompt_total == serialise(item.call).raw  # chat recipe: exact
        assert item.usage.output == 20


def test_an_openai_system_message_is_kept_beside_the_task_not_counted_as_it() -> None:
    """An OpenAI history opens with its system prompt as a message; keep_first counts the
    conversation after it, as an Anthropic history (whose system is apart) does. It used to
    keep the system message alone and summarise the user's task away, and compact a message
    earlier than the same conversation on Anthropic."""
    system = Message("system", (TextBlock("You are the release manager's assistant."),))
    plain = _trace()
    calls = tuple(
        dataclasses.replace(call, messages=(system, *call.messages)) for call in plain.calls
    )
    result = Engine([dataclasses.replace(plain, calls=calls)]).run(Variant("c", (STEP,)))
    items = result.traces[0].calls
    summary_index = next(i for i, item in enumerate(items) if item.sim.role == "summary")
    assert summary_index == 11  # at call 12, as without the system message
    later = items[summary_index + 1].call.messages
    assert later[:2] == (system, HISTORY[0])  # the system prompt and the task
    assert later[2].content[0].text.startswith("[Summary of 18 earlier messages")  # type: ignore[union-attr]
    changes = [e.message for e in result.events if e.kind == "change"]
    assert changes[0].startswith("compacted 18 messages")
    # the summary call sends the agent's system prompt too, as where the API takes it apart
    # (it sent none: cheaper than elsewhere, and no agent in a breakdown by agent matched it)
    summary = items[summary_index].call
    assert summary.messages[0] == system and summary.messages[1] == HISTORY[1]
    from costsim.analysis.groups import AgentMatcher

    matcher = AgentMatcher((("release", re.compile("release manager")),))
    assert matcher.role(summary) == "release"


def test_summary_call_is_billed_on_the_light_model() -> None:
    trace = _trace()
    result = Engine([trace]).run(Variant("c", (STEP,)))
    summary = next(item for item in result.traces[0].calls if item.sim.role == "summary")
    call = summary.call
    assert call.model == "gpt-4.1-mini" and summary.sim.origin is None
    # the summarised messages 1-18, the instruction joined to the last (user) one
    assert call.messages[:-1] == tuple(HISTORY[1:18])
    assert call.messages[-1].content == (*HISTORY[18].content, TextBlock(SUMMARY_PROMPT))
    assert summary.usage is not None
    assert (summary.usage.prompt_total, summary.usage.output) == (serialise(call).raw, 300)
    expected = price(
        summary.usage, model="gpt-4.1-mini", provider="openai", at=trace.calls[11].recorded_at
    )
    metered = [m for m in result.metered() if m.call is call]
    assert metered[0].price == expected
    totals = result.totals()
    baseline = Engine([trace]).run(Variant("b")).totals()
    assert totals.llm_calls == baseline.llm_calls + 1
    assert totals.prompt_tokens < baseline.prompt_tokens


def test_unpriced_summary_model_skips_and_says_so() -> None:
    step = make_step(
        "compaction", {"max_messages": 22, "keep_last": 3, "summary_model": "no-such-model"}
    )
    result = Engine([_trace()]).run(Variant("c", (step,)))
    assert len(result.traces[0].calls) == 20
    assert any(e.kind == "note" and "compaction skipped" in e.message for e in result.events)
    dropped = Engine([_trace()]).run(
        Variant(
            "d",
            (
                make_step(
                    "compaction",
                    {
                        "max_messages": 22,
                        "keep_last": 4,
                        "summary_model": "no-such-model",
                        "fallback": "drop",
                    },
                ),
            ),
        )
    )
    assert len(dropped.traces[0].calls) == 20
    assert any("middle dropped" in e.message for e in dropped.events)


def test_compaction_over_the_corpus(corpus: Path) -> None:
    from costsim.analysis.report import load_traces

    traces, _ = load_traces([corpus])
    result = Engine(traces).run(
        Variant("c", (make_step("compaction", {"max_messages": 8, "keep_last": 4}),))
    )
    assert all(
        item.usage is None or item.usage.prompt_total >= 0
        for t in result.traces
        for item in t.calls
    )
    assert result.totals().cost_usd is not None


def test_compaction_that_never_triggers_changes_no_number() -> None:
    trace = _trace()
    engine = Engine([trace])
    base = engine.run(Variant("b")).totals()
    never = engine.run(Variant("n", (make_step("compaction", {"max_messages": 1000}),))).totals()
    assert (never.llm_calls, never.prompt_tokens, never.cost_usd) == (
        base.llm_calls,
        base.prompt_tokens,
        base.cost_usd,
    )


def test_the_window_trigger_reads_the_recorded_prompt_not_an_estimate() -> None:
    """gpt-4o's window is 128,000 tokens: a call that recorded 100,000 prompt tokens is over
    the 0.75 trigger (96,000) whatever its short text estimates to, and one that recorded
    90,000 is not; the messages alone (at most 9 here) never reach max_messages."""
    trace = _trace()
    calls = [
        dataclasses.replace(call, usage=Usage(uncached_input=prompt, output=20))
        for call, prompt in zip(trace.calls[:5], [90_000] * 3 + [100_000] * 2, strict=True)
    ]
    trace = CassetteTrace(trace.path, tuple(calls), 0, 0)
    step = make_step("compaction", {"keep_last": 2, "summary_model": "gpt-4.1-mini"})
    items = Engine([trace]).run(Variant("w", (step,))).traces[0].calls
    roles = [item.sim.role for item in items]
    assert roles.index("summary") == 3  # billed before call 4, the first one over the trigger
    assert all(item.sim.untouched for item in items[:3])


def test_a_middle_no_longer_than_its_summary_is_kept_and_said() -> None:
    """A trial: max_messages 2, keep_last 1 "compacted 1 messages" of about 60 tokens into a
    300-token summary, the trace dearer for it by 5.1% (a gate failed). A middle no longer
    than the summary that would replace it is kept, once said; a longer one is compacted."""
    trace = CassetteTrace(Path("c.yaml"), _trace().calls[:3], 0, 0)  # 1, 3 and 5 messages
    step = {"max_messages": 2, "keep_last": 1, "summary_model": "gpt-4.1-mini"}
    result = Engine([trace]).run(Variant("c", (make_step("compaction", step),)))
    assert all(item.sim.role != "summary" for item in result.traces[0].calls)
    notes = [e.message for e in result.events if e.kind == "note"]
    assert notes == [
        "a history's middle no longer than the 300-token summary that would replace it is "
        "kept, not compacted"
    ]
    step["summary_tokens"] = 20  # shorter than the middle: compacted
    result = Engine([trace]).run(Variant("c", (make_step("compaction", step),)))
    changes = [e.message for e in result.events if e.kind == "change"]
    assert changes and changes[0].startswith("compacted 1 message into a 20-token summary")
