"""Each API flavour, JSON and streaming, on hand-written bodies with known usage."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import yaml

from costsim.analysis.report import build_report
from costsim.model import (
    CassetteTrace,
    Flavour,
    ImageBlock,
    NoteKind,
    ReasoningBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
)
from costsim.pricing.ledger import meter
from costsim.providers.normalise import load_trace
from tests.test_hostile_input import interaction, write_yaml


def _sse(events: list[tuple[str | None, Any]]) -> str:
    chunks = []
    for name, data in events:
        payload = data if isinstance(data, str) else json.dumps(data)
        chunks.append((f"event: {name}\n" if name else "") + f"data: {payload}\n\n")
    return "".join(chunks)


def _cassette(
    tmp_path: Path,
    uri: str,
    request: dict[str, Any] | None,
    response: str | dict[str, Any],
    *,
    method: str = "POST",
) -> CassetteTrace:
    body = response if isinstance(response, str) else json.dumps(response)
    document = {
        "version": 1,
        "interactions": [
            {
                "request": {
                    "method": method,
                    "uri": uri,
                    "body": None if request is None else json.dumps(request),
                    "headers": {"content-type": ["application/json"]},
                },
                "response": {
                    "status": {"code": 200, "message": "OK"},
                    "headers": {"date": ["Tue, 04 Nov 2025 12:00:00 GMT"]},
                    "body": {"string": body},
                },
            }
        ],
    }
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(document))
    return load_trace(path)


ANTHROPIC = "https://api.anthropic.com/v1/messages"
CHAT = "https://api.openai.com/v1/chat/completions"
RESPONSES = "https://api.openai.com/v1/responses"

ANTHROPIC_REQUEST: dict[str, Any] = {
    "model": "claude-sonnet-4-5",
    "max_tokens": 2048,
    "system": [
        {"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral", "ttl": "1h"}}
    ],
    "thinking": {"type": "enabled", "budget_tokens": 1024},
    "tools": [
        {
            "name": "grep",
            "description": "Search files.",
            "input_schema": {"type": "object"},
            "cache_control": {"type": "ephemeral"},
        }
    ],
    "tool_choice": {"type": "auto"},
    "messages": [
        {"role": "user", "content": "find TODOs"},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "I should grep.", "signature": "sig"},
                {"type": "tool_use", "id": "t1", "name": "grep", "input": {"pattern": "TODO"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "t1",
                    "content": "a.py:3: TODO",
                    "is_error": False,
                },
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": "image/png", "data": "iVBOR"},
                },
            ],
        },
    ],
}


def test_anthropic_json(tmp_path: Path) -> None:
    response = {
        "type": "message",
        "model": "claude-sonnet-4-5-20250929",
        "content": [{"type": "thinking", "thinking": "ok"}, {"type": "text", "text": "One TODO."}],
        "usage": {
            "input_tokens": 100,
            "cache_creation_input_tokens": 300,
            "cache_read_input_tokens": 2000,
            "cache_creation": {"ephemeral_5m_input_tokens": 100, "ephemeral_1h_input_tokens": 200},
            "output_tokens": 50,
            "output_tokens_details": {"thinking_tokens": 20},
        },
    }
    (call,) = _cassette(tmp_path, ANTHROPIC + "?beta=true", ANTHROPIC_REQUEST, response).calls
    assert call.flavour is Flavour.ANTHROPIC_MESSAGES
    assert call.model == "claude-sonnet-4-5"
    assert call.priced_model == "claude-sonnet-4-5-20250929"
    assert call.usage == Usage(
        uncached_input=100,
        cache_read=2000,
        cache_write_5m=100,
        cache_write_1h=200,
        output=50,
        reasoning=20,
    )
    assert call.usage.prompt_total == 2400
    assert call.system[0].cache_control is not None and call.system[0].cache_control.ttl == "1h"
    assert call.tools[0].name == "grep" and call.tools[0].cache_control is not None
    assert call.thinking is not None and call.thinking.budget_tokens == 1024
    assistant = call.messages[1].content
    assert isinstance(assistant[0], ThinkingBlock) and isinstance(assistant[1], ToolUseBlock)
    result, image = call.messages[2].content
    assert isinstance(result, ToolResultBlock) and result.text == "a.py:3: TODO"
    assert isinstance(image, ImageBlock) and image.media_type == "image/png"
    assert call.recorded_at is not None and call.recorded_at.year == 2025


def test_anthropic_cache_creation_without_split_is_5m(tmp_path: Path) -> None:
    response = {
        "type": "message",
        "content": [{"type": "text", "text": "hi"}],
        "usage": {"input_tokens": 10, "cache_creation_input_tokens": 1500, "output_tokens": 3},
    }
    (call,) = _cassette(tmp_path, ANTHROPIC, ANTHROPIC_REQUEST, response).calls
    assert call.usage is not None
    assert (call.usage.cache_write_5m, call.usage.cache_write_1h) == (1500, 0)
    assert call.usage.reasoning is None


def test_anthropic_stream_final_message_delta_wins(tmp_path: Path) -> None:
    events: list[tuple[str | None, Any]] = [
        (
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "model": "claude-sonnet-4-5-20250929",
                    "usage": {
                        "input_tokens": 702,
                        "cache_read_input_tokens": 0,
                        "cache_creation_input_tokens": 0,
                        "output_tokens": 1,
                    },
                },
            },
        ),
        (
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            },
        ),
        (
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": "Hel"},
            },
        ),
        (
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": "lo"},
            },
        ),
        (
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 1,
                "content_block": {"type": "tool_use", "id": "t9", "name": "grep", "input": {}},
            },
        ),
        (
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 1,
                "delta": {"type": "input_json_delta", "partial_json": '{"pattern": '},
            },
        ),
        (
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 1,
                "delta": {"type": "input_json_delta", "partial_json": '"x"}'},
            },
        ),
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "tool_use"},
                "usage": {"output_tokens": 40},
            },
        ),
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {},
                "usage": {"input_tokens": 1591, "cache_read_input_tokens": 64, "output_tokens": 85},
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    ]
    request = {**ANTHROPIC_REQUEST, "stream": True}
    (call,) = _cassette(tmp_path, ANTHROPIC, request, _sse(events)).calls
    assert call.stream
    assert call.usage == Usage(uncached_input=1591, cache_read=64, output=85)
    text, tool = call.response
    assert text == TextBlock("Hello")
    assert isinstance(tool, ToolUseBlock) and tool.input == {"pattern": "x"}


def test_openai_chat_json_with_tools_and_cache(tmp_path: Path) -> None:
    request = {
        "model": "gpt-4o",
        "messages": [
            {"role": "system", "content": "You are terse."},
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "hi"},
                    {"type": "image_url", "image_url": {"url": "https://x/y.png"}},
                ],
            },
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "f", "arguments": '{"a": 1}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "42"},
        ],
        "tools": [
            {
                "type": "function",
                "function": {"name": "f", "description": "d", "parameters": {"type": "object"}},
            }
        ],
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": "x", "schema": {"type": "object"}},
        },
    }
    response = {
        "model": "gpt-4o-2024-08-06",
        "created": 1762257600,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "{}"}}],
        "usage": {
            "prompt_tokens": 2000,
            "completion_tokens": 30,
            "prompt_tokens_details": {"cached_tokens": 1024},
            "completion_tokens_details": {"reasoning_tokens": 0},
        },
    }
    (call,) = _cassette(tmp_path, CHAT, request, response).calls
    assert call.flavour is Flavour.OPENAI_CHAT
    assert call.usage == Usage(uncached_input=976, cache_read=1024, output=30, reasoning=0)
    assert call.output_schema is not None
    assert call.tools[0].name == "f" and call.tools[0].input_schema == {"type": "object"}
    tool_use = call.messages[2].content[0]
    assert isinstance(tool_use, ToolUseBlock) and tool_use.input == {"a": 1}
    result = call.messages[3].content[0]
    assert (
        isinstance(result, ToolResultBlock) and result.tool_use_id == "c1" and result.text == "42"
    )


def test_openai_chat_cache_write_tokens(tmp_path: Path) -> None:
    response = {
        "model": "gpt-5.6",
        "choices": [{"index": 0, "message": {"content": "ok"}}],
        "usage": {
            "prompt_tokens": 5000,
            "completion_tokens": 10,
            "prompt_tokens_details": {"cached_tokens": 1000, "cache_write_tokens": 3000},
        },
    }
    request = {"model": "gpt-5.6", "messages": [{"role": "user", "content": "x"}]}
    (call,) = _cassette(tmp_path, CHAT, request, response).calls
    assert call.usage == Usage(uncached_input=1000, cache_read=1000, cache_write_5m=3000, output=10)


def test_openai_chat_stream_usage_from_final_chunk(tmp_path: Path) -> None:
    def chunk(delta: dict[str, Any], usage: Any = None, choices: bool = True) -> tuple[None, Any]:
        body: dict[str, Any] = {
            "model": "gpt-4o-mini-2024-07-18",
            "created": 1762257600,
            "usage": usage,
        }
        body["choices"] = [{"index": 0, "delta": delta}] if choices else []
        return (None, body)

    events = [
        chunk({"role": "assistant", "content": ""}),
        chunk({"content": "Hi"}),
        chunk(
            {
                "tool_calls": [
                    {"index": 0, "id": "c1", "function": {"name": "f", "arguments": '{"a"'}}
                ]
            }
        ),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": ": 2}"}}]}),
        chunk({}, usage={"prompt_tokens": 33, "completion_tokens": 9}, choices=False),
        (None, "[DONE]"),
    ]
    request = {
        "model": "gpt-4o-mini",
        "stream": True,
        "messages": [{"role": "user", "content": "x"}],
    }
    (call,) = _cassette(tmp_path, CHAT, request, _sse(events)).calls
    assert call.usage == Usage(uncached_input=33, output=9)
    text, tool = call.response
    assert text == TextBlock("Hi")
    assert tool == ToolUseBlock("c1", "f", {"a": 2})


def test_openai_chat_stream_without_usage_is_unmetered(tmp_path: Path) -> None:
    events: list[tuple[str | None, Any]] = [
        (None, {"model": "gpt-4o", "choices": [{"index": 0, "delta": {"content": "Hi"}}]}),
        (None, "[DONE]"),
    ]
    request = {"model": "gpt-4o", "stream": True, "messages": [{"role": "user", "content": "x"}]}
    (call,) = _cassette(tmp_path, CHAT, request, _sse(events)).calls
    assert call.usage is None and not call.errored


def test_openai_responses_json(tmp_path: Path) -> None:
    request = {
        "model": "o4-mini",
        "instructions": "Be exact.",
        "reasoning": {"effort": "high"},
        "input": [
            {"role": "user", "content": [{"type": "input_text", "text": "2+2?"}]},
            {
                "type": "function_call",
                "call_id": "fc1",
                "name": "calc",
                "arguments": '{"e": "2+2"}',
            },
            {"type": "function_call_output", "call_id": "fc1", "output": "4"},
        ],
        "tools": [{"type": "function", "name": "calc", "parameters": {"type": "object"}}],
    }
    response = {
        "model": "o4-mini-2025-04-16",
        "created_at": 1762257600,
        "output": [
            {"type": "reasoning", "summary": [{"type": "summary_text", "text": "add"}]},
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "4"}],
            },
        ],
        "usage": {
            "input_tokens": 1300,
            "input_tokens_details": {"cached_tokens": 1152},
            "output_tokens": 200,
            "output_tokens_details": {"reasoning_tokens": 192},
        },
    }
    (call,) = _cassette(tmp_path, RESPONSES, request, response).calls
    assert call.flavour is Flavour.OPENAI_RESPONSES
    assert call.system == (TextBlock("Be exact."),)
    assert call.thinking is not None and call.thinking.effort == "high"
    assert call.usage == Usage(uncached_input=148, cache_read=1152, output=200, reasoning=192)
    assert isinstance(call.response[0], ReasoningBlock) and call.response[1] == TextBlock("4")
    assert isinstance(call.messages[1].content[0], ToolUseBlock)
    assert isinstance(call.messages[2].content[0], ToolResultBlock)


def test_openai_responses_stream(tmp_path: Path) -> None:
    final = {
        "model": "gpt-4o-2024-08-06",
        "output": [
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "Hi"}],
            }
        ],
        "usage": {
            "input_tokens": 12,
            "output_tokens": 3,
            "input_tokens_details": {"cached_tokens": 0},
        },
    }
    events: list[tuple[str | None, Any]] = [
        ("response.created", {"type": "response.created", "response": {**final, "usage": None}}),
        ("response.output_text.delta", {"type": "response.output_text.delta", "delta": "Hi"}),
        ("response.completed", {"type": "response.completed", "response": final}),
    ]
    (call,) = _cassette(
        tmp_path, RESPONSES, {"model": "gpt-4o", "input": "hi", "stream": True}, _sse(events)
    ).calls
    assert call.usage == Usage(uncached_input=12, output=3)
    assert call.response == (TextBlock("Hi"),)


def test_gateway_host_is_recognised_by_path_and_shape(tmp_path: Path) -> None:
    response = {
        "type": "message",
        "content": [{"type": "text", "text": "x"}],
        "usage": {"input_tokens": 5, "output_tokens": 1},
    }
    trace = _cassette(
        tmp_path, "http://localhost:4000/anthropic/v1/messages", ANTHROPIC_REQUEST, response
    )
    assert len(trace.calls) == 1 and trace.calls[0].provider == "anthropic"


@pytest.mark.parametrize(
    ("url", "model", "served_by", "cost"),
    [
        # genai-prices' lists on 2025-11-01, per million input / output tokens:
        # mistral-small-latest $0.10 / $0.30 (later $0.15 / $0.60), Azure's gpt-4o $2.50 / $10, Groq's llama-3.3-70b-versatile
        # $0.59 / $0.79, Anthropic's claude-sonnet-4-5 $3 / $15; 1,000 in and 100 out
        ("https://api.mistral.ai/v1/chat/completions", "mistral-small-latest", "mistral",
         "0.00013"),
        (
            "https://res.openai.azure.com/openai/deployments/gpt4o/chat/completions",
            "gpt-4o-2024-08-06",
            "azure",
            "0.0035",
        ),
        ("https://api.groq.com/openai/v1/chat/completions", "llama-3.3-70b-versatile", "groq",
         "0.000669"),
        ("https://api.anthropic.com/v1/chat/completions", "claude-sonnet-4-5", "anthropic",
         "0.0045"),
    ],
)  # fmt: skip
def test_another_providers_host_is_metered_at_its_prices(
    tmp_path: Path, url: str, model: str, served_by: str, cost: str
) -> None:
    """Azure OpenAI, Groq, Mistral, ... serve the OpenAI shape: their calls are billed from
    their own price lists (they used to be left out of every total)."""
    response = {
        "model": model,
        "choices": [{"index": 0, "message": {"content": "x"}}],
        "usage": {"prompt_tokens": 1000, "completion_tokens": 100, "total_tokens": 1100},
    }
    request = {"model": model, "messages": [{"role": "user", "content": "x"}]}
    trace = _cassette(tmp_path, url, request, response)
    (call,) = trace.calls
    assert (call.served_by, call.price_provider, trace.interactions) == (served_by, served_by, 1)
    metered = meter(call, as_of=datetime(2025, 11, 1, tzinfo=UTC))
    assert metered.price is not None and metered.price.amount == Decimal(cost)


def test_the_api_makers_own_host_and_gateways_are_not_another_provider(tmp_path: Path) -> None:
    response = {
        "model": "gpt-4o",
        "choices": [],
        "usage": {"prompt_tokens": 5, "completion_tokens": 1},
    }
    request = {"model": "gpt-4o", "messages": [{"role": "user", "content": "x"}]}
    for url in (
        "https://api.openai.com/v1/chat/completions",
        "http://localhost:4000/v1/chat/completions",
    ):
        (call,) = _cassette(tmp_path, url, request, response).calls
        assert call.served_by is None and call.price_provider == "openai"


def test_report_by_provider_names_who_bills_each_call(tmp_path: Path) -> None:
    """``--by provider`` groups by who bills: an Azure OpenAI call is Azure's, not OpenAI's
    (it used to land in ``openai`` although Azure's prices billed it)."""
    response = {
        "model": "gpt-4o-2024-08-06",
        "choices": [{"index": 0, "message": {"content": "x"}}],
        "usage": {"prompt_tokens": 1000, "completion_tokens": 100},
    }
    request = {"model": "gpt-4o", "messages": [{"role": "user", "content": "x"}]}
    hosts = {
        "azure": "https://res.openai.azure.com/openai/deployments/gpt4o/chat/completions",
        "openai": "https://api.openai.com/v1/chat/completions",
    }
    traces = []
    for name, url in hosts.items():
        (tmp_path / name).mkdir()
        traces.append(_cassette(tmp_path / name, url, request, response))
    report = build_report(traces, by="provider", as_of=datetime(2025, 11, 1, tzinfo=UTC))
    # gpt-4o at $2.50 / $10 per million on both lists: 1,000 in and 100 out, $0.0035 each
    assert {name: totals.priced_cost for name, totals in report.groups.items()} == {
        "azure": Decimal("0.0035"),
        "openai": Decimal("0.0035"),
    }
    # cassettes list names them alike (it said openai for both)
    from costsim.analysis.cassettes import listing

    assert [listing(trace).providers for trace in traces] == [("azure",), ("openai",)]


def test_count_tokens_endpoint_is_not_a_call(tmp_path: Path) -> None:
    trace = _cassette(
        tmp_path, ANTHROPIC + "/count_tokens", ANTHROPIC_REQUEST, {"input_tokens": 42}
    )
    assert trace.calls == () and trace.other_interactions == 1


def _download(tmp_path: Path, uri: str, lines: list[dict[str, Any]]) -> CassetteTrace:
    body = "\n".join(json.dumps(line) for line in lines)
    return _cassette(tmp_path, uri, None, body, method="GET")


def test_batch_results_are_said_not_counted_as_other(tmp_path: Path) -> None:
    """A Message Batches results download holds billed requests: they used to vanish into
    "other interactions"; now each download is an unrecognised-llm-call note with the count
    of billed results (errored and expired ones bill nothing)."""
    message = {"type": "message", "model": "claude-sonnet-4-5", "content": [],
               "usage": {"input_tokens": 1000, "output_tokens": 1000}}  # fmt: skip
    lines = [
        {"custom_id": "a", "result": {"type": "succeeded", "message": message}},
        {"custom_id": "b", "result": {"type": "succeeded", "message": message}},
        {"custom_id": "c", "result": {"type": "expired"}},
    ]
    uri = "https://api.anthropic.com/v1/messages/batches/msgbatch_1/results"
    trace = _download(tmp_path, uri, lines)
    (note,) = trace.notes
    assert note.note.kind is NoteKind.UNRECOGNISED_CALL
    assert note.note.message.startswith("Message Batches results with 2 billed result(s)")
    openai = [{"custom_id": "x", "response": {"status_code": 200, "body": {}}}]
    trace = _download(tmp_path, "https://api.openai.com/v1/files/file-1/content", openai)
    assert trace.notes[0].note.message.startswith("a Batch API output file with 1 billed")
    files = [{"custom_id": "x", "method": "POST", "url": "/v1/chat/completions"}]  # an input file
    assert _download(tmp_path, "https://api.openai.com/v1/files/file-2/content", files).notes == ()


def _background(tmp_path: Path, retrieved: bool, tier: str | None = None) -> CassetteTrace:
    queued = {"id": "resp_1", "object": "response", "status": "queued", "model": "o4-mini",
              "output": [], "usage": None}  # fmt: skip
    done = {
        **queued,
        "status": "completed",
        "model": "o4-mini-2025-04-16",
        "output": [{"type": "message", "role": "assistant",
                    "content": [{"type": "output_text", "text": "Hi"}]}],
        "usage": {"input_tokens": 2000, "input_tokens_details": {"cached_tokens": 1000},
                  "output_tokens": 1000, "total_tokens": 3000},
        **({"service_tier": tier} if tier else {}),
    }  # fmt: skip
    request = {"model": "o4-mini", "input": "Hello", "background": True}
    later = [(queued, 200), (done, 200)] if retrieved else [(queued, 200)]
    interactions = [
        {
            "request": {"method": "POST", "uri": "https://api.openai.com/v1/responses",
                        "body": json.dumps(request), "headers": {}},
            "response": {"status": {"code": 200, "message": "OK"}, "headers": {},
                         "body": {"string": json.dumps(queued)}},
        },
        *(
            {
                "request": {"method": "GET", "uri": "https://api.openai.com/v1/responses/resp_1",
                            "body": None, "headers": {}},
                "response": {"status": {"code": code, "message": "OK"}, "headers": {},
                             "body": {"string": json.dumps(body)}},
            }
            for body, code in later
        ),
    ]  # fmt: skip
    path = tmp_path / "background.yaml"
    path.write_text(yaml.safe_dump({"version": 1, "interactions": interactions}))
    return load_trace(path)


def test_a_background_response_is_billed_from_its_retrieval(tmp_path: Path) -> None:
    """background=true answers "queued" without usage (it used to be an error: an unknown
    shape); the retrieval that finds it done carries the usage: one call, billed once."""
    trace = _background(tmp_path, retrieved=True)
    (call,) = trace.calls
    assert call.usage == Usage(uncached_input=1000, cache_read=1000, output=1000)
    assert trace.other_interactions == 2 and call.notes == ()
    # o4-mini per million: $1.10 input, $0.275 cached, $4.40 output
    price = meter(call, as_of=datetime(2025, 6, 2, tzinfo=UTC)).price
    assert price is not None and price.amount == Decimal("0.005775")


def test_a_flex_background_response_is_billed_at_flex(tmp_path: Path) -> None:
    """Flex requests are often sent in background: the retrieval names the tier. o4-mini
    flex per million: $0.55 input, $0.138 cached, $2.20 output."""
    (call,) = _background(tmp_path, retrieved=True, tier="flex").calls
    assert call.service_tier == "flex" and call.usage is not None and call.usage.tier == "flex"
    price = meter(call, as_of=datetime(2025, 6, 2, tzinfo=UTC)).price
    assert price is not None and price.amount == Decimal("0.002888")


def test_a_background_response_whose_retrieval_cannot_be_read_says_so(tmp_path: Path) -> None:
    """A lenient read leaves the corrupt retrieval out; the call it completes was said never
    retrieved, though the recording retrieved it."""
    path = tmp_path / "background.yaml"
    _background(tmp_path, retrieved=True)  # writes the file
    document = yaml.safe_load(path.read_text())
    retrieval = document["interactions"][2]["response"]
    retrieval["headers"] = {"Content-Encoding": ["gzip"]}
    retrieval["body"] = {"string": "\x1f\x8bgarbage"}
    path.write_text(yaml.safe_dump(document))
    (call,) = load_trace(path, lenient=True).calls
    assert call.usage is None
    (note,) = call.notes
    assert note.message == (
        "a background response (queued when recorded) whose retrieval, interaction 2, "
        "cannot be read: estimated"
    )


def test_a_background_response_never_retrieved_is_estimated_and_said(tmp_path: Path) -> None:
    (call,) = _background(tmp_path, retrieved=False).calls
    assert call.usage is None
    (note,) = call.notes
    assert note.message.startswith("a background response (queued when recorded) the recording")


@pytest.mark.parametrize(
    ("model", "options", "cost"),
    [
        # genai-prices: gpt-4o-mini-search-preview bills as gpt-4o-mini ($0.15 / $0.60 per
        # million) and $10 per 1,000 web searches: 150 + 600 + 10,000 millionths
        ("gpt-4o-mini-search-preview", {"web_search_options": {}}, "0.01075"),
        ("gpt-4o-mini-search-preview", {}, "0.01075"),  # the model always searches
        ("gpt-4o-mini", {}, "0.00075"),  # no search, no fee
    ],
)
def test_a_chat_search_model_pays_its_search(
    tmp_path: Path, model: str, options: dict[str, Any], cost: str
) -> None:
    """A Chat Completions search model searches once per request, billed per search; its
    tokens alone used to be the whole cost."""
    response = {"model": model, "choices": [{"index": 0, "message": {"content": "x"}}],
                "usage": {"prompt_tokens": 1000, "completion_tokens": 1000}}  # fmt: skip
    request = {"model": model, "messages": [{"role": "user", "content": "x"}], **options}
    (call,) = _cassette(tmp_path, "https://api.openai.com/v1/chat/completions", request,
                        response).calls  # fmt: skip
    price = meter(call, as_of=datetime(2025, 11, 1, tzinfo=UTC)).price
    assert price is not None and price.amount == Decimal(cost)


def test_a_search_model_without_a_known_search_fee_says_so(tmp_path: Path) -> None:
    """genai-prices has no per-search price for gpt-4o-search-preview: the cost is its
    tokens, and an unpriced-fee note says the search is left out (as for other per-use fees
    with no price), rather than the search passing unsaid."""
    response = {"model": "gpt-4o-search-preview", "choices": [],
                "usage": {"prompt_tokens": 1000, "completion_tokens": 100}}  # fmt: skip
    request = {"model": "gpt-4o-search-preview", "messages": [], "web_search_options": {}}
    (call,) = _cassette(tmp_path, "https://api.openai.com/v1/chat/completions", request,
                        response).calls  # fmt: skip
    price = meter(call, as_of=datetime(2025, 11, 1, tzinfo=UTC)).price
    assert price is not None and price.amount == Decimal("0.0035")  # 1,000 x 2.50 + 100 x 10
    (note,) = call.notes
    assert note.kind is NoteKind.UNPRICED_FEE and "leaves it out" in note.message


def _chain_cassette(tmp_path: Path, first_previous: str | None = None) -> CassetteTrace:
    """Three Responses calls chained by previous_response_id: a question answered with a
    function call, its output, then a new question."""
    turns: list[tuple[dict[str, Any], dict[str, Any]]] = [
        (
            {"model": "gpt-5-mini", "input": "Where is order 4411?", "tools": []},
            {"id": "resp_1", "output": [{"type": "function_call", "call_id": "c1",
                                         "name": "lookup", "arguments": "{\"order\": 4411}"}]},
        ),
        (
            {"model": "gpt-5-mini", "previous_response_id": "resp_1",
             "input": [{"type": "function_call_output", "call_id": "c1", "output": "shipped"}]},
            {"id": "resp_2", "output": [{"type": "message", "role": "assistant",
                                         "content": [{"type": "output_text", "text": "Shipped."}]}]},
        ),
        (
            {"model": "gpt-5-mini", "previous_response_id": "resp_2", "input": "And 4412?"},
            {"id": "resp_3", "output": []},
        ),
    ]  # fmt: skip
    if first_previous is not None:
        turns[0][0]["previous_response_id"] = first_previous
    usage = {"input_tokens": 100, "output_tokens": 10}
    interactions = [
        interaction(
            "https://api.openai.com/v1/responses",
            request,
            {
                **response,
                "model": "gpt-5-mini-2025-08-07",
                "created_at": 1762250400,
                "usage": usage,
            },
        )
        for request, response in turns
    ]
    path = write_yaml(tmp_path / "chain.yaml", interactions)
    return load_trace(path)


def test_a_previous_response_id_chain_carries_the_stored_conversation(tmp_path: Path) -> None:
    """A request that continues a stored response sends only its new input; the server adds
    the conversation, and the recorded prompt counts it. Each request of the chain is given
    that history (a trial's truncation reached only the request that sent a result, and the
    cache re-simulation read 2,176 tokens where 8,448 were billed)."""
    first, second, third = _chain_cassette(tmp_path).calls
    assert [m.role for m in first.messages] == ["user"]
    assert [m.role for m in second.messages] == ["user", "assistant", "tool"]
    assert second.messages[:1] == first.messages
    assert isinstance(second.messages[1].content[0], ToolUseBlock)
    assert [m.role for m in third.messages] == ["user", "assistant", "tool", "assistant", "user"]
    assert third.messages[3].content == (TextBlock("Shipped."),)
    assert not any(call.notes for call in (first, second, third))
    # a chain begun before the recording: its history is billed, not seen, and said so
    (unseen, *_) = _chain_cassette(tmp_path, first_previous="resp_0").calls
    assert [note.kind for note in unseen.notes] == [NoteKind.UNSEEN_HISTORY]
