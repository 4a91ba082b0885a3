"""OpenAI framing rules, by hand: the functions namespace as the harmony format renders it,
calls and results addressed by function, parallel calls, the frame around the namespace per
API and model, tool_choice, reasoning items of the current turn, and the calls calibration
leaves out because the server adds to their prompt."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from pathlib import Path

from costsim.metering.evaluate import exclusion_reason
from costsim.metering.openai_framing import passed_back_reasoning
from costsim.metering.serialise import serialise
from costsim.metering.signatures import openai_functions
from costsim.metering.tokenizers import counter
from costsim.model import (
    Call,
    Flavour,
    Message,
    Provenance,
    ReasoningBlock,
    TextBlock,
    ToolDef,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
)
from costsim.providers.openai_responses import OpenAIResponses

HERE = Provenance(Path("x.yaml"), 0)
COUNT = counter("o200k_base")
SEARCH = ToolDef(
    "search",
    "Search the notes.\n\n    Args:\n        query: what to look for\n    ",
    {
        "title": "search_args",
        "type": "object",
        "properties": {
            "query": {"title": "Query", "description": "What to look for", "type": "string"},
            "limit": {"type": "integer", "default": 5},
            "author": {"$ref": "#/$defs/Author"},
            "tags": {"type": "array"},
            "mode": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        },
        "required": ["query", "author"],
        "$defs": {
            "Author": {
                "type": "object",
                "properties": {
                    "name": {"title": "Name", "description": "Who wrote it", "type": "string"}
                },
                "required": ["name"],
            }
        },
    },
)
WEATHER = ToolDef(
    "get_weather",
    "",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)


def _call(flavour: Flavour, *messages: Message, model: str = "gpt-4o", **fields: object) -> Call:
    return Call(flavour=flavour, model=model, provenance=HERE, messages=messages, **fields)  # type: ignore[arg-type]


def test_functions_render_as_the_harmony_namespace() -> None:
    # description lines stripped, blank ones dropped; the parameters' title a comment; a
    # top-level field's title as "// Title" and "//"; nested fields indented by four spaces,
    # their titles left out; $ref resolved; defaults trailing; anyOf and bare arrays opaque
    assert openai_functions((SEARCH,)) == (
        "namespace functions {\n\n"
        "// Search the notes.\n"
        "// Args:\n"
        "// query: what to look for\n"
        "type search = (_: // search_args\n"
        "{\n"
        "// Query\n//\n// What to look for\n"
        "query: string,\n"
        "limit?: number, // default: 5\n"
        "author: {\n"
        "    // Who wrote it\n"
        "    name: string,\n"
        "    },\n"
        "tags?: Array<any>,\n"
        "mode?: any,\n"
        "}) => any;\n"
        "\n} // namespace functions"
    )


def test_a_round_trip_is_addressed_by_function() -> None:
    user = Message("user", (TextBlock("hi"),))
    use = ToolUseBlock("c1", "get_weather", {"city": "Paris"})
    result = ToolResultBlock("c1", (TextBlock("sunny"),))
    plain = _call(Flavour.OPENAI_CHAT, user, tools=(WEATHER,))
    trip = dataclasses.replace(
        plain,
        messages=(user, Message("assistant", (use,)), Message("tool", (result,), name="ignored")),
    )
    # call: 3 + "assistant" 1 + " to=functions.get_weather" 5 + '{"city":"Paris"}' 5;
    # result: 3 + "functions.get_weather" 3 + "sunny" 2 (the message's name is not read)
    assert serialise(trip).raw - serialise(plain).raw == (3 + 1 + 5 + 5) + (3 + 3 + 2)
    assert serialise(trip).tool_round_trips == 1


def test_parallel_calls_are_one_multi_tool_use_call_on_gpt_4o_chat_only() -> None:
    uses = (ToolUseBlock("a", "get_weather", {"city": "Paris"}), ToolUseBlock("b", "now", {}))
    turn = Message("assistant", uses)
    chat = _call(Flavour.OPENAI_CHAT, Message("user", (TextBlock("hi"),)), turn)
    wrapper = (
        '{"tool_uses":[{"recipient_name":"functions.get_weather","parameters":{"city":"Paris"}},'
        '{"recipient_name":"functions.now","parameters":{}}]}'
    )
    separate = COUNT(" to=functions.get_weather") + COUNT('{"city":"Paris"}')
    separate += COUNT(" to=functions.now") + COUNT("{}")
    wrapped = COUNT(" to=multi_tool_use.parallel") + COUNT(wrapper)
    gpt5 = dataclasses.replace(chat, model="gpt-5")
    assert serialise(chat).raw - serialise(gpt5).raw == wrapped - separate + 1  # gpt-5 primes 2


def test_the_frame_around_functions_depends_on_api_model_and_date() -> None:
    user = Message("user", (TextBlock("hi"),))
    namespace = COUNT(openai_functions((WEATHER,)))

    def added(call: Call) -> int:
        return serialise(dataclasses.replace(call, tools=(WEATHER,))).raw - serialise(call).raw

    chat = _call(Flavour.OPENAI_CHAT, user)
    system = Message("system", (TextBlock("Be terse."),))
    assert added(chat) == namespace + 9
    assert added(dataclasses.replace(chat, messages=(system, user))) == namespace + 5
    assert added(dataclasses.replace(chat, model="gpt-5-mini")) == namespace + 90
    responses = _call(Flavour.OPENAI_RESPONSES, user, recorded_at=datetime(2026, 1, 5, tzinfo=UTC))
    assert added(responses) == namespace + 3
    assert added(dataclasses.replace(responses, model="gpt-5")) == namespace + 8
    early = dataclasses.replace(responses, recorded_at=datetime(2025, 3, 27, tzinfo=UTC))
    assert added(early) == namespace + 3 + 194  # the multi_tool_use namespace of March 2025


def test_a_named_tool_choice_costs_nothing_on_gpt_5() -> None:
    call = _call(Flavour.OPENAI_CHAT, Message("user", (TextBlock("hi"),)), tools=(WEATHER,))
    named = {"type": "function", "function": {"name": "get_weather"}}
    assert serialise(dataclasses.replace(call, tool_choice=named)).raw == serialise(call).raw + 6
    gpt5 = dataclasses.replace(call, model="gpt-5-mini")
    assert serialise(dataclasses.replace(gpt5, tool_choice=named)).raw == serialise(gpt5).raw


def test_reasoning_items_are_read_in_their_own_turn_only() -> None:
    user = Message("user", (TextBlock("hi"),))
    reasoning = Message("assistant", (ReasoningBlock("", encrypted="x" * 1200),))
    use = ToolUseBlock("c1", "get_weather", {"city": "Paris"})
    result = Message("tool", (ToolResultBlock("c1", (TextBlock("sunny"),)),))
    turn = (user, reasoning, Message("assistant", (use,)), result)
    call = _call(Flavour.OPENAI_RESPONSES, *turn, model="gpt-5")
    assert passed_back_reasoning(call) == (1, 1200)
    features = serialise(call)
    assert (features.reasoning_items, features.reasoning_chars) == (1, 1200)
    later = dataclasses.replace(call, messages=(*turn, Message("user", (TextBlock("and?"),))))
    assert passed_back_reasoning(later) == (0, 0)
    every = dataclasses.replace(later, extra={"reasoning_context": "all_turns"})
    assert passed_back_reasoning(every) == (1, 1200)
    assert passed_back_reasoning(dataclasses.replace(call, flavour=Flavour.OPENAI_CHAT)) == (0, 0)


def test_server_side_prompts_are_left_out_of_calibration() -> None:
    parsed = OpenAIResponses().parse_request(
        {
            "model": "gpt-5.4",
            "input": [
                {"role": "user", "content": "refund?"},
                {"role": "developer", "type": "additional_tools", "tools": []},
            ],
            "reasoning": {"context": "all_turns", "mode": "pro"},
        }
    )
    assert parsed.messages[1].content[0].kind == "other"
    assert parsed.extra["reasoning_context"] == "all_turns"
    usage = Usage(uncached_input=100)
    call = _call(Flavour.OPENAI_RESPONSES, *parsed.messages, usage=usage, extra=parsed.extra)
    features = serialise(call)
    assert exclusion_reason(call, features) == (
        "server-side additions to the prompt (reasoning mode pro)"
    )
    plain = dataclasses.replace(call, extra={})
    assert exclusion_reason(plain, features) == (
        "server tools or block types costsim does not model"
    )
    compact = _call(
        Flavour.OPENAI_RESPONSES,
        Message("user", (TextBlock("hi"),)),
        usage=usage,
        endpoint="/v1/responses/compact",
    )
    assert exclusion_reason(compact, serialise(compact)) == (
        "server-side additions to the prompt (compaction)"
    )
