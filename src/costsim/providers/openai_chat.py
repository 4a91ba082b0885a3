"""OpenAI Chat Completions (``POST /v1/chat/completions``) and compatible APIs."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from datetime import datetime
from decimal import Decimal
from typing import Any

from costsim.io.bodies import SseEvent, json_kind
from costsim.model import (
    Block,
    Call,
    DocumentBlock,
    Flavour,
    ImageBlock,
    Message,
    Note,
    NoteKind,
    OtherBlock,
    ReasoningBlock,
    TextBlock,
    ThinkingConfig,
    ToolDef,
    ToolResultBlock,
    ToolUseBlock,
)
from costsim.pricing.prices import search_fee_known
from costsim.providers._json import digest, integer, items, obj, parse_arguments, text, timestamp
from costsim.providers._media import PdfFacts, decode_base64, image_dimensions, pdf_facts
from costsim.providers._usage import UsageRead, gateway_cost, openai_usage
from costsim.providers.base import ParsedRequest, ParsedResponse

__all__ = [
    "OpenAIChat",
    "inline_document",
    "inline_image",
    "read_openai_usage",
    "recorded_cost",
    "usage_response",
]

_TYPED_KEYS = frozenset(
    {"model", "messages", "tools", "functions", "tool_choice", "function_call", "stream",
     "reasoning_effort", "response_format"}
)  # fmt: skip


def read_openai_usage(raw: Any, *, responses: bool = False, web_searches: int = 0) -> UsageRead:
    """A Chat (or, with ``responses``, a Responses) usage object, strictly, with any cost a
    gateway recorded in it."""
    if not isinstance(raw, Mapping):
        return UsageRead(None, (f"usage is a JSON {json_kind(raw)}, not an object",))
    names = _RESPONSES_NAMES if responses else _CHAT_NAMES
    return openai_usage(raw, **names, web_searches=web_searches)


def inline_image(url: str, detail: str) -> ImageBlock:
    """An image sent as a ``data:`` URL, with its pixel size read from the header."""
    width, height = image_dimensions(decode_base64(url))
    media = url[5 : url.find(";")]
    return ImageBlock(media, digest(url), len(url), width=width, height=height, detail=detail)


def inline_document(filename: str, source: str, data: str) -> DocumentBlock:
    """A file input; an inline PDF carries its pages and extracted text."""
    pdf = pdf_facts(decode_base64(data)) if data else PdfFacts()
    media = "application/pdf" if pdf.pages else filename
    return DocumentBlock(
        media, source, pdf.text, len(data), pages=pdf.pages, page_points=pdf.page_points
    )


_CHAT_NAMES = {
    "prompt": "prompt_tokens",
    "output": "completion_tokens",
    "prompt_details": "prompt_tokens_details",
    "output_details": "completion_tokens_details",
}
_RESPONSES_NAMES = {
    "prompt": "input_tokens",
    "output": "output_tokens",
    "prompt_details": "input_tokens_details",
    "output_details": "output_tokens_details",
}


def recorded_cost(raw: Any) -> tuple[Decimal | None, tuple[str, ...]]:
    """A gateway's recorded cost in a usage object, and any problem with it."""
    if not isinstance(raw, Mapping):
        return None, ()
    cost, problem = gateway_cost(raw)
    return cost, (problem,) if problem else ()


def usage_response(raw: Any, **fields: Any) -> ParsedResponse:
    """A ParsedResponse carrying a chat-shaped usage object (or its problems) and cost."""
    read = read_openai_usage(raw) if raw is not None else UsageRead(None)
    cost, cost_problems = recorded_cost(raw)
    return ParsedResponse(
        usage=read.usage,
        usage_problems=(*read.problems, *cost_problems),
        recorded_cost=cost,
        **fields,
    )


