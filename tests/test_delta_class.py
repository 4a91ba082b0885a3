"""The class of what a change touched bands its estimate: a paragraph added to the system
prompt of a thinking request is a text change.

A test whose system prompt grew by 5,000 characters on a thinking request was banded with the
whole-prompt error of reasoning requests (p90 90% of the prompt, meant for thinking passed
back): its what-if cost read $0.0211 with a p90 range of $0 to $0.0565.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from costsim.analysis.prompt_band import INCREMENT_FACTOR, changed_prompt_error
from costsim.metering.classes import content_class, delta_class
from costsim.metering.meter import Meter
from costsim.model import (
    Call,
    Flavour,
    Message,
    Provenance,
    TextBlock,
    ThinkingBlock,
    ThinkingConfig,
    ToolDef,
)

SYSTEM = "You are a weather assistant. Answer briefly. " * 20
THINKING = Call(
    flavour=Flavour.ANTHROPIC_MESSAGES,
    model="claude-sonnet-4-5",
    provenance=Provenance(Path("t.yaml"), 0),
    system=(TextBlock(SYSTEM),),
    messages=(
        Message("user", (TextBlock("Weather in Paris?"),)),
        Message("assistant", (ThinkingBlock("Let me look it up.", "sig"), TextBlock("Sunny."))),
        Message("user", (TextBlock("And tomorrow?"),)),
    ),
    thinking=ThinkingConfig(True, 2048),
)


def _grown(call: Call) -> Call:
    """The same request parsed apart (equal blocks, not the same objects), its system grown."""
    copy = dataclasses.replace(call, messages=tuple(dataclasses.replace(m) for m in call.messages))
    return dataclasses.replace(copy, system=(TextBlock(SYSTEM + " Answer in French." * 250),))


def test_what_changed_names_the_class() -> None:
    assert content_class(THINKING) == "reasoning"
    assert delta_class(THINKING, _grown(THINKING)) == "text"
    more = dataclasses.replace(
        THINKING,
        messages=(*THINKING.messages, Message("assistant", (ThinkingBlock("Hmm.", "s"),))),
    )
    assert delta_class(THINKING, more) == "reasoning"
    tools = dataclasses.replace(THINKING, tools=(ToolDef("weather", "Look it up.", {}),))
    assert delta_class(THINKING, tools) == "tools"
    budget = dataclasses.replace(THINKING, thinking=ThinkingConfig(True, 1024))
    assert delta_class(THINKING, budget) == "reasoning"
    assert delta_class(THINKING, dataclasses.replace(THINKING, model="x")) == "reasoning"


def test_a_text_change_to_a_thinking_request_is_banded_as_text() -> None:
    meter = Meter()
    grown = _grown(THINKING)
    band = meter.delta_band(THINKING, grown)
    text = meter.errors.total("anthropic-messages", "text").p90
    increment = meter.errors.increment("anthropic-messages", "text").p90
    expected = abs(band.delta) * max(increment, text) / 100 * INCREMENT_FACTOR
    assert abs(changed_prompt_error(meter, THINKING, grown) - expected) < 1e-6
    reasoning = meter.errors.total("anthropic-messages", "reasoning").p90
    assert reasoning > 2 * max(increment, text)  # what it was banded with: far wider
