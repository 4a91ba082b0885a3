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
)
from costsim.providers._json import digest, items, obj, parse_arguments, text, timestamp
from costsim.providers._usage import UsageRead
from costsim.providers.base import ParsedRequest, ParsedResponse
from costsim.providers.openai_chat import (
    inline_document,
    inline_image,
    read_openai_usage,
    recorded_cost,
)

__all__ = ["OpenAIResponses"]

_TYPED_KEYS = frozenset(
    {"model", "input", "instructions", "tools", "tool_choice", "reasoning", "stream", "text"}
)  # "prompt" (a stored prompt reference) stays in ``extra`` as well: it names the template
_FINAL_EVENTS = ("response.completed", "response.incomplete", "response.failed")
_PATHS = ("/responses", "/responses/compact")


def _web_searches(output: list[Any]) -> int:
    """Web search tool calls in a response's output, each billed per call."""
    return sum(1 for item in output if obj(item).get("type") == "web_search_call")


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


_UNMODELLED_ITEMS = frozenset({"additional_tools"})
"""Items that carry a ``role`` but are not messages: tools added mid-conversation (tool
search), whose prompt the server writes."""


def _items_to_messages(raw_items: list[Any]) -> tuple[Message, ...]:
    """Input or output items as messages: role messages stay, other items become blocks."""
    messages: list[Message] = []
    for raw in raw_items:
        item = obj(raw)
        kind = text(item.get("type")) or "message"
        if kind in _UNMODELLED_ITEMS:
            messages.append(Message(role=text(item.get("role")), content=(OtherBlock(kind, raw),)))
            continue
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


def _stored_prompt(raw: Any) -> Message | None:
    """A stored prompt reference (``{"id", "version", "variables"}``) as the user turn its
    variables fill in; the template itself lives at OpenAI and is not in the recording."""
    prompt = obj(raw)
    if not prompt:
        return None
    blocks: list[Block] = []
    for value in obj(prompt.get("variables")).values():
        blocks.append(TextBlock(value) if isinstance(value, str) else _content_part(value))
    return Message(role="user", content=tuple(blocks))


def _extra(request: Mapping[str, Any]) -> dict[str, Any]:
    """Untyped parameters; ``text.verbosity`` (which changes the output) and
    ``reasoning.context`` / ``reasoning.mode`` (which change the prompt) among them."""
    extra = {k: v for k, v in request.items() if k not in _TYPED_KEYS}
    verbosity = obj(request.get("text")).get("verbosity")
    if verbosity is not None:
        extra["verbosity"] = verbosity
    reasoning = obj(request.get("reasoning"))
    for key in ("context", "mode"):
        if reasoning.get(key) is not None:
            extra[f"reasoning_{key}"] = reasoning[key]
    return extra


class OpenAIResponses:
    flavour = Flavour.OPENAI_RESPONSES

    def matches(self, method: str, url_path: str, request: Mapping[str, Any]) -> bool:
        # Any JSON body: a stored-prompt request carries only {"prompt": {"id", ...}}, and the
        # model and usage come from the response. ``/responses/compact`` is billed the same.
        return method == "POST" and url_path.rstrip("/").endswith(_PATHS)

    def parse_request(self, request: Mapping[str, Any]) -> ParsedRequest:
        instructions = request.get("instructions")
        raw_input = request.get("input")
        messages = (
            (Message(role="user", content=(TextBlock(raw_input),)),)
            if isinstance(raw_input, str)
            else _items_to_messages(items(raw_input))
        )
        stored = _stored_prompt(request.get("prompt"))
        if stored is not None:
            messages = (stored, *messages)
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
            extra=_extra(request),
        )

    def parse_response(self, response: Mapping[str, Any]) -> ParsedResponse:
        error = obj(response.get("error"))
        usage = response.get("usage")
        if error and not isinstance(usage, Mapping):
            return ParsedResponse(error=text(error.get("message")) or "error")
        output = items(response.get("output"))
        blocks = tuple(block for message in _items_to_messages(output) for block in message.content)
        read = (
            read_openai_usage(usage, responses=True, web_searches=_web_searches(output))
            if usage is not None
            else UsageRead(None)
        )
        cost, cost_problems = recorded_cost(usage)
        return ParsedResponse(
            model=text(response.get("model")) or None,
            blocks=blocks,
            usage=read.usage,
            error=text(error.get("message")) or None if error else None,
            created=timestamp(response.get("created_at")),
            usage_problems=(*read.problems, *cost_problems),
            recorded_cost=cost,
            response_id=text(response.get("id")) or None,
        )

    def parse_stream(self, events: list[SseEvent]) -> ParsedResponse:
        final: Mapping[str, Any] | None = None
        error: str | None = None
        started: Mapping[str, Any] | None = None
        deltas: list[str] = []
        for event in events:
            data = obj(event.data)
            kind = text(data.get("type")) or event.event
            if kind in _FINAL_EVENTS and isinstance(data.get("response"), Mapping):
                final = data["response"]
            elif kind == "response.created":
                started = obj(data.get("response"))
            elif kind == "response.output_text.delta":
                deltas.append(text(data.get("delta")))
            elif kind == "error":
                error = (
                    text(data.get("message"))
                    or text(obj(data.get("error")).get("message"))
                    or "error"
                )
        if final is None:
            # Cut before response.completed: keep what was streamed, flag it incomplete.
            return ParsedResponse(
                model=text(obj(started).get("model")) or None,
                blocks=(TextBlock("".join(deltas)),) if any(deltas) else (),
                error=error,
                incomplete=error is None and (started is not None or bool(deltas)),
            )
        parsed = self.parse_response(final)
        return parsed if error is None else dataclasses.replace(parsed, error=error)