def _part(raw: Any) -> Block:
    if isinstance(raw, str):
        return TextBlock(raw)
    part = obj(raw)
    kind = text(part.get("type"))
    if kind in ("text", "input_text", "output_text", "refusal"):
        return TextBlock(text(part.get("text")) or text(part.get("refusal")))
    if kind == "image_url":
        url = text(obj(part.get("image_url")).get("url")) or text(part.get("image_url"))
        detail = text(obj(part.get("image_url")).get("detail"))
        if url.startswith("data:"):
            return inline_image(url, detail)
        return ImageBlock("url", url, detail=detail)
    if kind == "file":
        file = obj(part.get("file"))
        data = file.get("file_data")
        source = digest(data) if data else "file:" + text(file.get("file_id"))
        return inline_document(text(file.get("filename")) or "file", source, text(data))
    return OtherBlock(kind or "unknown", raw)


def _message(raw: Any) -> Message:
    message = obj(raw)
    role = text(message.get("role"))
    content = message.get("content")
    blocks: list[Block] = []
    if role in ("tool", "function"):
        tool_id = text(message.get("tool_call_id")) or text(message.get("name"))
        parts = (
            (TextBlock(content),) if isinstance(content, str) else tuple(map(_part, items(content)))
        )
        blocks.append(ToolResultBlock(tool_use_id=tool_id, content=parts))
    elif isinstance(content, str):
        blocks.append(TextBlock(content))
    else:
        blocks.extend(_part(part) for part in items(content))
    reasoning = message.get("reasoning_content")
    if isinstance(reasoning, str) and reasoning:
        blocks.insert(0, ReasoningBlock(summary=reasoning))
    blocks.extend(_tool_calls(message))
    name = message.get("name")
    return Message(role=role, content=tuple(blocks), name=name if isinstance(name, str) else None)


def _tool_calls(message: Mapping[str, Any]) -> list[Block]:
    calls: list[Block] = []
    for raw in items(message.get("tool_calls")):
        call = obj(raw)
        function = obj(call.get("function"))
        calls.append(
            ToolUseBlock(
                id=text(call.get("id")),
                name=text(function.get("name")),
                input=parse_arguments(function.get("arguments")),
            )
        )
    legacy = obj(message.get("function_call"))
    if legacy:
        calls.append(
            ToolUseBlock(
                id="", name=text(legacy.get("name")), input=parse_arguments(legacy.get("arguments"))
            )
        )
    return calls


def _tool(raw: Any) -> ToolDef:
    tool = obj(raw)
    function = obj(tool.get("function")) or tool  # legacy ``functions`` entries are bare
    return ToolDef(
        name=text(function.get("name")),
        description=text(function.get("description")),
        input_schema=function.get("parameters"),
        type=text(tool.get("type")) or "function",
    )


def _output_schema(response_format: Any) -> Any:
    fmt = obj(response_format)
    if fmt.get("type") == "json_schema":
        return obj(fmt.get("json_schema")) or None
    if fmt.get("type") == "json_object":
        return {"type": "json_object"}
    return None


class OpenAIChat:
    flavour = Flavour.OPENAI_CHAT

    def matches(self, method: str, url_path: str, request: Mapping[str, Any]) -> bool:
        return (
            method == "POST"
            and url_path.rstrip("/").endswith("/chat/completions")
            and isinstance(request.get("messages"), list)
        )

    def parse_request(self, request: Mapping[str, Any]) -> ParsedRequest:
        effort = request.get("reasoning_effort")
        tools = items(request.get("tools")) or items(request.get("functions"))
        return ParsedRequest(
            model=text(request.get("model")),
            messages=tuple(_message(raw) for raw in items(request.get("messages"))),
            tools=tuple(_tool(raw) for raw in tools),
            tool_choice=request.get("tool_choice", request.get("function_call")),
            thinking=ThinkingConfig(enabled=effort != "none", effort=effort)
            if isinstance(effort, str)
            else None,
            output_schema=_output_schema(request.get("response_format")),
            stream=request.get("stream") is True,
            extra={k: v for k, v in request.items() if k not in _TYPED_KEYS},
        )

    def parse_response(self, response: Mapping[str, Any]) -> ParsedResponse:
        if "error" in response and "choices" not in response:
            error = obj(response.get("error"))
            return ParsedResponse(
                error=text(error.get("message")) or text(response.get("error")) or "error"
            )
        choices = items(response.get("choices"))
        message = _message(obj(choices[0]).get("message")) if choices else None
        return usage_response(
            response.get("usage"),
            model=text(response.get("model")) or None,
            blocks=message.content if message else (),
            created=timestamp(response.get("created")),
        )

    def parse_stream(self, events: list[SseEvent]) -> ParsedResponse:
        state = _ChatStream()
        for event in events:
            if isinstance(event.data, Mapping):
                state.add(event.data)
            elif event.data == "[DONE]":
                state.done = True
        return state.result()


