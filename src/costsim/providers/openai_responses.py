"""OpenAI Responses API (``POST /v1/responses``), JSON and streaming."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

from costsim.io.bodies import SseEvent
from costsim.model import (
    Block,
    Flavour,
    ImageBlock,
    Message,
    OtherBlock,
    ReasoningBlock,
    TextBlock,
    ThinkingConfig,
    ToolDef,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
)
from costsim.providers._json import digest, items, obj, parse_arguments, text, timestamp
from costsim.providers.base import ParsedRequest, ParsedResponse
from costsim.providers.openai_chat import inline_document, inline_image, openai_usage

__all__ = ["OpenAIResponses"]

_TYPED_KEYS = frozenset(
    {"model", "input", "instructions", "tools", "tool_choice", "reasoning", "stream", "text"}
)
_FINAL_EVENTS = ("response.completed", "response.incomplete", "response.failed")


def _usage(raw: Mapping[str, Any]) -> Usage:
    return openai_usage(
        raw,
        prompt="input_tokens",
        output="output_tokens",
        prompt_details="input_tokens_details",
        output_details="output_tokens_details",
    )


def _content_part(raw: Any) -> Block:
    if isinstance(raw, str):
        return TextBlock(raw)
    part = obj(raw)
    kind = text(part.get("type"))
    if kind in ("input_text", "output_text", "text", "summary_text"):
        return TextBlock(text(part.get("text")))
    if kind == "refusal":
        return TextBlock(text(part.get("refusal")))
    if kind == "input_image":
        url = text(part.get("image_url"))
        detail = text(part.get("detail"))
        if url.startswith("data:"):
            return inline_image(url, detail)
        return ImageBlock("url", url or "file:" + text(part.get("file_id")), detail=detail)
    if kind == "input_file":
        data = part.get("file_data")
        source = (
            digest(data)
            if data
            else text(part.get("file_url")) or "file:" + text(part.get("file_id"))
        )
        return inline_document(text(part.get("filename")) or "file", source, text(data))
    return OtherBlock(kind or "unknown", raw)


def _parts(content: Any) -> tuple[Block, ...]:
    if isinstance(content, str):
        return (TextBlock(content),)
    return tuple(_content_part(part) for part in items(content))


def _function_call(item: Mapping[str, Any]) -> Block:
    return ToolUseBlock(
        id=text(item.get("call_id")) or text(item.get("id")),
        name=text(item.get("name")),
        input=parse_arguments(item.get("arguments")),
    )


def _function_output(item: Mapping[str, Any]) -> Block:
    return ToolResultBlock(
        tool_use_id=text(item.get("call_id")), content=_parts(item.get("output"))
    )


def _reasoning(item: Mapping[str, Any]) -> Block:
    summary = "\n".join(text(obj(part).get("text")) for part in items(item.get("summary")))
    return ReasoningBlock(summary=summary, encrypted=text(item.get("encrypted_content")))


_ITEM_BLOCKS: dict[str, Callable[[Mapping[str, Any]], Block]] = {
    "function_call": _function_call,
    "custom_tool_call": _function_call,
    "function_call_output": _function_output,
    "custom_tool_call_output": _function_output,
    "reasoning": _reasoning,
}


def _items_to_messages(raw_items: list[Any]) -> tuple[Message, ...]:
    """Input or output items as messages: role messages stay, other items become blocks."""
    messages: list[Message] = []
    for raw in raw_items:
        item = obj(raw)
        kind = text(item.get("type")) or "message"
        if kind == "message" or ("role" in item and kind not in _ITEM_BLOCKS):
            messages.append(
                Message(role=text(item.get("role")), content=_parts(item.get("content")))
            )
            continue
        parser = _ITEM_BLOCKS.get(kind)
        block = parser(item) if parser else OtherBlock(kind, raw)
        role = "tool" if isinstance(block, ToolResultBlock) else "assistant"
        messages.append(Message(role=role, content=(block,)))
    return tuple(messages)


def _tool(raw: Any) -> ToolDef:
    tool = obj(raw)
    return ToolDef(
        name=text(tool.get("name")) or text(tool.get("type")),
        description=text(tool.get("description")),
        input_schema=tool.get("parameters"),
        type=text(tool.get("type")) or "function",
    )


def _thinking(raw: Any) -> ThinkingConfig | None:
    reasoning = obj(raw)
    if not reasoning:
        return None
    effort = reasoning.get("effort")
    summary = reasoning.get("summary", reasoning.get("generate_summary"))
    return ThinkingConfig(
        enabled=effort != "none",
        effort=effort if isinstance(effort, str) else None,
        summary=summary if isinstance(summary, str) else None,
    )


class OpenAIResponses:
    flavour = Flavour.OPENAI_RESPONSES

    def matches(self, method: str, url_path: str, request: Mapping[str, Any]) -> bool:
        return (
            method == "POST"
            and url_path.rstrip("/").endswith("/responses")
            and ("input" in request or "model" in request)
        )

    def parse_request(self, request: Mapping[str, Any]) -> ParsedRequest:
        instructions = request.get("instructions")
        raw_input = request.get("input")
        messages = (
            (Message(role="user", content=(TextBlock(raw_input),)),)
            if isinstance(raw_input, str)
            else _items_to_messages(items(raw_input))
        )
        fmt = obj(obj(request.get("text")).get("format"))
        return ParsedRequest(
            model=text(request.get("model")),
            system=(TextBlock(instructions),)
            if isinstance(instructions, str) and instructions
            else (),
            messages=messages,
            tools=tuple(_tool(raw) for raw in items(request.get("tools"))),
            tool_choice=request.get("tool_choice"),
            thinking=_thinking(request.get("reasoning")),
            output_schema=fmt if fmt.get("type") == "json_schema" else None,
            stream=request.get("stream") is True,
            extra={k: v for k, v in request.items() if k not in _TYPED_KEYS},
        )

    def parse_response(self, response: Mapping[str, Any]) -> ParsedResponse:
        error = obj(response.get("error"))
        usage = response.get("usage")
        if error and not isinstance(usage, Mapping):
            return ParsedResponse(error=text(error.get("message")) or "error")
        blocks = tuple(
            block
            for message in _items_to_messages(items(response.get("output")))
            for block in message.content
        )
        return ParsedResponse(
            model=text(response.get("model")) or None,
            blocks=blocks,
            usage=_usage(usage) if isinstance(usage, Mapping) else None,
            error=text(error.get("message")) or None if error else None,
            created=timestamp(response.get("created_at")),
        )

    def parse_stream(self, events: list[SseEvent]) -> ParsedResponse:
        final: Mapping[str, Any] | None = None
        error: str | None = None
        for event in events:
            data = obj(event.data)
            kind = text(data.get("type")) or event.event
            if kind in _FINAL_EVENTS and isinstance(data.get("response"), Mapping):
                final = data["response"]
            elif kind == "error":
                error = (
                    text(data.get("message"))
                    or text(obj(data.get("error")).get("message"))
                    or "error"
                )
        if final is None:
            return ParsedResponse(error=error)
        parsed = self.parse_response(final)
        return parsed if error is None else dataclasses.replace(parsed, error=error)
