"""``thinking_budget``: output shrinks by the excess; re-sent thinking shrinks on newer models."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from pathlib import Path

import pytest

from costsim.engine import Engine, Variant, make_step
from costsim.errors import ConfigError
from costsim.model import (
    Call,
    Flavour,
    Message,
    Provenance,
    TextBlock,
    ThinkingBlock,
    ThinkingConfig,
    Usage,
)
from costsim.normalise import CassetteTrace
from costsim.pricing import price

WHEN = datetime(2025, 11, 3, 10, 0, tzinfo=UTC)
THOUGHT = ThinkingBlock("Let me weigh each option carefully. " * 300, signature="sig")


def _trace(model: str) -> CassetteTrace:
    first = Call(
        flavour=Flavour.ANTHROPIC_MESSAGES,
        model=model,
        provenance=Provenance(Path("t.yaml"), 0),
        messages=(Message("user", (TextBlock("Which plan is cheaper?"),)),),
        thinking=ThinkingConfig(True, 8000),
        response=(THOUGHT, TextBlock("Plan B.")),
        usage=Usage(uncached_input=200, output=3000, reasoning=2500),
        recorded_at=WHEN,
    )
    second = dataclasses.replace(
        first,
        provenance=Provenance(Path("t.yaml"), 1),
        messages=(
            *first.messages,
            Message("assistant", first.response),
            Message("user", (TextBlock("Why?"),)),
        ),
        response=(TextBlock("It needs fewer servers."),),
        usage=Usage(uncached_input=3300, output=40, reasoning=0),
        recorded_at=WHEN.replace(minute=1),
    )
    return CassetteTrace(Path("t.yaml"), (first, second), 0, 0)


def test_output_shrinks_by_the_excess_exactly() -> None:
    trace = _trace("claude-sonnet-4-5")
    result = Engine([trace]).run(Variant("t", (make_step("thinking_budget", {"budget": 1024}),)))
    first, second = (item.usage for item in result.traces[0].calls)
    assert first is not None and second is not None
    assert (first.output, first.reasoning, first.prompt_total) == (3000 - (2500 - 1024), 1024, 200)
    assert result.traces[0].calls[0].call.thinking == ThinkingConfig(True, 1024)
    # Sonnet 4.5 strips earlier thinking: the second request's input does not change
    assert second.prompt_total == 3300 and second.output == 40
    expected = price(first, model="claude-sonnet-4-5", provider="anthropic", at=WHEN).amount
    assert result.traces[0].calls[0].usage is not None
    metered = result.metered()[0].price
    assert metered is not None and metered.amount == expected
    assert result.divergences == 1  # 2,500 > 2 x 1,024


def test_newer_models_bill_shortened_earlier_thinking() -> None:
    trace = _trace("claude-opus-4-5")
    result = Engine([trace]).run(Variant("t", (make_step("thinking_budget", {"budget": 2000}),)))
    second = result.traces[0].calls[1]
    assert second.usage is not None and second.usage.prompt_total < 3300
    kept = second.call.messages[1].content[0]
    assert isinstance(kept, ThinkingBlock)
    assert len(kept.text) == round(len(THOUGHT.text) * 2000 / 2500)


def test_budget_above_recorded_thinking_changes_nothing() -> None:
    trace = _trace("claude-sonnet-4-5")
    engine = Engine([trace])
    same = engine.run(Variant("t", (make_step("thinking_budget", {"budget": 4000}),))).totals()
    base = engine.run(Variant("b")).totals()
    assert (same.output_tokens, same.cost_usd) == (base.output_tokens, base.cost_usd)
    with pytest.raises(ConfigError, match="budget"):
        make_step("thinking_budget", {"budget": 100})


def test_thinking_budget_over_the_corpus(corpus: Path) -> None:
    from costsim.report import load_traces

    traces, _ = load_traces([corpus])
    engine = Engine(traces)
    base = engine.run(Variant("b")).totals()
    result = engine.run(Variant("t", (make_step("thinking_budget", {"budget": 1024}),)))
    totals = result.totals()
    assert totals.output_tokens < base.output_tokens
    assert (
        base.cost_usd is not None
        and totals.cost_usd is not None
        and totals.cost_usd <= base.cost_usd
    )
    assert result.divergences >= 0
