"""``thinking_budget``: output shrinks by the excess, ``budget_tokens`` follows the budget,
re-sent thinking shrinks on models that keep it, OpenAI is left as recorded (or capped as an
effort when asked), and a run over
the real corpus."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from costsim.engine import Engine, Variant, make_step
from costsim.errors import ConfigError
from costsim.metering.meter import Meter
from costsim.metering.serialise import serialise
from costsim.metering.tokenizers import counter
from costsim.model import (
    Call,
    CassetteTrace,
    Flavour,
    Message,
    Provenance,
    TextBlock,
    ThinkingBlock,
    ThinkingConfig,
    Usage,
)
from costsim.pricing.prices import price

WHEN = datetime(2025, 11, 3, 10, 0, tzinfo=UTC)
THOUGHT = ThinkingBlock("Let me weigh each option carefully. " * 300, signature="sig")


def _trace(
    model: str, *, reasoning: int | None = 2500, thinking: ThinkingConfig | None = None
) -> CassetteTrace:
    """Three turns of one conversation; the first thinks, the later ones re-send it."""
    first = Call(
        flavour=Flavour.ANTHROPIC_MESSAGES,
        model=model,
        provenance=Provenance(Path("t.yaml"), 0),
        messages=(Message("user", (TextBlock("Which plan is cheaper?"),)),),
        thinking=thinking or ThinkingConfig(True, 8000),
        response=(THOUGHT, TextBlock("Plan B.")),
        usage=Usage(uncached_input=200, output=3000, reasoning=reasoning),
        recorded_at=WHEN,
    )
    calls = [first]
    history = first.messages
    for index, (question, answer) in enumerate(
        [("Why?", "It needs fewer servers."), ("Sure?", "Yes.")], start=1
    ):
        history = (
            *history,
            Message("assistant", first.response),
            Message("user", (TextBlock(question),)),
        )
        calls.append(
            dataclasses.replace(
                first,
                provenance=Provenance(Path("t.yaml"), index),
                messages=history,
                response=(TextBlock(answer),),
                usage=Usage(uncached_input=3300 * index, output=40, reasoning=0),
                recorded_at=WHEN + timedelta(minutes=index),
            )
        )
    return CassetteTrace(Path("t.yaml"), tuple(calls), 0, 0)


def _run(trace: CassetteTrace, **params: Any) -> Any:
    return Engine([trace]).run(Variant("t", (make_step("thinking_budget", params),)))


def _usages(result: Any) -> list[Usage]:
    usages = [item.usage for item in result.traces[0].calls]
    assert all(u is not None for u in usages)
    return usages


def _cost(usages: list[Usage], model: str, provider: str = "anthropic") -> Decimal:
    return sum(
        (price(u, model=model, provider=provider, at=WHEN).amount for u in usages), Decimal(0)
    )


def test_output_shrinks_by_the_excess_exactly() -> None:
    trace = _trace("claude-sonnet-4-5")
    result = _run(trace, budget=1024)
    first, second, third = _usages(result)
    assert (first.output, first.reasoning, first.prompt_total) == (3000 - (2500 - 1024), 1024, 200)
    # Sonnet 4.5 strips earlier thinking: later inputs do not change, nor do their outputs
    assert (second.prompt_total, second.output) == (3300, 40)
    assert (third.prompt_total, third.output) == (6600, 40)
    # every thinking request of the trace now carries the budget, consistently
    assert [c.call.thinking for c in result.traces[0].calls] == [ThinkingConfig(True, 1024)] * 3
    assert result.totals().output_tokens == 1524 + 40 + 40
    assert result.totals().cost_usd == _cost([first, second, third], "claude-sonnet-4-5")
    # $3 / $15 per million: the first call is 200 in and 1,524 out
    assert price(first, model="claude-sonnet-4-5", provider="anthropic", at=WHEN).amount == (
        Decimal(200 * 3 + 1524 * 15) / 1_000_000
    )
    assert result.divergences == 1  # 2,500 > 2 x 1,024
    change = next(e for e in result.events if e.kind == "change")
    assert change.tokens == 1476 and "as reported" in change.message


def test_unreported_thinking_is_the_recorded_output_less_the_visible_answer() -> None:
    """Anthropic does not report thinking tokens, and Claude 4 returns a summary of its
    thinking while billing the whole: the thinking billed is the recorded output less the
    visible answer (here 3,000 - 3 for "Plan B."), not the summary's length. A trial's
    Sonnet 4.5 calls summarised 13,532 tokens of thinking above a 1,024 budget into short
    texts, and the strategy answered 'saves nothing, exact' where it saves 44%."""
    visible = counter("cl100k_base")("Plan B.")
    assert visible == 3
    for thought in (THOUGHT, ThinkingBlock("I compared both plans.", signature="sig")):
        trace = _trace("claude-sonnet-4-5", reasoning=None)
        calls = (dataclasses.replace(trace.calls[0], response=(thought, TextBlock("Plan B."))),)
        trace = dataclasses.replace(trace, calls=calls + trace.calls[1:])
        result = _run(trace, budget=2000)
        first = _usages(result)[0]
        # its thinking stays unreported, as recorded: it is in the output
        assert (first.output, first.reasoning) == (3000 - (3000 - visible - 2000), None)
        change = next(e for e in result.events if e.kind == "change")
        assert "thinking 2,997 -> 2,000 tokens (the recorded output less its visible answer)" in (
            change.message
        )
        assert result.divergences == 0


def test_newer_models_bill_shortened_earlier_thinking() -> None:
    trace = _trace("claude-opus-4-5")
    result = _run(trace, budget=2000)
    calls = result.traces[0].calls
    kept = calls[1].call.messages[1].content[0]
    assert isinstance(kept, ThinkingBlock)
    assert kept.text == THOUGHT.text[: round(len(THOUGHT.text) * 2000 / 2500)]
    # the same block object re-sent again maps to the same shortened object
    assert calls[2].call.messages[1].content[0] is kept
    assert calls[2].call.messages[3].content[0] is kept
    count = counter("cl100k_base")
    removed = count(THOUGHT.text) - count(kept.text)
    recorded = trace.calls[1]
    assert serialise(recorded).raw - serialise(calls[1].call).raw == removed
    slope = Meter().coefficients(recorded).as_dict()["raw"]
    second, third = _usages(result)[1:]
    assert second.prompt_total == round(3300 - slope * removed)
    assert third.prompt_total == round(6600 - slope * 2 * removed)
    assert result.totals().cost_usd == _cost(_usages(result), "claude-opus-4-5")


def _reasoning_call() -> Call:
    return Call(
        flavour=Flavour.OPENAI_CHAT,
        model="o4-mini",
        provenance=Provenance(Path("o.yaml"), 0),
        messages=(Message("user", (TextBlock("Prove it."),)),),
        response=(TextBlock("Done."),),
        usage=Usage(uncached_input=50, output=3500, reasoning=3000),
        recorded_at=WHEN,
    )


def test_openai_reasoning_is_left_as_recorded_with_a_note() -> None:
    """OpenAI's request takes an effort, not a budget: a saving booked there (gpt-5 reasoning
    1,472 -> 1,024) could not be deployed, so by default none is booked."""
    call = _reasoning_call()
    trace = CassetteTrace(Path("o.yaml"), (call,), 0, 0)
    result = _run(trace, budget=2048)
    (usage,) = _usages(result)
    assert (usage.prompt_total, usage.output, usage.reasoning) == (50, 3500, 3000)
    assert result.traces[0].calls[0].call is call
    assert [(e.kind, e.message) for e in result.events] == [
        (
            "note",
            "OpenAI sets a reasoning effort, not a token budget: 1 call reasoning beyond 2,048 "
            "tokens left as recorded (effort_as_budget=true caps them as a lower effort might)",
        )
    ]
    assert result.totals().cost_usd == _cost([usage], "o4-mini", "openai")


def test_openai_reasoning_is_capped_as_an_effort_when_asked() -> None:
    call = _reasoning_call()
    trace = CassetteTrace(Path("o.yaml"), (call,), 0, 0)
    result = _run(trace, budget=2048, effort_as_budget=True)
    (usage,) = _usages(result)
    assert (usage.prompt_total, usage.output, usage.reasoning) == (50, 3500 - 952, 2048)
    assert result.traces[0].calls[0].call is call  # the request cannot express a budget
    assert any(e.kind == "note" and "effort" in e.message for e in result.events)
    assert result.totals().cost_usd == _cost([usage], "o4-mini", "openai")
    assert result.divergences == 0


@pytest.mark.parametrize(
    ("model", "budget"),
    [("claude-sonnet-4-5", 2500), ("claude-opus-4-5", 4000), ("claude-sonnet-4-5", 100_000)],
)
def test_a_budget_above_every_recorded_thinking_changes_no_number(model: str, budget: int) -> None:
    trace = _trace(model)
    engine = Engine([trace])
    result = engine.run(Variant("t", (make_step("thinking_budget", {"budget": budget}),)))
    base = engine.run(Variant("b"))
    assert _usages(result) == _usages(base)
    assert result.totals() == base.totals()
    assert [c.call for c in result.traces[0].calls] == list(trace.calls)
    assert not result.events


@settings(max_examples=25, deadline=None)
@given(
    budget=st.integers(1024, 40_000),
    reasoning=st.integers(0, 3000),
    model=st.sampled_from(["claude-sonnet-4-5", "claude-opus-4-5", "claude-haiku-4-5"]),
)
def test_output_never_negative_and_savings_never_exceed_the_baseline(
    budget: int, reasoning: int, model: str
) -> None:
    trace = _trace(model, reasoning=reasoning)
    engine = Engine([trace])
    result = engine.run(Variant("t", (make_step("thinking_budget", {"budget": budget}),)))
    base = engine.run(Variant("b")).totals()
    totals = result.totals()
    first = _usages(result)[0]
    assert first.output == 3000 - max(0, reasoning - budget)
    assert all(u.prompt_total >= 0 and u.output >= 0 for u in _usages(result))
    assert totals.prompt_tokens <= base.prompt_tokens
    assert totals.cost_usd is not None and base.cost_usd is not None
    assert 0 <= base.cost_usd - totals.cost_usd <= base.cost_usd


def test_unknown_thinking_and_thinking_off_are_left_alone() -> None:
    hidden = _trace("claude-sonnet-4-5", reasoning=None)
    hidden = CassetteTrace(
        hidden.path,
        tuple(dataclasses.replace(c, response=(TextBlock("Plan B."),)) for c in hidden.calls),
        0,
        0,
    )
    result = _run(hidden, budget=1024)
    assert _usages(result)[0].output == 3000
    assert any(e.kind == "note" and "unknown" in e.message for e in result.events)
    off = _trace("claude-sonnet-4-5", thinking=ThinkingConfig(False))
    result = _run(off, budget=1024)
    assert _usages(result)[0].output == 3000 and not result.events


@pytest.mark.parametrize(
    ("params", "named"),
    [
        ({"budget": 100}, "budget=100"),
        ({}, "budget="),
        ({"budget": 2048, "divergence_ratio": 1}, "divergence_ratio=1"),
        ({"budget": 2048, "ratio": 3}, "ratio="),
    ],
)
def test_invalid_parameters_are_config_errors_naming_them(
    params: dict[str, Any], named: str
) -> None:
    with pytest.raises(ConfigError, match="thinking_budget") as error:
        make_step("thinking_budget", params)
    assert named in str(error.value)


def test_thinking_budget_over_the_corpus(corpus: Path) -> None:
    from costsim.analysis.report import load_traces

    traces, _ = load_traces([corpus])
    engine = Engine(traces)
    base = engine.run(Variant("b"))
    base_by_trace = base.totals_by_trace()
    # the corpus's reasoning beyond 1,024 tokens is OpenAI's: as recorded, unless asked
    kept = engine.run(Variant("k", (make_step("thinking_budget", {"budget": 1024}),)))
    assert kept.totals() == base.totals()
    assert any("effort_as_budget=true" in event.message for event in kept.events)
    step = make_step("thinking_budget", {"budget": 1024, "effort_as_budget": True})
    result = engine.run(Variant("t", (step,)))
    totals = result.totals()
    assert 0 < totals.output_tokens < base.totals().output_tokens
    assert totals.prompt_tokens <= base.totals().prompt_tokens
    for path, variant in result.totals_by_trace().items():
        assert variant.output_tokens <= base_by_trace[path].output_tokens
    assert all(
        item.usage.output >= 0 and (item.usage.reasoning or 0) <= 1024
        for trace in result.traces
        for item in trace.calls
        if item.usage is not None and item.sim.output is not None
    )
    cost, base_cost = totals.cost_usd, base.totals().cost_usd
    assert cost is not None and base_cost is not None and 0 < cost <= base_cost
    assert result.divergences >= 0
    generous = engine.run(Variant("g", (make_step("thinking_budget", {"budget": 10**9}),)))
    assert generous.totals() == base.totals()
