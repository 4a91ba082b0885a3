"""What real recorders and clients write, and every failure issue 14 quoted, on small cassettes
this project writes: each is read (and metered from what was billed) or refused in one sentence.
"""

from __future__ import annotations

import base64
import json
import struct
import zlib
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import yaml

from costsim.analysis.report import build_report, load_traces
from costsim.io.limits import MAX_TOKENS
from costsim.model import CacheControl, Flavour, Platform
from costsim.providers.normalise import load_trace
from tests.test_hostile_input import (
    ANTHROPIC_REQUEST,
    ANTHROPIC_RESPONSE,
    OPENAI_URI,
    assert_one_line_error,
    chat_stream,
    interaction,
    run_cli,
    write_yaml,
)

RESPONSES_URI = "https://api.openai.com/v1/responses"
BEDROCK = "https://bedrock-runtime.us-east-1.amazonaws.com/model/"
BEDROCK_MODEL = "us.anthropic.claude-sonnet-4-20250514-v1%3A0"
VERTEX = (
    "https://us-east5-aiplatform.googleapis.com/v1/projects/p/locations/us-east5/"
    "publishers/anthropic/models/claude-sonnet-4@20250514"
)


def _report(*paths: Path) -> dict[str, Any]:
    result = run_cli("report", "--format", "json", *paths)
    assert result.exit_code == 0, result.output
    document: dict[str, Any] = json.loads(result.stdout)
    return document


def _notes(document: dict[str, Any]) -> list[str]:
    return [note["kind"] for note in document["notes"]]


# --- header names written through multidict's __reduce__ --------------------------------------


def test_istr_header_names_in_apply_form_are_read(tmp_path: Path) -> None:
    text = yaml.safe_dump({"interactions": [interaction()], "version": 1}).replace(
        "      Content-Type:\n",
        "      ? !!python/object/apply:multidict._multidict.istr\n"
        "        - Content-Type\n"
        "      :\n",
        1,
    )
    assert "object/apply:multidict" in text
    path = tmp_path / "istr.yaml"
    path.write_text(text)

    trace = load_trace(path)

    assert [call.usage.output for call in trace.calls if call.usage] == [7]


# --- OpenAI Responses stored prompts ----------------------------------------------------------


def _responses_reply(input_tokens: int, output_tokens: int) -> dict[str, Any]:
    return {
        "id": "resp_1",
        "object": "response",
        "created_at": 1741082400,
        "model": "gpt-4.1-2025-04-14",
        "output": [
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "Summary."}],
            }
        ],
        "usage": {
            "input_tokens": input_tokens,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": output_tokens,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": input_tokens + output_tokens,
        },
    }


def test_stored_prompt_requests_are_metered_from_recorded_usage(tmp_path: Path) -> None:
    stored = {"prompt": {"id": "pmpt_123", "version": "4", "variables": {"city": "Lyon"}}}
    with_file = {
        "prompt": {
            "id": "pmpt_456",
            "variables": {
                "report": {"type": "input_file", "file_id": "file-abc", "filename": "q3.pdf"}
            },
        }
    }
    path = write_yaml(
        tmp_path / "stored.yaml",
        [
            interaction(RESPONSES_URI, stored, _responses_reply(30_000, 4_000)),
            interaction(RESPONSES_URI, with_file, _responses_reply(30_530, 4_158)),
        ],
    )

    document = _report(path)

    totals = document["totals"]
    assert totals["llm_calls"] == 2
    assert totals["calls_with_usage"] == 2
    assert totals["prompt_tokens"] == 60_530
    assert totals["output_tokens"] == 8_158
    assert totals["cost_usd"] is not None and Decimal(totals["cost_usd"]) > 0
    call = load_trace(path).calls[1]
    assert call.priced_model == "gpt-4.1-2025-04-14"
    assert [block.kind for m in call.messages for block in m.content] == ["document"]


# --- Claude through Amazon Bedrock and Google Vertex AI ---------------------------------------


def _platform_request() -> dict[str, Any]:
    request = {k: v for k, v in ANTHROPIC_REQUEST.items() if k != "model"}
    return {**request, "anthropic_version": "bedrock-2023-05-31"}


def _frame(payload: bytes, event_type: str = "chunk") -> bytes:
    headers = b""
    for name, value in ((":event-type", event_type), (":message-type", "event")):
        headers += bytes([len(name)]) + name.encode() + b"\x07"
        headers += struct.pack(">H", len(value)) + value.encode()
    total = 16 + len(headers) + len(payload)
    prelude = struct.pack(">II", total, len(headers))
    head = prelude + struct.pack(">I", zlib.crc32(prelude)) + headers + payload
    return head + struct.pack(">I", zlib.crc32(head))


