"""What a (mutated) cassette legitimately says it billed, read strictly and without costsim.

The fuzz check calls a total "silently wrong" when costsim reports, without any flag, a total
that differs from the unmutated file's *and* from this reading of the mutant. A mutation that
turns ``"input_tokens": 12`` into ``"input_tokens": 92`` makes a valid file that says 92: no
reader can know better, so matching this oracle is correct. Where this oracle finds the usage
unusable (not a count, negative, beyond any context window, inconsistent, a stream without its
final usage), it returns None: then any unflagged change of the total is silently wrong.

Built on tests/corpus_oracle.py (which does not import costsim).
"""

from __future__ import annotations

import math
import pathlib
from dataclasses import dataclass
from typing import Any

from tests import corpus_oracle as base

__all__ = ["Expected", "expected_totals"]

MAX = 20_000_000


class Invalid(Exception):
    """The mutant's usage (or its structure) cannot be read as a bill."""


@dataclass(frozen=True)
class Expected:
    calls: int
    calls_with_usage: int
    prompt_tokens: int
    output_tokens: int


def _count(usage: dict[str, Any], key: str, *, required: bool = False) -> int:
    if key not in usage:
        if required:
            raise Invalid(f"{key} missing")
        return 0
    value = usage[key]
    if isinstance(value, bool):
        raise Invalid(key)
    if isinstance(value, float):
        if not math.isfinite(value) or not value.is_integer():
            raise Invalid(key)
        value = int(value)
    if not isinstance(value, int) or not 0 <= value <= MAX:
        raise Invalid(key)
    return value


def _sub(usage: dict[str, Any], key: str) -> dict[str, Any]:
    value = usage.get(key)
    return value if isinstance(value, dict) else {}


def _anthropic(usage: Any) -> tuple[int, int]:
    if not isinstance(usage, dict):
        raise Invalid("usage")
    uncached = _count(usage, "input_tokens", required=True)
    output = _count(usage, "output_tokens", required=True)
    read = _count(usage, "cache_read_input_tokens")
    write = _count(usage, "cache_creation_input_tokens")
    split = usage.get("cache_creation")
    if isinstance(split, dict):
        parts = _count(split, "ephemeral_5m_input_tokens") + _count(
            split, "ephemeral_1h_input_tokens"
        )
        if "cache_creation_input_tokens" in usage and parts != write:
            raise Invalid("split")
        write = max(write, parts)
    thinking = _sub(usage, "output_tokens_details")
    if "thinking_tokens" in thinking and _count(thinking, "thinking_tokens") > output:
        raise Invalid("thinking")
    _count(_sub(usage, "server_tool_use"), "web_search_requests")
    return _total(uncached + read + write, output)


def _openai(
    usage: Any, prompt: str, output: str, details: str, out_details: str
) -> tuple[int, int]:
    if not isinstance(usage, dict):
        raise Invalid("usage")
    total = _count(usage, prompt, required=True)
    completion = _count(usage, output, required=True)
    cached = _sub(usage, details)
    if _count(cached, "cached_tokens") + _count(cached, "cache_write_tokens") > total:
        raise Invalid("cached")
    reasoning = _sub(usage, out_details)
    if "reasoning_tokens" in reasoning and _count(reasoning, "reasoning_tokens") > completion:
        raise Invalid("reasoning")
    if "total_tokens" in usage and _count(usage, "total_tokens") != total + completion:
        raise Invalid("total")
    return _total(total, completion)


def _converse(usage: Any) -> tuple[int, int]:
    if not isinstance(usage, dict):
        raise Invalid("usage")
    uncached = _count(usage, "inputTokens", required=True)
    output = _count(usage, "outputTokens", required=True)
    cached = _count(usage, "cacheReadInputTokens") + _count(usage, "cacheWriteInputTokens")
    if "totalTokens" in usage and _count(usage, "totalTokens") != uncached + output + cached:
        raise Invalid("total")
    return _total(uncached + cached, output)


def _total(prompt: int, output: int) -> tuple[int, int]:
    if prompt + output > MAX:
        raise Invalid("too many")
    return prompt, output


def _anthropic_body(body: Any) -> tuple[int, int] | None:
    if isinstance(body, dict):
        return _anthropic(body["usage"]) if "usage" in body else None
    if not isinstance(body, str):
        return None
    usage: dict[str, Any] | None = None
    final = False
    for event in base._sse_events(body):
        if event.get("type") == "message_start":
            start = (event.get("message") or {}).get("usage")
            usage = dict(start) if isinstance(start, dict) else usage
        elif event.get("type") == "message_delta" and "usage" in event:
            delta = event["usage"]
            if not isinstance(delta, dict):
                raise Invalid("delta")
            usage = {**(usage or {}), **{k: v for k, v in delta.items() if v is not None}}
            final = True
    if usage is None:
        return None
    if not final:
        raise Invalid("cut stream")
    return _anthropic(usage)


def _chat_body(body: Any) -> tuple[int, int] | None:
    usage: Any = None
    if isinstance(body, dict):
        usage = body.get("usage")
    elif isinstance(body, str):
        for event in base._sse_events(body):
            if event.get("usage") is not None:
                usage = event["usage"]
    if usage is None:
        return None
    return _openai(
        usage, "prompt_tokens", "completion_tokens", "prompt_tokens_details",
        "completion_tokens_details",
    )  # fmt: skip


def _responses_body(body: Any) -> tuple[int, int] | None:
    usage: Any = None
    if isinstance(body, dict):
        usage = body.get("usage")
    elif isinstance(body, str):
        events = base._sse_events(body)
        done = [e for e in events if e.get("type") in base._FINAL_RESPONSE_EVENTS]
        if events and not done:
            raise Invalid("cut stream")
        for event in done:
            if isinstance(event.get("response"), dict):
                usage = event["response"].get("usage")
    if usage is None:
        return None
    return _openai(
        usage, "input_tokens", "output_tokens", "input_tokens_details", "output_tokens_details"
    )


def _converse_body(body: Any) -> tuple[int, int] | None:
    if isinstance(body, dict) and "usage" in body:
        return _converse(body["usage"])
    return None


_READERS = {
    "anthropic": _anthropic_body,
    "chat": _chat_body,
    "responses": _responses_body,
    "converse": _converse_body,
}


def expected_totals(path: pathlib.Path) -> Expected | None:
    """The bill a mutant states, or None when it states none that can be trusted."""
    try:
        interactions = base.load_cassette(path)
        calls = with_usage = prompt = output = 0
        for interaction in interactions:
            request = interaction.get("request") or {}
            kind = base._kind(request) or base._extra_kind(request)
            if kind is None:
                continue
            calls += 1
            response = interaction.get("response") or {}
            status = (response.get("status") or {}).get("code", 200)
            usage = _READERS[kind](base._body(response))
            if usage is None:
                if status == 200 and kind != "chat":
                    return None  # a successful call without usage: costsim must estimate it
                continue
            with_usage += 1
            prompt += usage[0]
            output += usage[1]
        return Expected(calls, with_usage, prompt, output)
    except Exception:  # the oracle cannot read the mutant at all: no statement to match
        return None
