"""``lean_context``: light side calls lose the history; exact savings, divergence."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from pathlib import Path

import pytest

from costsim.engine import Engine, Variant, make_step
from costsim.errors import ConfigError
from costsim.metering.serialise import serialise
from costsim.metering.tokenizers import counter
from costsim.model import Call, Flavour, Message, Provenance, TextBlock, Usage
from costsim.normalise import CassetteTrace
from costsim.pricing import price

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
    from costsim.report import load_traces

    traces, _ = load_traces([corpus])
    engine = Engine(traces)
    base = engine.run(Variant("b")).totals()
    result = engine.run(Variant("l", (make_step("lean_context"),)))
    assert result.totals().prompt_tokens <= base.prompt_tokens
    assert result.divergences >= 0