class _ChatStream:
    """Folds chat completion chunks back into one message; usage comes from the final chunk."""

    def __init__(self) -> None:
        self.model: str | None = None
        self.content: list[str] = []
        self.reasoning: list[str] = []
        self.calls: dict[int, dict[str, Any]] = {}
        self.usage: Any = None
        self.error: str | None = None
        self.created: datetime | None = None
        self.done = False
        self.finished = False

    def add(self, chunk: Mapping[str, Any]) -> None:
        if "error" in chunk and "choices" not in chunk:
            self.error = text(obj(chunk.get("error")).get("message")) or "error"
            return
        self.model = text(chunk.get("model")) or self.model
        self.created = self.created or timestamp(chunk.get("created"))
        if chunk.get("usage") is not None:
            self.usage = chunk["usage"]
        for choice in items(chunk.get("choices")):
            if integer(obj(choice).get("index")) != 0:
                continue
            self.finished = self.finished or bool(obj(choice).get("finish_reason"))
            delta = obj(obj(choice).get("delta"))
            self.content.append(text(delta.get("content")))
            self.reasoning.append(text(delta.get("reasoning_content")))
            for raw in items(delta.get("tool_calls")):
                self._add_call(obj(raw))

    def _add_call(self, raw: Mapping[str, Any]) -> None:
        call = self.calls.setdefault(integer(raw.get("index")), {"id": "", "name": "", "args": ""})
        function = obj(raw.get("function"))
        call["id"] = call["id"] or text(raw.get("id"))
        call["name"] += text(function.get("name"))
        call["args"] += text(function.get("arguments"))

    def result(self) -> ParsedResponse:
        blocks: list[Block] = []
        if any(self.reasoning):
            blocks.append(ReasoningBlock(summary="".join(self.reasoning)))
        if any(self.content):
            blocks.append(TextBlock("".join(self.content)))
        for index in sorted(self.calls):
            call = self.calls[index]
            blocks.append(ToolUseBlock(call["id"], call["name"], parse_arguments(call["args"])))
        parsed = usage_response(
            self.usage,
            model=self.model,
            blocks=tuple(blocks),
            error=self.error,
            created=self.created,
        )
        cut = not (self.done or self.finished or self.usage is not None or self.error)
        return dataclasses.replace(parsed, incomplete=cut)


_SEARCH_MODEL = re.compile(r"-search-(preview|api)\b")


def searched(call: Call) -> Call:
    """A Chat Completions call to a search model (``web_search_options``, or a model such as
    ``gpt-4o-mini-search-preview``) searched the web once, billed per search on top of its
    tokens: at genai-prices' per-search price; where it has none, the cost leaves the search
    out and a note says so (an ``unpriced-fee``), as for other per-use fees."""
    usage = call.usage
    if call.flavour is not Flavour.OPENAI_CHAT or usage is None or usage.web_searches:
        return call
    model = f"{call.model} {call.response_model or ''}"
    if "web_search_options" not in call.extra and not _SEARCH_MODEL.search(model):
        return call
    if search_fee_known(call.priced_model, call.price_provider, call.recorded_at):
        return dataclasses.replace(call, usage=dataclasses.replace(usage, web_searches=1))
    note = Note(
        NoteKind.UNPRICED_FEE,
        "1 web search (a Chat Completions search model) recorded: costsim knows no per-search "
        "price for it, so the cost leaves it out",
    )
    return dataclasses.replace(call, notes=(*call.notes, note))
