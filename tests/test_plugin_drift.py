"""What differs between a sent and a recorded request: only what can change the bill is drift."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from costsim.analysis.drift import differences, summary
from costsim.model import Call, Provenance
from costsim.providers import Adapter
from costsim.providers.anthropic import AnthropicMessages
from costsim.providers.openai_chat import OpenAIChat
from costsim.providers.openai_responses import OpenAIResponses

IMAGE = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBO"}}
ANTHROPIC: dict[str, Any] = {
    "model": "claude-sonnet-4-5",
    "max_tokens": 1024,
    "system": [{"type": "text", "text": "You are terse.", "cache_control": {"type": "ephemeral"}}],
    "tools": [
        {"name": "search", "description": "Search.", "input_schema": {"type": "object"}},
        {"name": "fetch", "description": "Fetch.", "input_schema": {"type": "object"}},
    ],
    "messages": [
        {"role": "user", "content": [IMAGE, {"type": "text", "text": "What is this?"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "A cat."}]},
        {"role": "user", "content": "Thanks."},
    ],
    "metadata": {"user_id": "u-1"},
}
RESPONSES: dict[str, Any] = {
    "model": "gpt-5-mini",
    "input": [{"role": "user", "content": "Plan a trip."}],
    "reasoning": {"effort": "low"},
}


def _call(adapter: Adapter, request: dict[str, Any]) -> Call:
    parsed = adapter.parse_request(request)
    return Call(
        flavour=adapter.flavour,
        model=parsed.model,
        provenance=Provenance(Path("c.yaml"), 0),
        system=parsed.system,
        messages=parsed.messages,
        tools=parsed.tools,
        tool_choice=parsed.tool_choice,
        thinking=parsed.thinking,
        output_schema=parsed.output_schema,
        cache_control=parsed.cache_control,
        stream=parsed.stream,
        extra=parsed.extra,
    )


def _diff(
    change: Any, base: dict[str, Any] = ANTHROPIC, adapter: Adapter | None = None
) -> list[str]:
    adapter = adapter or AnthropicMessages()
    sent = copy.deepcopy(base)
    change(sent)
    return [str(d) for d in differences(_call(adapter, base), _call(adapter, sent))]


def _swap_image_and_text(body: dict[str, Any]) -> None:
    body["messages"][0]["content"].reverse()


def test_changes_that_cannot_change_the_bill_are_not_drift() -> None:
    assert _diff(_swap_image_and_text) == []  # block order only
    assert _diff(lambda b: b.update(max_tokens=64)) == []
    assert _diff(lambda b: b.update(metadata={"user_id": "u-2"})) == []
    assert _diff(lambda b: b.update(stream=True)) == []
    assert _diff(lambda b: b["tools"].reverse()) == []  # definitions in another order
    assert _diff(lambda b: b.update(dict(reversed(list(b.items()))))) == []  # key order
    # the API version Vertex AI and Bedrock read from the body, which each SDK sets itself (a
    # trial's --costsim-drift fail run failed on it)
    assert _diff(lambda b: b.update(anthropic_version="vertex-2023-10-16")) == []
    # a tool added before the last one's breakpoint moves no breakpoint (a trial's drift read
    # "tools +open_incident; cache breakpoints 3 -> 3 breakpoints")
    marked = copy.deepcopy(ANTHROPIC)
    marked["tools"][-1]["cache_control"] = {"type": "ephemeral"}
    added = {"name": "open", "description": "Open.", "input_schema": {"type": "object"}}
    assert _diff(lambda b: b["tools"].insert(0, added), marked) == ["tools +open"]
    vertex = {**ANTHROPIC, "anthropic_version": "vertex-2023-10-16"}
    assert _diff(lambda b: b.update(anthropic_version="bedrock-2023-05-31"), vertex) == []


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (
            lambda b: b.update(model="claude-opus-4-1"),
            ["model claude-sonnet-4-5 -> claude-opus-4-1"],
        ),
        (
            lambda b: b["system"][0].update(text="You are terse. Always."),
            ["system changed (+8 chars)"],
        ),
        (
            lambda b: b["tools"].append(
                {"name": "shell", "description": "Run.", "input_schema": {"type": "object"}}
            ),
            ["tools +shell"],
        ),
        (lambda b: b["tools"].pop(0), ["tools -search"]),
        (lambda b: b["tools"][1].update(description="Fetch a URL."), ["tools changed fetch"]),
        (lambda b: b.update(tool_choice={"type": "any"}), ['tool_choice null -> {"type": "any"}']),
        (
            lambda b: b["messages"].append({"role": "assistant", "content": "You're welcome."}),
            ["messages 3 -> 4 (+1)"],
        ),
        (
            lambda b: b["messages"][2].update(content="Thanks a lot."),
            ["messages #2 changed (+6 chars)"],
        ),
        (
            lambda b: b.update(thinking={"type": "enabled", "budget_tokens": 2048}),
            ["thinking off -> budget=2048"],
        ),
        (lambda b: b["system"][0].pop("cache_control"), ["cache breakpoints 1 -> 0 breakpoints"]),
        (
            lambda b: b["system"][0]["cache_control"].update(ttl="1h"),
            ["cache breakpoints TTL 5m -> 1h on 1 breakpoint"],
        ),
        (lambda b: b.update(temperature=0.2), ["sampling temperature null -> 0.2"]),
        (
            lambda b: b.update(service_tier="priority"),
            ['parameters service_tier null -> "priority"'],
        ),
    ],
)
def test_each_billed_aspect_is_named(change: Any, expected: list[str]) -> None:
    assert _diff(change) == expected


def test_a_responses_request_that_adds_a_reasoning_summary_is_drift() -> None:
    found = _diff(
        lambda b: b["reasoning"].update(summary="auto"), base=RESPONSES, adapter=OpenAIResponses()
    )
    assert found == ["thinking effort=low -> effort=low,summary=auto"]


def test_the_summary_says_sampling_only_or_lists_the_aspects() -> None:
    base = _call(AnthropicMessages(), ANTHROPIC)
    sampled = _call(AnthropicMessages(), {**ANTHROPIC, "temperature": 0.5, "top_p": 0.9})
    assert summary(differences(base, sampled)) == "sampling parameters only"
    both = _call(AnthropicMessages(), {**ANTHROPIC, "temperature": 0.5, "model": "claude-x"})
    assert summary(differences(base, both)) == "model, sampling"


CHAT: dict[str, Any] = {
    "model": "gpt-4.1",
    "messages": [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "Hi"},
    ],
}


def test_a_chat_system_prompt_is_the_system_aspect() -> None:
    found = _diff(
        lambda b: b["messages"][0].update(content="You are terse. Always."),
        base=CHAT,
        adapter=OpenAIChat(),
    )
    assert found == ["system changed (+8 chars)"]
    renamed = _diff(
        lambda b: b["messages"][0].update(role="developer"), base=CHAT, adapter=OpenAIChat()
    )
    assert renamed == []  # the same instructions under the newer role name bill the same


def test_a_change_counts_the_characters_written_not_their_json() -> None:
    """A trial added 918 characters with quotes and line breaks and read "+921 chars": the
    JSON's escapes were counted."""
    added = ' Say "done"\nwhen done.\n'  # 24 characters, 4 of them escaped in JSON
    found = _diff(
        lambda b: b["messages"][0].update(content="You are terse." + added),
        base=CHAT,
        adapter=OpenAIChat(),
    )
    assert found == [f"system changed (+{len(added)} chars)"]
    # a block without text of its own counts by its JSON: an image added to a message
    grown = _diff(
        lambda b: b["messages"][2].update(content=[IMAGE, {"type": "text", "text": "Thanks."}])
    )
    assert len(grown) == 1 and "+0 chars" not in grown[0] and grown[0].endswith(" chars)")


def test_a_responses_verbosity_change_is_drift() -> None:
    found = _diff(
        lambda b: b.update(text={"verbosity": "high"}), base=RESPONSES, adapter=OpenAIResponses()
    )
    assert found == ['sampling verbosity null -> "high"']


def test_a_body_written_another_way_is_the_recorded_request() -> None:
    """A client that serialises the same JSON with other spacing sent the recorded request (the
    plugin then skips reading it again); a changed value is read and compared."""
    import json
    from types import SimpleNamespace

    from costsim.plugin.vcr_patch import same_body as _same_body

    def request(body: Any) -> SimpleNamespace:
        return SimpleNamespace(body=body)

    stored = request(json.dumps(ANTHROPIC, separators=(",", ":")).encode())
    assert _same_body(request(json.dumps(ANTHROPIC, indent=1)), stored)
    assert _same_body(request(json.dumps(ANTHROPIC).encode()), stored)
    changed = {**ANTHROPIC, "max_tokens": 2048}
    assert not _same_body(request(json.dumps(changed)), stored)
    assert not _same_body(request(b"not json"), stored)
    assert not _same_body(request(None), stored)