def _anthropic_events(input_tokens: int, output_tokens: int) -> list[dict[str, Any]]:
    return [
        {
            "type": "message_start",
            "message": {
                "model": "claude-sonnet-4-20250514",
                "usage": {"input_tokens": input_tokens, "output_tokens": 1},
            },
        },
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text"}},
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "text_delta", "text": "Hello there, how can I help today?"},
        },
        {"type": "message_delta", "usage": {"output_tokens": output_tokens}},
        {"type": "message_stop"},
    ]


def _eventstream(events: list[dict[str, Any]]) -> bytes:
    return b"".join(
        _frame(json.dumps({"bytes": base64.b64encode(json.dumps(e).encode()).decode()}).encode())
        for e in events
    )


def _sse(events: list[dict[str, Any]]) -> str:
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)


def test_claude_on_bedrock_invoke_and_stream(tmp_path: Path) -> None:
    path = write_yaml(
        tmp_path / "bedrock.yaml",
        [
            interaction(f"{BEDROCK}{BEDROCK_MODEL}/invoke", _platform_request()),
            interaction(
                f"{BEDROCK}{BEDROCK_MODEL}/invoke-with-response-stream",
                _platform_request(),
                _eventstream(_anthropic_events(120, 40)),
                response_headers={"Content-Type": ["application/vnd.amazon.eventstream"]},
            ),
        ],
    )

    trace = load_trace(path)
    document = _report(path)

    assert [c.platform for c in trace.calls] == [Platform.BEDROCK, Platform.BEDROCK]
    assert trace.calls[0].model == "us.anthropic.claude-sonnet-4-20250514-v1:0"
    assert trace.calls[1].stream
    assert trace.calls[1].usage is not None and trace.calls[1].usage.output == 40
    assert document["totals"]["prompt_tokens"] == 14 + 120
    assert document["totals"]["unpriced_calls"] == 0
    assert document["notes"] == []


def test_claude_on_vertex_raw_predict_and_stream(tmp_path: Path) -> None:
    request = {**_platform_request(), "anthropic_version": "vertex-2023-10-16"}
    path = write_yaml(
        tmp_path / "vertex.yaml",
        [
            interaction(f"{VERTEX}:rawPredict", request),
            interaction(f"{VERTEX}:streamRawPredict", request, _sse(_anthropic_events(200, 50))),
        ],
    )

    trace = load_trace(path)
    document = _report(path)

    assert [c.platform for c in trace.calls] == [Platform.VERTEX, Platform.VERTEX]
    assert document["totals"]["prompt_tokens"] == 14 + 200
    assert document["totals"]["output_tokens"] == 7 + 50
    assert document["totals"]["unpriced_calls"] == 0


def test_bedrock_converse(tmp_path: Path) -> None:
    request = {"messages": [{"role": "user", "content": [{"text": "Hi"}]}]}
    reply = {
        "output": {"message": {"role": "assistant", "content": [{"text": "Hello!"}]}},
        "stopReason": "end_turn",
        "usage": {"inputTokens": 9, "outputTokens": 3, "totalTokens": 12},
    }
    path = write_yaml(
        tmp_path / "converse.yaml",
        [interaction(f"{BEDROCK}{BEDROCK_MODEL}/converse", request, reply)],
    )

    (call,) = load_trace(path).calls

    assert call.flavour is Flavour.BEDROCK_CONVERSE
    assert call.usage is not None and (call.usage.prompt_total, call.usage.output) == (9, 3)


def test_a_converse_cache_point_is_the_breakpoint_of_the_block_before_it(tmp_path: Path) -> None:
    """Bedrock's Converse marks caching with a ``cachePoint`` entry after what it caches, in
    the system list, a message's content or the tools: the block before it carries the
    breakpoint, and the entry is not content. A trial's cached system prompt was billed as
    uncached in every what-if (the point was read as a block of text)."""
    system = [{"text": "You are the planner. " * 400}, {"cachePoint": {"type": "default"}}]
    tools = [
        {"toolSpec": {"name": "plan", "inputSchema": {"json": {"type": "object"}}}},
        {"cachePoint": {"type": "default"}},
    ]
    request = {
        "system": system,
        "toolConfig": {"tools": tools},
        "messages": [{"role": "user", "content": [{"text": "Plan it."}]}],
    }
    reply = {
        "output": {"message": {"role": "assistant", "content": [{"text": "Done."}]}},
        "stopReason": "end_turn",
        "usage": {"inputTokens": 9, "outputTokens": 3, "cacheWriteInputTokens": 2371,
                  "totalTokens": 2383},
    }  # fmt: skip
    path = write_yaml(
        tmp_path / "converse.yaml",
        [interaction(f"{BEDROCK}{BEDROCK_MODEL}/converse", request, reply)],
    )
    (call,) = load_trace(path).calls
    assert len(call.system) == 1 and call.system[0].cache_control == CacheControl("5m")
    assert len(call.tools) == 1 and call.tools[0].cache_control == CacheControl("5m")
    assert call.usage is not None and call.usage.cache_write_5m == 2371


