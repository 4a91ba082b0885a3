"""Small cassettes the project writes, one per shape costsim reads, to seed the fuzzer when the
real corpus is absent (and alongside it when present)."""

from __future__ import annotations

import base64
import gzip
import json
import struct
import zlib
from pathlib import Path
from typing import Any

import yaml

__all__ = ["write_seeds"]

DATE = "Tue, 04 Mar 2025 10:00:00 GMT"
_ANTHROPIC = "https://api.anthropic.com/v1/messages"
_CHAT = "https://api.openai.com/v1/chat/completions"
_RESPONSES = "https://api.openai.com/v1/responses"
_BEDROCK = (
    "https://bedrock-runtime.us-east-1.amazonaws.com/model/"
    "us.anthropic.claude-sonnet-4-20250514-v1%3A0/invoke-with-response-stream"
)


def _interaction(uri: str, request: Any, response: Any, **headers: str) -> dict[str, Any]:
    return {
        "request": {
            "body": json.dumps(request),
            "headers": {"Content-Type": ["application/json"]},
            "method": "POST",
            "uri": uri,
        },
        "response": {
            "body": {
                "string": response if isinstance(response, str | bytes) else json.dumps(response)
            },
            "headers": {"Date": [DATE], **{k.replace("_", "-"): [v] for k, v in headers.items()}},
            "status": {"code": 200, "message": "OK"},
        },
    }


def _messages(text: str) -> dict[str, Any]:
    return {
        "model": "claude-sonnet-4-20250514",
        "max_tokens": 256,
        "system": [{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}],
        "messages": [{"role": "user", "content": text}],
        "tools": [
            {"name": "lookup", "description": "Look up.", "input_schema": {"type": "object"}}
        ],
    }


def _anthropic_reply(n: int) -> dict[str, Any]:
    return {
        "type": "message",
        "model": "claude-sonnet-4-20250514",
        "content": [{"type": "text", "text": "Done."}],
        "usage": {
            "input_tokens": 20 + n,
            "cache_creation_input_tokens": 1200,
            "cache_read_input_tokens": 0 if n == 0 else 1200,
            "cache_creation": {"ephemeral_5m_input_tokens": 1200, "ephemeral_1h_input_tokens": 0},
            "output_tokens": 9 + n,
            "server_tool_use": {"web_search_requests": n % 2},
        },
    }


def _anthropic_events() -> list[dict[str, Any]]:
    return [
        {
            "type": "message_start",
            "message": {
                "model": "claude-sonnet-4-20250514",
                "usage": {"input_tokens": 310, "cache_read_input_tokens": 0,
                          "cache_creation_input_tokens": 0, "output_tokens": 1},
            },
        },
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0,
         "delta": {"type": "text_delta", "text": "Streaming answer text."}},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"},
         "usage": {"output_tokens": 42}},
        {"type": "message_stop"},
    ]  # fmt: skip


def _sse(events: list[dict[str, Any]]) -> str:
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)


def _frame(payload: bytes) -> bytes:
    headers = b""
    for name, value in ((":event-type", "chunk"), (":message-type", "event")):
        headers += bytes([len(name)]) + name.encode() + b"\x07"
        headers += struct.pack(">H", len(value)) + value.encode()
    prelude = struct.pack(">II", 16 + len(headers) + len(payload), len(headers))
    head = prelude + struct.pack(">I", zlib.crc32(prelude)) + headers + payload
    return head + struct.pack(">I", zlib.crc32(head))


def _chat_reply() -> dict[str, Any]:
    return {
        "object": "chat.completion",
        "model": "gpt-4o-mini-2024-07-18",
        "created": 1741082400,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hi!"},
                     "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 1500, "completion_tokens": 12, "total_tokens": 1512,
                  "prompt_tokens_details": {"cached_tokens": 1280},
                  "completion_tokens_details": {"reasoning_tokens": 0}},
    }  # fmt: skip


def _chat_stream() -> str:
    chunks = [
        {"object": "chat.completion.chunk", "model": "gpt-4o-mini",
         "choices": [{"index": 0, "delta": {"content": "Hel"}}]},
        {"object": "chat.completion.chunk", "model": "gpt-4o-mini",
         "choices": [{"index": 0, "delta": {"content": "lo"}, "finish_reason": "stop"}]},
        {"object": "chat.completion.chunk", "model": "gpt-4o-mini", "choices": [],
         "usage": {"prompt_tokens": 40, "completion_tokens": 2, "total_tokens": 42}},
    ]  # fmt: skip
    return "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"


def _responses_stream() -> str:
    final = {
        "object": "response", "model": "gpt-4.1", "output": [],
        "usage": {"input_tokens": 70, "output_tokens": 5, "total_tokens": 75,
                  "input_tokens_details": {"cached_tokens": 0},
                  "output_tokens_details": {"reasoning_tokens": 0}},
    }  # fmt: skip
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": {"model": "gpt-4.1"}},
        {"type": "response.output_text.delta", "delta": "Hi"},
        {"type": "response.completed", "response": final},
    ]
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)


def write_seeds(folder: Path) -> list[Path]:
    """Write the seed cassettes into ``folder``; returns their paths."""
    chat_request = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "Hi"}]}
    cassettes: dict[str, list[dict[str, Any]]] = {
        "anthropic.yaml": [
            _interaction(_ANTHROPIC, _messages(f"Question {n}"), _anthropic_reply(n))
            for n in range(3)
        ],
        "anthropic_stream.yaml": [
            _interaction(_ANTHROPIC, {**_messages("Stream"), "stream": True},
                         _sse(_anthropic_events()))
        ],
        "chat_gzip.yaml": [
            _interaction(_CHAT, chat_request, gzip.compress(json.dumps(_chat_reply()).encode(),
                                                            mtime=0), Content_Encoding="gzip")
        ],
        "chat_stream.yaml": [
            _interaction(_CHAT, {**chat_request, "stream": True,
                                 "stream_options": {"include_usage": True}}, _chat_stream())
        ],
        "responses_stream.yaml": [
            _interaction(_RESPONSES, {"model": "gpt-4.1", "input": "Hi", "stream": True},
                         _responses_stream())
        ],
        "bedrock_stream.yaml": [
            _interaction(
                _BEDROCK,
                {"anthropic_version": "bedrock-2023-05-31", "max_tokens": 64,
                 "messages": [{"role": "user", "content": "Hi"}]},
                b"".join(
                    _frame(json.dumps({"bytes": base64.b64encode(json.dumps(e).encode())
                                       .decode()}).encode())
                    for e in _anthropic_events()
                ),
            )
        ],
    }  # fmt: skip
    paths = []
    for name, interactions in cassettes.items():
        path = folder / name
        path.write_text(yaml.safe_dump({"interactions": interactions, "version": 1}))
        paths.append(path)
    json_path = folder / "chat.json"
    json_path.write_text(
        json.dumps({"interactions": [_interaction(_CHAT, chat_request, _chat_reply())]})
    )
    return [*paths, json_path]
