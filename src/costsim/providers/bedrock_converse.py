"""Amazon Bedrock's Converse API (``POST /model/{id}/converse`` and ``/converse-stream``).

Metered for Anthropic models (the model id names ``anthropic.``); Converse calls to other
vendors' models are not matched here. Usage is ``{"inputTokens", "outputTokens",
"cacheReadInputTokens", "cacheWriteInputTokens", "totalTokens"}``, where ``inputTokens``
excludes the cached parts and ``totalTokens`` is the sum of all four. Streams are AWS event
streams whose ``metadata`` event carries the usage.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from costsim.io.bodies import SseEvent, json_kind
from costsim.model import (
    Block,
    CacheControl,
    Flavour,
    Message,
    OtherBlock,
    TextBlock,
    ToolDef,
    Usage,
)
from costsim.providers._json import items, obj, text
from costsim.providers._usage import UsageRead, UsageReader
from costsim.providers.base import ParsedRequest, ParsedResponse
from costsim.providers.routes import route_of

__all__ = ["BedrockConverse", "converse_usage", "is_anthropic_model"]

T = TypeVar("T", Block, ToolDef)


def is_anthropic_model(model: str) -> bool:
    name = model.lower()
    return "anthropic." in name or name.startswith("claude")


def converse_usage(raw: Any) -> UsageRead:
    if not isinstance(raw, Mapping):
        return UsageRead(None, (f"usage is a JSON {json_kind(raw)}, not an object",))
    read = UsageReader(raw)
    uncached = read.count("inputTokens", required=True)
    output = read.count("outputTokens", required=True)
    cache_read = read.count("cacheReadInputTokens")
    cache_write = read.count("cacheWriteInputTokens")
    if "totalTokens" in raw:
        stated = read.checked("totalTokens", raw["totalTokens"], 4 * 20_000_000)
        expected = uncached + output + cache_read + cache_write
        read.require(
            stated is None or stated == expected,
            f"totalTokens ({stated}) is not the sum of the other counts ({expected})",
        )
    return read.result(
        Usage(
            uncached_input=uncached,
            cache_read=cache_read,
            cache_write_5m=cache_write,
            output=output,
        )
    )


def _block(raw: Any) -> Block:
    block = obj(raw)
    if isinstance(block.get("text"), str):
        return TextBlock(block["text"])
    kind = next(iter(block), "unknown") if block else "unknown"
    return OtherBlock(str(kind), raw)


def _marked(raws: list[Any], parse: Callable[[Any], T]) -> tuple[T, ...]:
    """The items of a Converse list, each ``{"cachePoint": ...}`` entry made the cache
    breakpoint of the item before it (Bedrock's form of ``cache_control``: everything up to
    the point is cached)."""
    parsed: list[T] = []
    for raw in raws:
        point = obj(raw).get("cachePoint")
        if point is None:
            parsed.append(parse(raw))
        elif parsed:
            mark = CacheControl("1h") if obj(point).get("ttl") == "1h" else CacheControl()
            parsed[-1] = dataclasses.replace(parsed[-1], cache_control=mark)
    return tuple(parsed)


def _tool(raw: Any) -> ToolDef:
    spec = obj(obj(raw).get("toolSpec"))
    return ToolDef(
        name=text(spec.get("name")),
        description=text(spec.get("description")),
        input_schema=obj(spec.get("inputSchema")).get("json"),
    )


class BedrockConverse:
    flavour = Flavour.BEDROCK_CONVERSE

    def matches(self, method: str, url_path: str, request: Mapping[str, Any]) -> bool:
        route = route_of(url_path)
        return (
            method == "POST"
            and route.action == "converse"
            and is_anthropic_model(route.model)
            and isinstance(request.get("messages"), list)
        )

    def parse_request(self, request: Mapping[str, Any]) -> ParsedRequest:
        return ParsedRequest(
            model="",  # named by the path
            system=_marked(items(request.get("system")), _block),
            messages=tuple(
                Message(
                    role=text(obj(m).get("role")),
                    content=_marked(items(obj(m).get("content")), _block),
                )
                for m in items(request.get("messages"))
            ),
            tools=_marked(items(obj(request.get("toolConfig")).get("tools")), _tool),
            extra={k: v for k, v in request.items() if k not in ("messages", "system")},
        )

    def parse_response(self, response: Mapping[str, Any]) -> ParsedResponse:
        if "usage" not in response and ("message" in response or "Message" in response):
            return ParsedResponse(error=text(response.get("message") or response.get("Message")))
        message = obj(obj(response.get("output")).get("message"))
        read = converse_usage(response["usage"]) if "usage" in response else UsageRead(None)
        return ParsedResponse(
            blocks=tuple(_block(b) for b in items(message.get("content"))),
            usage=read.usage,
            usage_problems=read.problems,
        )

    def parse_stream(self, events: list[SseEvent]) -> ParsedResponse:
        pieces: list[str] = []
        usage: Any = None
        started = False
        error: str | None = None
        for event in events:
            data = obj(event.data)
            if event.event == "messageStart":
                started = True
            elif event.event == "contentBlockDelta":
                pieces.append(text(obj(data.get("delta")).get("text")))
            elif event.event == "metadata" and "usage" in data:
                usage = data["usage"]
            elif event.event == "error":
                error = text(obj(data.get("error")).get("message")) or "error"
        read = converse_usage(usage) if usage is not None else UsageRead(None)
        return ParsedResponse(
            blocks=(TextBlock("".join(pieces)),) if any(pieces) else (),
            usage=read.usage,
            error=error,
            usage_problems=read.problems,
            incomplete=started and usage is None and error is None,
        )