# --- the legacy Text Completions API ----------------------------------------------------------


def test_legacy_complete_calls_are_estimated_and_said_so(tmp_path: Path) -> None:
    request = {
        "model": "claude-2.1",
        "prompt": "\n\nHuman: Write a haiku about rain.\n\nAssistant:",
        "max_tokens_to_sample": 100,
    }
    reply = {
        "type": "completion",
        "completion": " Soft rain on the roof\nwhispers to the sleeping town\nmorning smells of earth",
        "stop_reason": "stop_sequence",
        "model": "claude-2.1",
    }
    stream = "".join(
        f"event: completion\ndata: {json.dumps(e)}\n\n"
        for e in (
            {"type": "completion", "completion": " Rain", "stop_reason": None},
            {"type": "completion", "completion": " falls.", "stop_reason": "stop_sequence"},
        )
    )
    uri = "https://api.anthropic.com/v1/complete"
    path = write_yaml(
        tmp_path / "complete.yaml",
        [
            interaction(uri, request, reply),
            interaction(uri, {**request, "stream": True}, stream),
            interaction(uri, request, reply),
        ],
    )

    document = _report(path)

    assert document["totals"]["llm_calls"] == 3
    assert document["totals"]["estimated_calls"] == 3
    assert document["totals"]["prompt_tokens"] > 0
    assert _notes(document) == ["no-usage"] * 3


# --- usage blocks on requests costsim does not model ------------------------------------------


def test_unfamiliar_request_with_a_usage_block_is_metered_and_flagged(tmp_path: Path) -> None:
    path = write_yaml(
        tmp_path / "odd.yaml",
        [interaction(request={"model": "claude-3-5-haiku-20241022", "contents": "hi"})],
    )

    document = _report(path)

    assert document["totals"]["calls_with_usage"] == 1
    assert document["totals"]["prompt_tokens"] == 14
    assert _notes(document) == ["usage-only"]


def test_unrecognised_llm_call_is_a_visible_note(tmp_path: Path) -> None:
    gemini = "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.0-flash"
    reply = {
        "candidates": [{"content": {"parts": [{"text": "hi"}]}}],
        "usageMetadata": {"promptTokenCount": 5, "candidatesTokenCount": 2},
    }
    path = write_yaml(
        tmp_path / "gemini.yaml",
        [interaction(f"{gemini}:generateContent", {"contents": []}, reply), interaction()],
    )

    document = _report(path)
    table = run_cli("report", path)

    assert document["notes"][0]["kind"] == "unrecognised-llm-call"
    assert document["notes"][0]["interaction"] == 0
    assert "unrecognised-llm-call" in table.stdout


@pytest.mark.parametrize(
    ("model", "request_body", "reply"),
    [
        ("amazon.titan-embed-text-v2%3A0", {"inputText": "hi"},
         {"embedding": [0.1], "inputTextTokenCount": 3}),
        ("amazon.titan-embed-text-v1", {"inputText": "hi"},
         {"embedding": [0.1], "inputTextTokenCount": 3}),
        ("amazon.titan-embed-image-v1", {"inputText": "hi"},
         {"embedding": [0.1], "inputTextTokenCount": 3}),
        ("cohere.embed-english-v3", {"texts": ["hi"], "input_type": "search_query"},
         {"embeddings": [[0.1]], "id": "e1", "response_type": "embeddings_floats"}),
        ("us.cohere.embed-v4%3A0", {"texts": ["hi"], "input_type": "search_query"},
         {"embeddings": {"float": [[0.1]]}, "id": "e1", "response_type": "embeddings_by_type"}),
        ("amazon.nova-2-multimodal-embeddings-v1%3A0",
         {"taskType": "SINGLE_EMBEDDING", "singleEmbeddingParams": {"text": {"value": "hi"}}},
         {"embeddings": [{"embeddingType": "TEXT", "embedding": [0.1]}]}),
    ],
)  # fmt: skip
def test_an_embeddings_model_on_bedrock_is_other_traffic(
    tmp_path: Path, model: str, request_body: dict[str, Any], reply: dict[str, Any]
) -> None:
    """Bedrock's InvokeModel (``/model/{id}/invoke``) serves embeddings models too (AWS's
    model cards give Titan Text Embeddings, Cohere Embed and Nova Multimodal Embeddings an
    "Embedding" output): such a call was warned about as an unrecognised LLM call, while an
    OpenAI or Azure ``/embeddings`` call is counted as other traffic. Now both are."""
    path = write_yaml(
        tmp_path / "embed.yaml", [interaction(), interaction(BEDROCK + model + "/invoke",
                                                             request_body, reply)]
    )  # fmt: skip

    document = _report(path)
    check = run_cli("cassettes", "check", path)

    assert document["notes"] == []
    assert document["totals"]["llm_calls"] == 1
    assert load_trace(path).other_interactions == 1
    assert "unrecognised-llm-call" not in check.output and check.exit_code == 0, check.output


