"""What a provider adapter is: one API flavour's request and response shapes."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Any, Protocol

from costsim.io.bodies import SseEvent
from costsim.model import (
    Block,
    CacheControl,
    Flavour,
    Message,
    ThinkingConfig,
    ToolDef,
    Usage,
)

__all__ = ["Adapter", "ParsedRequest", "ParsedResponse"]


@dataclass(frozen=True, slots=True)
class ParsedRequest:
    model: str
    system: tuple[Block, ...] = ()
    messages: tuple[Message, ...] = ()
    tools: tuple[ToolDef, ...] = ()
    tool_choice: Any = None
    thinking: ThinkingConfig | None = None
    output_schema: Any = None
    cache_control: CacheControl | None = None
    stream: bool = False
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ParsedResponse:
    model: str | None = None
    blocks: tuple[Block, ...] = ()
    usage: Usage | None = None
    error: str | None = None
    created: datetime | None = None
    """When the provider says it created the response (OpenAI ``created``), if it says."""
    usage_problems: tuple[str, ...] = ()
    """Why the recorded usage cannot be trusted (then ``usage`` is None)."""
    incomplete: bool = False
    """A stream that ends before its final usage event; ``usage`` is what it had so far."""
    recorded_cost: Decimal | None = None
    """A gateway's recorded cost of the call (OpenRouter ``usage.cost``)."""
    unpriced_fees: tuple[str, ...] = ()
    """Per-use fees recorded with no known price ("2 code execution requests")."""
    service_tier: str | None = None
    """The service tier the response says served the call (``flex``, ``priority``, ...)."""
    response_id: str | None = None
    """The id a stored response is continued by (OpenAI Responses ``previous_response_id``)."""
    unsplit_writes: bool = False
    """Cache writes recorded without their 5-minute / 1-hour split (Anthropic usage without
    ``cache_creation``)."""


class Adapter(Protocol):
    """One API flavour. Adapters are registered in :mod:`costsim.providers`."""

    flavour: Flavour

    def matches(self, method: str, url_path: str, request: Mapping[str, Any]) -> bool:
        """Whether a request (path and decoded JSON body) is a call of this flavour."""
        ...

    def parse_request(self, request: Mapping[str, Any]) -> ParsedRequest: ...

    def parse_response(self, response: Mapping[str, Any]) -> ParsedResponse: ...

    def parse_stream(self, events: list[SseEvent]) -> ParsedResponse: ...
