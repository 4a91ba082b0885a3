"""Anthropic Messages API (``POST /v1/messages``), JSON and streaming."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from costsim.io.bodies import SseEvent, json_kind, try_json
from costsim.model import (
    Block,
    DocumentBlock,
    Flavour,
    ImageBlock,
    Message,
    OtherBlock,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ThinkingConfig,
    ToolDef,
    ToolResultBlock,
    ToolUseBlock,
)
from costsim.providers._json import cache_control, digest, integer, items, obj, text
from costsim.providers._media import PdfFacts, decode_base64, image_dimensions, pdf_facts
from costsim.providers._usage import UsageRead, anthropic_usage
from costsim.providers.base import ParsedRequest, ParsedResponse
from costsim.providers.routes import route_of

__all__ = ["AnthropicMessages", "content_blocks", "parse_block", "read_usage"]

_TYPED_KEYS = frozenset(
    {
        "model", "system", "messages", "tools", "tool_choice", "thinking", "stream",
        "cache_control", "output_format", "output_config",
    }
)  # fmt: skip


def _source(raw: Mapping[str, Any]) -> tuple[str, str, int]:
    """(media type, identity, inline bytes) of an image or document ``source``."""
    source = obj(raw.get("source"))
    kind = text(source.get("type"))
    media_type = text(source.get("media_type")) or kind
    if kind == "url":
        return media_type, text(source.get("url")), 0
    if kind == "file":
        return media_type, "file:" + text(source.get("file_id")), 0
    data = source.get("data") if "data" in source else source.get("content")
    size = len(data) if isinstance(data, str) else 0
    return media_type, digest(data), size


def _text(raw: Mapping[str, Any]) -> Block:
    return TextBlock(
        text=text(raw.get("text")), cache_control=cache_control(raw.get("cache_control"))
    )


def _inline(raw: Mapping[str, Any]) -> bytes:
    source = obj(raw.get("source"))
    data = source.get("data")
    return decode_base64(data) if source.get("type") == "base64" and isinstance(data, str) else b""


def _image(raw: Mapping[str, Any]) -> Block:
    media_type, source, size = _source(raw)
    width, height = image_dimensions(_inline(raw))
    return ImageBlock(
        media_type, source, size, cache_control(raw.get("cache_control")), width, height
    )


def _document(raw: Mapping[str, Any]) -> Block:
    media_type, source, size = _source(raw)
    data = obj(raw.get("source")).get("data")
    plain = data if media_type == "text/plain" and isinstance(data, str) else ""
    pdf = pdf_facts(_inline(raw)) if media_type == "application/pdf" else PdfFacts()
    return DocumentBlock(
        media_type,
        source,
        plain or pdf.text,
        size,
        cache_control(raw.get("cache_control")),
        pdf.pages,
        pdf.page_points,
    )


def _tool_use(raw: Mapping[str, Any]) -> Block:
    return ToolUseBlock(
        id=text(raw.get("id")),
        name=text(raw.get("name")),
        input=raw.get("input"),
        cache_control=cache_control(raw.get("cache_control")),
    )


def _tool_result(raw: Mapping[str, Any]) -> Block:
    content = raw.get("content")
    blocks = content_blocks(content)
    return ToolResultBlock(
        tool_use_id=text(raw.get("tool_use_id")),
        content=blocks,
        is_error=bool(raw.get("is_error")),
        cache_control=cache_control(raw.get("cache_control")),
    )


def _thinking(raw: Mapping[str, Any]) -> Block:
    return ThinkingBlock(
        text=text(raw.get("thinking")),
        signature=text(raw.get("signature")),
        cache_control=cache_control(raw.get("cache_control")),
    )


def _redacted(raw: Mapping[str, Any]) -> Block:
    return RedactedThinkingBlock(
        data=text(raw.get("data")), cache_control=cache_control(raw.get("cache_control"))
    )


_BLOCKS: dict[str, Callable[[Mapping[str, Any]], Block]] = {
    "text": _text,
    "image": _image,
    "document": _document,
    "tool_use": _tool_use,
    "tool_result": _tool_result,
    "thinking": _thinking,
    "redacted_thinking": _redacted,
}


def parse_block(raw: Any) -> Block:
    """One content block; unknown types are kept whole as :class:`OtherBlock`."""
    if isinstance(raw, str):
        return TextBlock(raw)
    block = obj(raw)
    kind = text(block.get("type"))
    parser = _BLOCKS.get(kind)
    if parser is None:
        return OtherBlock(kind or "unknown", raw, cache_control(block.get("cache_control")))
    return parser(block)


def content_blocks(content: Any) -> tuple[Block, ...]:
    if content is None:
        return ()
    if isinstance(content, str):
        return (TextBlock(content),)
    return tuple(parse_block(raw) for raw in items(content))


def _tool(raw: Any) -> ToolDef:
    tool = obj(raw)
    return ToolDef(
        name=text(tool.get("name")),
        description=text(tool.get("description")),
        input_schema=tool.get("input_schema"),
        type=text(tool.get("type")) or "custom",
        cache_control=cache_control(tool.get("cache_control")),
    )


def _thinking_config(raw: Any) -> ThinkingConfig | None:
    if not isinstance(raw, Mapping):
        return None
    kind = raw.get("type")
    budget = raw.get("budget_tokens")
    return ThinkingConfig(
        enabled=kind in ("enabled", "adaptive"),
        budget_tokens=budget if isinstance(budget, int) else None,
        effort=text(kind) if kind == "adaptive" else None,
    )


def read_usage(raw: Any) -> UsageRead:
    """The usage object of a response, strictly (see :mod:`costsim.providers._usage`)."""
    if not isinstance(raw, Mapping):
        return UsageRead(None, (f"usage is a JSON {json_kind(raw)}, not an object",))
    return anthropic_usage(raw)


def _error_message(raw: Mapping[str, Any]) -> str:
    error = obj(raw.get("error"))
    return text(error.get("message")) or text(error.get("type")) or "error"


class AnthropicMessages:
    flavour = Flavour.ANTHROPIC_MESSAGES

    def matches(self, method: str, url_path: str, request: Mapping[str, Any]) -> bool:
        if method != "POST" or not isinstance(request.get("messages"), list):
            return False
        route = route_of(url_path)
        if route.platform is not None:  # Bedrock invoke, Vertex rawPredict: the Messages body
            return route.action in ("invoke", "rawPredict")
        return url_path.rstrip("/").endswith("/messages")

    def parse_request(self, request: Mapping[str, Any]) -> ParsedRequest:
        output = obj(request.get("output_format")) or obj(
            obj(request.get("output_config")).get("format")
        )
        return ParsedRequest(
            model=text(request.get("model")),
            system=content_blocks(request.get("system")),
            messages=tuple(
                Message(
                    role=text(obj(m).get("role")), content=content_blocks(obj(m).get("content"))
                )
                for m in items(request.get("messages"))
            ),
            tools=tuple(_tool(raw) for raw in items(request.get("tools"))),
            tool_choice=request.get("tool_choice"),
            thinking=_thinking_config(request.get("thinking")),
            output_schema=output.get("schema") if output else None,
            cache_control=cache_control(request.get("cache_control")),
            stream=request.get("stream") is True,
            extra={k: v for k, v in request.items() if k not in _TYPED_KEYS},
        )

    def parse_response(self, response: Mapping[str, Any]) -> ParsedResponse:
        if response.get("type") == "error" or ("error" in response and "usage" not in response):
            return ParsedResponse(error=_error_message(response))
        read = read_usage(response["usage"]) if "usage" in response else UsageRead(None)
        return ParsedResponse(
            model=text(response.get("model")) or None,
            blocks=content_blocks(response.get("content")),
            usage=read.usage,
            usage_problems=read.problems,
            unpriced_fees=read.unpriced_fees,
            unsplit_writes=read.unsplit_writes,
        )

    def parse_stream(self, events: list[SseEvent]) -> ParsedResponse:
        stream = _StreamState()
        for event in events:
            data = obj(event.data)
            handler = _STREAM_HANDLERS.get(text(data.get("type")) or event.event)
            if handler is not None:
                handler(stream, data)
        return stream.result()


class _StreamState:
    """Folds a Messages event stream back into a response."""

    def __init__(self) -> None:
        self.model: str | None = None
        self.usage: dict[str, Any] | None = None
        self.blocks: dict[int, dict[str, Any]] = {}
        self.partial_json: dict[int, list[str]] = {}
        self.error: str | None = None
        self.started = False
        self.problems: list[str] = []
        self.final_usage = False
        """Whether a ``message_delta`` carried the final (cumulative) usage."""

    def result(self) -> ParsedResponse:
        blocks = []
        for index in sorted(self.blocks):
            block = self.blocks[index]
            if index in self.partial_json:
                joined = "".join(self.partial_json[index])
                decoded = try_json(joined) if joined.strip() else {}
                block["input"] = joined if decoded is None else decoded
            blocks.append(parse_block(block))
        read = read_usage(self.usage) if self.usage is not None else UsageRead(None)
        return ParsedResponse(
            model=self.model,
            blocks=tuple(blocks),
            usage=read.usage,
            error=self.error,
            usage_problems=(*self.problems, *read.problems),
            unpriced_fees=read.unpriced_fees,
            unsplit_writes=read.unsplit_writes,
            incomplete=self.started and not self.final_usage,  # cut, or cut by an error
        )


def _on_message_start(state: _StreamState, data: Mapping[str, Any]) -> None:
    message = obj(data.get("message"))
    state.started = True
    state.model = text(message.get("model")) or state.model
    if isinstance(message.get("usage"), Mapping):
        state.usage = dict(message["usage"])
    elif "usage" in message:
        state.problems.append(f"message_start usage is {type(message['usage']).__name__}")


def _on_block_start(state: _StreamState, data: Mapping[str, Any]) -> None:
    state.blocks[integer(data.get("index"))] = dict(obj(data.get("content_block")))


def _on_block_delta(state: _StreamState, data: Mapping[str, Any]) -> None:
    index = integer(data.get("index"))
    block = state.blocks.setdefault(index, {"type": "text", "text": ""})
    delta = obj(data.get("delta"))
    kind = delta.get("type")
    if kind == "text_delta":
        block["text"] = text(block.get("text")) + text(delta.get("text"))
    elif kind == "thinking_delta":
        block["thinking"] = text(block.get("thinking")) + text(delta.get("thinking"))
    elif kind == "signature_delta":
        block["signature"] = text(block.get("signature")) + text(delta.get("signature"))
    elif kind == "input_json_delta":
        state.partial_json.setdefault(index, []).append(text(delta.get("partial_json")))


def _on_message_delta(state: _StreamState, data: Mapping[str, Any]) -> None:
    usage = data.get("usage")
    if isinstance(usage, Mapping):
        # Counts in message_delta are cumulative: the latest value of every field wins.
        merged = dict(state.usage or {})
        merged.update({key: value for key, value in usage.items() if value is not None})
        state.usage = merged
        state.final_usage = True
    elif "usage" in data:
        state.problems.append(f"message_delta usage is {type(usage).__name__}")
        state.final_usage = True


def _on_error(state: _StreamState, data: Mapping[str, Any]) -> None:
    state.error = _error_message(data)


_STREAM_HANDLERS: dict[str, Callable[[_StreamState, Mapping[str, Any]], None]] = {
    "message_start": _on_message_start,
    "content_block_start": _on_block_start,
    "content_block_delta": _on_block_delta,
    "message_delta": _on_message_delta,
    "error": _on_error,
}