def test_a_text_model_on_bedrock_that_costsim_cannot_read_is_still_noted(tmp_path: Path) -> None:
    """Only embeddings models are other traffic: Titan Text (an LLM with a body costsim does
    not read) is still an LLM-looking call, noted."""
    reply = {"inputTextTokenCount": 3, "results": [{"tokenCount": 5, "outputText": "hello"}]}
    path = write_yaml(
        tmp_path / "titan.yaml",
        [interaction(BEDROCK + "amazon.titan-text-express-v1/invoke", {"inputText": "hi"}, reply)],
    )

    assert _notes(_report(path)) == ["unrecognised-llm-call"]


def test_a_request_without_uri_or_method_is_refused_clearly(tmp_path: Path) -> None:
    for key in ("uri", "method"):
        bad = interaction()
        del bad["request"][key]
        path = write_yaml(tmp_path / f"no-{key}.yaml", [interaction(), bad])

        line = assert_one_line_error(run_cli("report", path), path, 1)

        assert key.replace("uri", "URI") in line


# --- fees and gateway costs -------------------------------------------------------------------


def test_web_search_requests_are_priced(tmp_path: Path) -> None:
    usage = {**ANTHROPIC_RESPONSE["usage"], "server_tool_use": {"web_search_requests": 3}}
    path = write_yaml(
        tmp_path / "search.yaml",
        [interaction(response={**ANTHROPIC_RESPONSE, "usage": usage}), interaction()],
    )

    document = _report(path)
    with_search, plain = (Decimal(c["cost_usd"]) for c in _cassettes_by_call(path))

    assert document["totals"]["web_searches"] == 3
    assert with_search - plain == Decimal("0.03")  # $10 per 1,000 searches


def _cassettes_by_call(path: Path) -> list[dict[str, Any]]:
    costs = []
    for index, item in enumerate(yaml.safe_load(path.read_text())["interactions"]):
        single = write_yaml(path.with_name(f"one-{index}.yaml"), [item])
        costs.append(_report(single)["totals"])
    return costs


def test_gateway_recorded_cost_is_used_when_the_model_has_no_price(tmp_path: Path) -> None:
    request = {"model": "acme/unknown-model-7b", "messages": [{"role": "user", "content": "hi"}]}
    reply = {
        "object": "chat.completion",
        "model": "acme/unknown-model-7b",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "hello"}}],
        "usage": {
            "prompt_tokens": 10,
            "completion_tokens": 3,
            "total_tokens": 13,
            "cost": 0.000123,
        },
    }
    gateway = "https://gateway.example.net/api/v1/chat/completions"
    path = write_yaml(tmp_path / "gateway.yaml", [interaction(gateway, request, reply)])

    document = _report(path)
    table = run_cli("report", path)

    assert document["totals"]["cost_usd"] == "0.000123"
    assert document["totals"]["gateway_priced_calls"] == 1
    assert document["totals"]["unpriced_calls"] == 0
    assert "priced from the cost the gateway recorded" in table.stdout


