"""``lean_context``: light side calls lose the history; exact savings, tool round trips kept
whole, divergence on distinctive references, invariants, the real corpus."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from costsim.engine import Engine, Variant, VariantResult, make_step
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

WHEN = datetime(2025, 11, 3, 10, 0, tzinfo=UTC)
SYSTEM = Message("system", (TextBlock("You are a helpful assistant."),))
HISTORY = (
    Message("user", (TextBlock("We deploy build 48213 to the staging cluster tonight."),)),
    Message("assistant", (TextBlock("Noted; staging will be frozen during the deploy."),)),
)


def _trace(task: str, answer: str) -> CassetteTrace:
    call = Call(
        flavour=Flavour.OPENAI_CHAT,
        model="gpt-4o",
        provenance=Provenance(Path("l.yaml"), 0),
        messages=(SYSTEM, *HISTORY, Message("user", (TextBlock(task),))),
        response=(TextBlock(answer),),
        recorded_at=WHEN,
    )
    usage = Usage(uncached_input=serialise(call).raw, output=9)
    return CassetteTrace(Path("l.yaml"), (dataclasses.replace(call, usage=usage),), 0, 0)


def _message_tokens(message: Message) -> int:
    count = counter("o200k_base")
    return (
        3
        + count(message.role)
        + sum(count(b.text) for b in message.content if isinstance(b, TextBlock))
    )


def test_light_task_drops_history_exactly() -> None:
    trace = _trace("Summarise this file: README.md says hello.", "It says hello.")
    result = Engine([trace]).run(Variant("l", (make_step("lean_context"),)))
    item = result.traces[0].calls[0]
    assert [m.role for m in item.call.messages] == ["system", "user"]
    saved = sum(_message_tokens(m) for m in HISTORY)
    recorded = trace.calls[0].usage
    assert recorded is not None and item.usage is not None
    assert item.usage.prompt_total == recorded.prompt_total - saved  # the chat recipe is exact
    assert (
        result.totals().cost_usd
        == price(item.usage, model="gpt-4o", provider="openai", at=WHEN).amount
    )
    assert result.divergences == 0


def test_response_using_dropped_history_is_a_divergence() -> None:
    trace = _trace("Extract the build number.", "Build 48213.")
    result = Engine([trace]).run(Variant("l", (make_step("lean_context"),)))
    assert result.divergences == 1 and "48213" in result.events[-1].message


def test_ordinary_calls_are_untouched() -> None:
    trace = _trace("What should we do next?", "Wait.")
    engine = Engine([trace])
    assert (
        engine.run(Variant("l", (make_step("lean_context"),))).totals().cost_usd
        == engine.run(Variant("b")).totals().cost_usd
    )
    with pytest.raises(ConfigError, match="keep_last=0"):
        make_step("lean_context", {"keep_last": 0})


def test_lean_context_over_the_corpus(corpus: Path) -> None:
    from costsim.analysis.report import load_traces

    traces, _ = load_traces([corpus])
    engine = Engine(traces)
    base = engine.run(Variant("b")).totals()
    result = engine.run(Variant("l", (make_step("lean_context"),)))
    assert result.totals().prompt_tokens <= base.prompt_tokens
    assert result.divergences >= 0


# --- tool round trips, where to look, parameters -------------------------------------------------

CLASSIFIER = Message("system", (TextBlock("You classify support tickets into queues."),))
TICKETS = (
    Message("user", (TextBlock("Ticket T-1: my invoice is wrong."),)),
    Message("assistant", (TextBlock("billing"),)),
    Message("user", (TextBlock("Ticket T-2: cannot log in."),)),
)
LOOKUPS = (
    Message(
        "assistant",
        (
            ToolUseBlock("q1", "lookup_queue", {"name": "auth"}),
            ToolUseBlock("q2", "lookup_queue", {"name": "access"}),
        ),
    ),
    Message("tool", (ToolResultBlock("q1", (TextBlock("auth: open"),)),)),
    Message("tool", (ToolResultBlock("q2", (TextBlock("access: closed"),)),)),
)


def _call(messages: tuple[Message, ...], answer: str, index: int = 0, extra: int = 5) -> Call:
    call = Call(
        flavour=Flavour.OPENAI_CHAT,
        model="gpt-4o",
        provenance=Provenance(Path("l.yaml"), index),
        messages=messages,
        response=(TextBlock(answer),),
        recorded_at=WHEN.replace(minute=index),
    )
    usage = Usage(uncached_input=serialise(call).raw + extra, output=4)
    return dataclasses.replace(call, usage=usage)


def _run(calls: tuple[Call, ...], params: dict[str, object] | None = None) -> VariantResult:
    trace = CassetteTrace(Path("l.yaml"), calls, 0, 0)
    return Engine([trace]).run(Variant("l", (make_step("lean_context", params),)))


def test_tool_results_keep_the_call_they_answer_exactly() -> None:
    call = _call((CLASSIFIER, *TICKETS, *LOOKUPS), "auth")
    result = _run((call,), {"match_on": "system"})
    item = result.traces[0].calls[0]
    assert item.call.messages == (CLASSIFIER, *LOOKUPS)  # both parallel results and their call
    saved = sum(_message_tokens(m) for m in TICKETS)
    assert call.usage is not None and item.usage is not None
    assert item.usage.prompt_total == call.usage.prompt_total - saved
    assert (
        result.totals().cost_usd
        == price(item.usage, model="gpt-4o", provider="openai", at=WHEN).amount
    )
    assert [e.message for e in result.events] == [
        "light task ('classify'): dropped 3 of 7 messages"
    ]


def test_keep_last_and_match_on() -> None:
    call = _call((CLASSIFIER, *TICKETS), "access", extra=0)
    assert _run((call,)).events == []  # "cannot log in": no light word in the user text
    for match_on in ("system", "both"):
        kept = _run((call,), {"match_on": match_on, "keep_last": 2}).traces[0].calls[0]
        assert kept.call.messages == (CLASSIFIER, *TICKETS[1:])
        assert call.usage is not None and kept.usage is not None
        assert kept.usage.prompt_total == call.usage.prompt_total - _message_tokens(TICKETS[0])
    assert _run((call,), {"patterns": [r"log in"]}).traces[0].calls[0].call.messages == (
        CLASSIFIER,
        TICKETS[2],
    )


def test_tool_result_text_is_not_user_text() -> None:
    # Anthropic shape: the latest user turn carries only a tool result that says "extract"
    use = Message("assistant", (ToolUseBlock("t1", "read", {"path": "notes.txt"}),))
    answer = Message("user", (ToolResultBlock("t1", (TextBlock("how to extract values"),)),))
    call = dataclasses.replace(
        _call((*TICKETS[:2], use, answer), "ok"), flavour=Flavour.ANTHROPIC_MESSAGES
    )
    assert _run((call,)).events == []


@pytest.mark.parametrize(
    ("history", "answer"),
    [
        ("The config lives in src/app/settings.toml.", "Summary: see src/app/settings.toml."),
        (
            'The customer said "refund the duplicate order".',
            'They asked to "refund the duplicate order".',
        ),
        ("Call parseInvoice on the payload.", "It calls parseInvoice."),
        ("Order 9931 shipped.", "Order 9931."),
        # a snake_case identifier (a trial's summary named retry_call, edited earlier)
        ("I changed retry_call to send the key.", "I made retry_call send the key."),
    ],
)
def test_distinctive_references_to_dropped_history(history: str, answer: str) -> None:
    messages = (
        SYSTEM,
        Message("user", (TextBlock(history),)),
        Message("assistant", (TextBlock("ok"),)),
    )
    call = _call((*messages, Message("user", (TextBlock("Summarise the chat."),))), answer)
    result = _run((call,))
    assert result.divergences == 1
    # the same token in the kept task is no divergence
    told = _call((*messages, Message("user", (TextBlock(f"Summarise: {history}"),))), answer)
    assert _run((told,)).divergences == 0


def test_ordinary_words_are_not_distinctive() -> None:
    call = _call(
        (SYSTEM, *HISTORY, Message("user", (TextBlock("Summarise."),))), "Staging frozen tonight."
    )
    assert _run((call,)).divergences == 0


def test_parameters_validated_by_name() -> None:
    with pytest.raises(ConfigError, match="keep_last='two'"):
        make_step("lean_context", {"keep_last": "two"})
    with pytest.raises(ConfigError, match="patterns"):
        make_step("lean_context", {"patterns": ["(unclosed"]})
    with pytest.raises(ConfigError, match="match_on='everything'"):
        make_step("lean_context", {"match_on": "everything"})


# --- invariants -------------------------------------------------------------------------------------


def _session() -> tuple[Call, ...]:
    first = (SYSTEM, *HISTORY, Message("user", (TextBlock("What next?"),)))
    second = (*first, Message("assistant", (TextBlock("Deploy."),)))
    return (
        _call(first, "Deploy.", 0),
        _call(
            (*second, Message("user", (TextBlock("Summarise our plan."),))), "Deploy tonight.", 1
        ),
        _call(
            (*second, Message("user", (TextBlock("Extract build 48213 notes."),))),
            "Build 48213.",
            2,
        ),
    )


def test_patterns_that_match_nothing_change_no_number() -> None:
    calls = _session()
    base = _run(calls, {"patterns": []})
    assert all(item.sim.untouched for item in base.traces[0].calls)
    assert [i.usage for i in base.traces[0].calls] == [c.usage for c in calls]
    assert base.events == []


def test_prompt_never_below_zero() -> None:
    tiny = tuple(
        dataclasses.replace(c, usage=Usage(uncached_input=2, output=1)) for c in _session()
    )
    assert [i.usage.prompt_total for i in _run(tiny).traces[0].calls if i.usage] == [2, 0, 0]


@settings(max_examples=20, deadline=None)
@given(
    keep_last=st.integers(1, 8),
    match_on=st.sampled_from(["user", "system", "both"]),
    patterns=st.lists(
        st.sampled_from([r"summari[sz]e", r"\bextract\b", r"helpful", r"next"]), max_size=3
    ),
)
def test_savings_bounded_by_the_baseline(
    keep_last: int, match_on: str, patterns: list[str]
) -> None:
    calls = _session()
    result = _run(calls, {"keep_last": keep_last, "match_on": match_on, "patterns": patterns})
    base = _run(calls, {"patterns": []}).totals()
    totals = result.totals()
    assert 0 <= totals.prompt_tokens <= base.prompt_tokens
    assert totals.cost_usd is not None and base.cost_usd is not None
    assert 0 <= totals.cost_usd <= base.cost_usd
    assert all(i.usage is not None and i.usage.prompt_total >= 0 for i in result.traces[0].calls)


def test_lean_context_corpus_savings_are_bounded(corpus: Path) -> None:
    from costsim.analysis.report import load_traces

    traces, _ = load_traces([corpus])
    engine = Engine(traces)
    base = engine.run(Variant("b")).totals()
    for params in ({}, {"match_on": "both", "keep_last": 2}):
        result = engine.run(Variant("l", (make_step("lean_context", params),)))
        totals = result.totals()
        assert totals.cost_usd is not None and base.cost_usd is not None
        assert 0 <= base.cost_usd - totals.cost_usd < base.cost_usd
        assert all(
            item.usage is None or item.usage.prompt_total >= 0
            for t in result.traces
            for item in t.calls
        )
        changed = sum(1 for e in result.events if e.kind == "change")
        assert 0 <= result.divergences <= changed
