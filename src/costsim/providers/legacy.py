"""The legacy completion APIs: a prompt string in, a completion string out.

- Anthropic Text Completions (``POST /v1/complete``): ``{"model", "prompt": "\\n\\nHuman: ...
  \\n\\nAssistant:", "max_tokens_to_sample"}``; the response (or each ``completion`` event of a
  stream) carries ``completion`` text and **no usage**, so these calls are always estimated.
- OpenAI Completions (``POST /v1/completions``): ``{"model", "prompt"}``; the response has
  ``choices[].text`` and a chat-shaped ``usage``.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from typing import Any

from costsim.io.bodies import SseEvent
from costsim.model import Flavour, Message, TextBlock
from costsim.providers._json import items, obj, text, timestamp
from costsim.providers.base import ParsedRequest, ParsedResponse
from costsim.providers.openai_chat import usage_response

__all__ = ["AnthropicTextCompletions", "OpenAICompletions"]

_TURN = re.compile(r"\n\n(Human|Assistant):")


def _turns(prompt: str) -> tuple[Message, ...]:
    """``\\n\\nHuman: ... \\n\\nAssistant: ...`` as messages (the final empty turn dropped)."""
    parts = _TURN.split(prompt)
    messages: list[Message] = []
    if parts[0].strip():
        messages.append(Message(role="user", content=(TextBlock(parts[0]),)))
    for role, body in zip(parts[1::2], parts[2::2], strict=False):
        if body.strip():
            name = "user" if role == "Human" else "assistant"
            messages.append(Message(role=name, content=(TextBlock(body.strip()),)))
    return tuple(messages)


def _extra(request: Mapping[str, Any], typed: frozenset[str]) -> dict[str, Any]:
    return {key: value for key, value in request.items() if key not in typed}


class AnthropicTextCompletions:
    flavour = Flavour.ANTHROPIC_TEXT
    _typed = frozenset({"model", "prompt", "stream"})

    def matches(self, method: str, url_path: str, request: Mapping[str, Any]) -> bool:
        return (
            method == "POST"
            and url_path.rstrip("/").endswith("/v1/complete")
            and isinstance(request.get("prompt"), str)
        )

    def parse_request(self, request: Mapping[str, Any]) -> ParsedRequest:
        return ParsedRequest(
            model=text(request.get("model")),
            messages=_turns(text(request.get("prompt"))),
            stream=request.get("stream") is True,
            extra=_extra(request, self._typed),
        )

    def parse_response(self, response: Mapping[str, Any]) -> ParsedResponse:
        if response.get("type") == "error" or "error" in response:
            error = obj(response.get("error"))
            return ParsedResponse(error=text(error.get("message")) or "error")
        completion = text(response.get("completion"))
        return ParsedResponse(
            model=text(response.get("model")) or None,
            blocks=(TextBlock(completion),) if completion else (),
        )

    def parse_stream(self, events: list[SseEvent]) -> ParsedResponse:
        pieces: list[str] = []
        model: str | None = None
        error: str | None = None
        finished = False
        for event in events:
            data = obj(event.data)
            kind = text(data.get("type")) or event.event
            if kind == "completion":
                pieces.append(text(data.get("completion")))
                model = text(data.get("model")) or model
                finished = finished or data.get("stop_reason") is not None
            elif kind == "error":
                error = text(obj(data.get("error")).get("message")) or "error"
        return ParsedResponse(
            model=model,
            blocks=(TextBlock("".join(pieces)),) if any(pieces) else (),
            error=error,
            incomplete=bool(pieces) and not finished and error is None,
        )


class OpenAICompletions:
    flavour = Flavour.OPENAI_COMPLETIONS
    _typed = frozenset({"model", "prompt", "stream"})

    def matches(self, method: str, url_path: str, request: Mapping[str, Any]) -> bool:
        return (
            method == "POST"
            and url_path.rstrip("/").endswith("/completions")
            and not url_path.rstrip("/").endswith("/chat/completions")
            and "prompt" in request
        )

    def parse_request(self, request: Mapping[str, Any]) -> ParsedRequest:
        prompt = request.get("prompt")
        prompts = [prompt] if isinstance(prompt, str) else [p for p in items(prompt) if p]
        return ParsedRequest(
            model=text(request.get("model")),
            messages=tuple(
                Message(role="user", content=(TextBlock(p if isinstance(p, str) else str(p)),))
                for p in prompts
            ),
            stream=request.get("stream") is True,
            extra=_extra(request, self._typed),
        )

    def parse_response(self, response: Mapping[str, Any]) -> ParsedResponse:
        if "error" in response and "choices" not in response:
            error = obj(response.get("error"))
            return ParsedResponse(error=text(error.get("message")) or "error")
        choices = items(response.get("choices"))
        completion = text(obj(choices[0]).get("text")) if choices else ""
        return usage_response(
            response.get("usage"),
            model=text(response.get("model")) or None,
            blocks=(TextBlock(completion),) if completion else (),
            created=timestamp(response.get("created")),
        )

    def parse_stream(self, events: list[SseEvent]) -> ParsedResponse:
        pieces: list[str] = []
        usage: Any = None
        model: str | None = None
        done = False
        for event in events:
            if event.data == "[DONE]":
                done = True
                continue
            data = obj(event.data)
            model = text(data.get("model")) or model
            usage = data.get("usage") if data.get("usage") is not None else usage
            for choice in items(data.get("choices")):
                pieces.append(text(obj(choice).get("text")))
                done = done or bool(obj(choice).get("finish_reason"))
        parsed = usage_response(
            usage, model=model, blocks=(TextBlock("".join(pieces)),) if any(pieces) else ()
        )
        return dataclasses.replace(parsed, incomplete=not done and usage is None)