# --- usage that cannot be true ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        pytest.param("NaN", "nan", id="nan"),
        pytest.param("Infinity", "inf", id="infinity"),
        pytest.param('"7"', "'7'", id="string"),
        pytest.param("[7]", "a list", id="list"),
        pytest.param('{"n": 7}', "an object", id="object"),
        pytest.param("null", "null", id="null"),
        pytest.param("-40", "negative", id="negative"),
        pytest.param("7.5", "whole number", id="fraction"),
        pytest.param("1e300", "context window", id="1e300"),
        pytest.param(str(MAX_TOKENS + 1), "context window", id="absurd"),
        pytest.param("true", "boolean", id="bool"),
    ],
)
def test_invalid_usage_is_flagged_and_estimated(tmp_path: Path, value: str, problem: str) -> None:
    body = json.dumps(ANTHROPIC_RESPONSE).replace('"output_tokens": 7', f'"output_tokens": {value}')
    path = write_yaml(tmp_path / "bad.yaml", [interaction(), interaction(response=body)])

    document = _report(path)

    (note,) = document["notes"]
    assert note["kind"] == "invalid-usage"
    assert note["interaction"] == 1
    assert "output_tokens" in note["message"] and problem in note["message"]
    assert document["totals"]["estimated_calls"] == 1
    assert document["totals"]["calls_with_usage"] == 1
    assert document["totals"]["output_tokens"] >= 7 + 1  # the estimate is never 0


def test_a_deleted_usage_key_is_flagged(tmp_path: Path) -> None:
    usage = {k: v for k, v in ANTHROPIC_RESPONSE["usage"].items() if k != "input_tokens"}
    path = write_yaml(
        tmp_path / "del.yaml", [interaction(response={**ANTHROPIC_RESPONSE, "usage": usage})]
    )

    document = _report(path)

    assert "input_tokens is missing" in document["notes"][0]["message"]
    assert document["totals"]["estimated_calls"] == 1


def test_cached_above_total_is_inconsistent(tmp_path: Path) -> None:
    reply = {
        "object": "chat.completion",
        "model": "gpt-4o-mini",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"}}],
        "usage": {
            "prompt_tokens": 100,
            "completion_tokens": 5,
            "total_tokens": 105,
            "prompt_tokens_details": {"cached_tokens": 140},
        },
    }
    request = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "Say hello."}]}
    path = write_yaml(tmp_path / "cached.yaml", [interaction(OPENAI_URI, request, reply)])

    document = _report(path)

    assert "cached tokens (140) exceed prompt_tokens (100)" in document["notes"][0]["message"]
    assert document["totals"]["uncached_input_tokens"] >= 0
    assert document["totals"]["cache_hit_rate"] is None or document["totals"]["cache_hit_rate"] <= 1


def test_a_stream_cut_before_its_usage_is_estimated_not_one_token(tmp_path: Path) -> None:
    events = _anthropic_events(900, 40)[:3]  # message_start and some text, no message_delta
    path = write_yaml(tmp_path / "cut.yaml", [interaction(response=_sse(events))])

    document = _report(path)

    assert _notes(document) == ["incomplete-stream"]
    assert document["totals"]["estimated_calls"] == 1
    assert document["totals"]["prompt_tokens"] == 900  # message_start's input is kept
    assert document["totals"]["output_tokens"] > 1  # not the placeholder


def test_a_stream_cut_inside_an_event_is_a_cut_stream_not_an_error(tmp_path: Path) -> None:
    """The recording ends in the middle of an event's JSON: that event never arrived (the SSE
    standard drops an event without its closing blank line), so this is the same cut stream
    as above, not an unreadable cassette."""
    events = _anthropic_events(900, 40)[:3]
    body = _sse(events) + 'event: content_block_delta\ndata: {"type": "content_block_delta", "de'

    document = _report(write_yaml(tmp_path / "cut.yaml", [interaction(response=body)]))

    assert _notes(document) == ["incomplete-stream"]
    assert document["totals"]["prompt_tokens"] == 900


def test_broken_json_inside_a_stream_is_still_an_error(tmp_path: Path) -> None:
    """Only the last event may be cut: broken data with a blank line after it is an error."""
    events = _anthropic_events(900, 40)
    body = _sse(events[:2]) + 'event: x\ndata: {"type": "co\n\n' + _sse(events[2:])
    path = write_yaml(tmp_path / "broken.yaml", [interaction(response=body)])

    assert "not valid JSON" in assert_one_line_error(run_cli("report", path), path, 0)


# --- inputs that crashed costsim ---------------------------------------------------------------


def test_a_4301_digit_integer_is_a_one_line_error(tmp_path: Path) -> None:
    text = yaml.safe_dump({"interactions": [interaction()], "version": 1})
    path = tmp_path / "digits.yaml"
    path.write_text(text.replace("version: 1", "version: " + "9" * 4301))

    assert_one_line_error(run_cli("report", path), path, None)


def test_a_4301_digit_integer_in_a_json_body_is_a_one_line_error(tmp_path: Path) -> None:
    body = json.dumps(ANTHROPIC_RESPONSE).replace(
        '"output_tokens": 7', '"output_tokens": ' + "9" * 4301
    )
    path = write_yaml(tmp_path / "digits.yaml", [interaction(response=body)])

    line = assert_one_line_error(run_cli("report", path), path, 0)

    assert "JSON" in line
    assert "an integer of 4,301 digits" in line and "set_int_max_str_digits" not in line


@pytest.mark.parametrize("depth", [1_000, 100_000])
def test_a_deep_json_body_is_a_one_line_error(tmp_path: Path, depth: int) -> None:
    deep = "[" * depth + "]" * depth
    body = json.dumps(ANTHROPIC_RESPONSE).replace('"Hello!"', deep)
    path = write_yaml(tmp_path / "deep.yaml", [interaction(response=body)])

    line = assert_one_line_error(run_cli("report", path), path, 0)

    assert "nested" in line


@pytest.mark.parametrize("depth", [500, 50_000])
def test_deep_yaml_is_a_one_line_error(tmp_path: Path, depth: int) -> None:
    text = yaml.safe_dump({"interactions": [interaction()], "version": 1})
    path = tmp_path / "deep.yaml"
    path.write_text(text.replace("version: 1", "version: " + "[" * depth + "]" * depth))

    line = assert_one_line_error(run_cli("report", path), path, None)

    assert "nested" in line


def test_simulate_on_huge_counts_is_not_an_overflow(tmp_path: Path) -> None:
    body = json.dumps(ANTHROPIC_RESPONSE).replace(
        '"input_tokens": 11', '"input_tokens": ' + "9" * 400
    )
    path = write_yaml(tmp_path / "huge.yaml", [interaction(), interaction(response=body)])

    result = run_cli("simulate", "-s", "caching", "--format", "json", path)

    assert result.exit_code == 0, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_lenient_report_over_a_folder_of_bad_files_always_writes_json(tmp_path: Path) -> None:
    folder = tmp_path / "mixed"
    folder.mkdir()
    write_yaml(folder / "good.yaml", [interaction()])
    (folder / "digits.yaml").write_text("interactions: " + "9" * 5000 + "\n")
    (folder / "deep.yaml").write_text("interactions: " + "[" * 60_000 + "]" * 60_000 + "\n")
    (folder / "deep.json").write_text('{"interactions": ' + "[" * 5000 + "]" * 5000 + "}")
    (folder / "binary.yaml").write_bytes(b"\xff\xfe\x00garbage")
    body = json.dumps(ANTHROPIC_RESPONSE).replace('"output_tokens": 7', '"output_tokens": NaN')
    write_yaml(folder / "nan.yaml", [interaction(response=body)])

    result = run_cli("report", "--lenient", "--format", "json", folder)

    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert len(document["skipped"]) == 4
    assert {Path(c["path"]).name for c in document["cassettes"]} == {"good.yaml", "nan.yaml"}
    assert all(item["error"] for item in document["skipped"])
    assert "Traceback" not in result.stderr


def test_report_library_keeps_going_in_lenient_mode(tmp_path: Path) -> None:
    write_yaml(tmp_path / "a.yaml", [interaction()])
    (tmp_path / "b.yaml").write_text("interactions: [" * 3000)

    traces, skipped = load_traces([tmp_path], lenient=True)
    report = build_report(traces, skipped=skipped)

    assert [s.path.name for s in report.skipped] == ["b.yaml"]
    assert report.totals.llm_calls == 1


def test_a_server_tool_fee_without_a_price_is_noted(tmp_path: Path) -> None:
    usage = {
        **ANTHROPIC_RESPONSE["usage"],
        "server_tool_use": {"web_fetch_requests": 2, "future_tool_requests": 3},
    }
    path = write_yaml(
        tmp_path / "fees.yaml", [interaction(response={**ANTHROPIC_RESPONSE, "usage": usage})]
    )

    document = _report(path)

    (note,) = document["notes"]
    assert note["kind"] == "unpriced-fee"
    assert "3 future tool requests" in note["message"]
    assert "web fetch" not in note["message"]  # web fetch has no per-use fee
    assert document["totals"]["calls_with_usage"] == 1


def test_max_tokens_is_above_every_known_context_window() -> None:
    from genai_prices import data_snapshot

    windows = [
        int(model.context_window)
        for provider in data_snapshot.get_snapshot().providers
        for model in provider.models
        if getattr(model, "context_window", None)
    ]
    assert max(windows) < MAX_TOKENS


def test_report_json_with_notes_matches_the_schema(tmp_path: Path) -> None:
    import jsonschema

    from tests.test_cli_report import _schema

    body = json.dumps(ANTHROPIC_RESPONSE).replace('"output_tokens": 7', '"output_tokens": NaN')
    usage = {**ANTHROPIC_RESPONSE["usage"], "server_tool_use": {"web_search_requests": 1}}
    path = write_yaml(
        tmp_path / "notes.yaml",
        [interaction(response=body), interaction(response={**ANTHROPIC_RESPONSE, "usage": usage})],
    )

    document = _report(path)

    jsonschema.validate(document, _schema())
    assert document["notes"] and document["totals"]["web_searches"] == 1


def test_bedrock_converse_stream(tmp_path: Path) -> None:
    events = [
        ("messageStart", {"role": "assistant"}),
        ("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "Hello!"}}),
        ("messageStop", {"stopReason": "end_turn"}),
        ("metadata", {"usage": {"inputTokens": 9, "outputTokens": 3, "totalTokens": 12}}),
    ]
    body = b"".join(_frame(json.dumps(data).encode(), name) for name, data in events)
    request = {"messages": [{"role": "user", "content": [{"text": "Hi"}]}]}
    path = write_yaml(
        tmp_path / "converse-stream.yaml",
        [interaction(f"{BEDROCK}{BEDROCK_MODEL}/converse-stream", request, body)],
    )

    (call,) = load_trace(path).calls

    assert call.stream
    assert call.usage is not None and (call.usage.prompt_total, call.usage.output) == (9, 3)
    assert call.response[0].kind == "text"


def test_openai_web_search_calls_are_counted_and_priced(tmp_path: Path) -> None:
    reply = _responses_reply(500, 40)
    reply["output"] = [
        {"type": "web_search_call", "id": "ws_1", "status": "completed"},
        {"type": "web_search_call", "id": "ws_2", "status": "completed"},
        *reply["output"],
    ]
    request = {"model": "gpt-4.1", "input": "News?", "tools": [{"type": "web_search"}]}
    path = write_yaml(tmp_path / "ws.yaml", [interaction(RESPONSES_URI, request, reply)])

    document = _report(path)

    assert document["totals"]["web_searches"] == 2
    assert document["totals"]["cost_usd"] is not None


def test_a_cut_streams_output_is_banded_up_to_what_the_request_allowed(tmp_path: Path) -> None:
    """What arrived of a cut stream is a lower bound of its output: its band reaches up as a
    hidden output's does, and no further than ``max_tokens`` (a trial's stream cut after 6
    tokens was billed 60, outside the band of an estimate counted as complete)."""
    from costsim.analysis.bands import call_terms
    from costsim.engine import Engine
    from costsim.metering.meter import Meter

    events = _anthropic_events(900, 40)[:3]
    trace = load_trace(write_yaml(tmp_path / "cut.yaml", [interaction(response=_sse(events))]))
    (item,) = Engine([trace]).recorded(trace).calls
    assert item.usage is not None and item.usage.output < 64
    meter = Meter()
    output = call_terms(item, meter)[("output", id(item.sim.origin))]
    per_token = Decimal("15") / 1_000_000  # claude-sonnet-4 output
    assert output.above == (64 - item.usage.output) * per_token  # max_tokens 64
    # below, only the count's error of what arrived (not down to nothing)
    count = item.usage.output * meter.expected_error(item.call).p90 / 100
    assert output.below == Decimal(str(round(count, 3))) * per_token < item.usage.output * per_token


def test_a_cut_stream_keeps_the_cache_counts_it_recorded(tmp_path: Path) -> None:
    """message_start carries the input counts, cache reads among them: a cut stream keeps
    them (a review saw them replaced by the cache simulation's guess, 11 times the bill)."""
    events = _anthropic_events(900, 40)[:3]
    events[0]["message"]["usage"].update(cache_read_input_tokens=2600)
    request = {**ANTHROPIC_REQUEST, "system": [{"type": "text", "text": "Be brief. " * 400,
               "cache_control": {"type": "ephemeral"}}]}  # fmt: skip
    path = write_yaml(tmp_path / "cut.yaml", [interaction(request=request, response=_sse(events))])
    document = _report(path)
    assert document["totals"]["cache_read_tokens"] == 2600
    assert document["totals"]["prompt_tokens"] == 3500


def test_a_chat_stream_recorded_without_its_usage_chunk_says_how_to_record_it(
    tmp_path: Path,
) -> None:
    """A trial: the openai SDK streams Chat Completions without usage unless
    ``stream_options={"include_usage": True}``; the call was estimated and flagged, but
    nothing said why or how to record the bill. A stream that has its usage chunk is exact."""
    usage = {"prompt_tokens": 8, "completion_tokens": 2}
    path = write_yaml(
        tmp_path / "chat.yaml", [chat_stream("Hello"), chat_stream("Hello", usage=usage)]
    )
    document = _report(path)
    assert document["totals"]["estimated_calls"] == 1
    (note,) = document["notes"]
    assert note["kind"] == "no-usage"
    assert 'stream_options={"include_usage": True}' in note["message"]
    result = run_cli("cassettes", "check", path)
    assert "interaction 0: [warning] no-usage:" in result.stdout
    assert "interaction 1" not in result.stdout


def test_a_saving_on_a_cut_stream_is_banded_alike_in_the_total_and_its_cassette(
    tmp_path: Path,
) -> None:
    """A trial: routing a stream cut before its usage was final gave the total a band
    reaching 13 times the recorded cost (right: the real output may be far larger) while its
    only cassette's band stopped at the recorded cost. Both reach past it now, and the answer
    says the recorded cost is only a lower bound."""
    events = _anthropic_events(900, 40)[:3]
    request = {**ANTHROPIC_REQUEST, "max_tokens": 8000}
    write_yaml(tmp_path / "cut.yaml", [interaction(request=request, response=_sse(events))])
    args = ["simulate", str(tmp_path), "-s", "routing:models.claude-sonnet-4=claude-haiku-4-5"]
    result = run_cli(*args, "--format", "json", "--no-cache")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    (cassette,) = document["cassettes"]
    assert cassette["delta"]["cost_usd_low"] == document["delta"]["cost_usd_low"]
    assert -Decimal(document["delta"]["cost_usd_low"]) > Decimal(document["baseline"]["cost_usd"])
    text = " ".join(run_cli(*args, "--no-cache").stdout.split())
    assert "of at least $" in text and "(an output the recording holds only in part)" in text


def test_a_cut_stream_leaves_the_other_cassettes_savings_floored(tmp_path: Path) -> None:
    """The review: a cut stream in one cassette took the floor off every cassette's saving
    band (a whole cassette billed $0.01 showed a saving of up to $0.04 beside it)."""
    events = _anthropic_events(900, 40)[:3]
    request = {**ANTHROPIC_REQUEST, "max_tokens": 8000}
    write_yaml(tmp_path / "cut.yaml", [interaction(request=request, response=_sse(events))])
    write_yaml(tmp_path / "whole.yaml", [interaction()])
    args = ["simulate", str(tmp_path), "-s", "routing:models.claude-sonnet-4=claude-haiku-4-5"]
    result = run_cli(*args, "--format", "json", "--no-cache")
    assert result.exit_code == 0, result.output
    rows = {Path(row["path"]).name: row for row in json.loads(result.stdout)["cassettes"]}
    whole = rows["whole.yaml"]
    assert -Decimal(whole["delta"]["cost_usd_low"]) <= Decimal(whole["baseline"]["cost_usd"])
    cut = rows["cut.yaml"]
    assert -Decimal(cut["delta"]["cost_usd_low"]) > Decimal(cut["baseline"]["cost_usd"])


def test_html_names_left_out_interactions_by_what_they_are(tmp_path: Path) -> None:
    """The HTML findings called every left-out interaction ``unrecognised-llm-call``, also
    a call a lenient read could not read; the count covers both, so its kind says
    ``left-out``, and the sentence what it means."""
    gemini = "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.0-flash"
    reply = {
        "candidates": [{"content": {"parts": [{"text": "hi"}]}}],
        "usageMetadata": {"promptTokenCount": 5, "candidatesTokenCount": 2},
    }
    (tmp_path / "c").mkdir()
    write_yaml(
        tmp_path / "c" / "gemini.yaml",
        [interaction(f"{gemini}:generateContent", {"contents": []}, reply), interaction()],
    )
    scenario = tmp_path / "s.yaml"
    scenario.write_text("name: s\ncassettes: [c/*.yaml]\nvariants:\n  t: [truncation]\n")
    page = run_cli("compare", scenario, "--format", "html")
    assert page.exit_code == 0, page.output
    assert "left-out" in page.stdout and "unrecognised-llm-call" not in page.stdout
    assert "1 LLM-looking interaction costsim cannot meter" in page.stdout
