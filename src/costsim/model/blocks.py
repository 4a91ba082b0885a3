"""Content blocks of requests and responses, messages and tool definitions."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

__all__ = [
    "JSON",
    "THINKING_BLOCKS",
    "Block",
    "CacheControl",
    "DocumentBlock",
    "ImageBlock",
    "Message",
    "OtherBlock",
    "ReasoningBlock",
    "RedactedThinkingBlock",
    "TextBlock",
    "ThinkingBlock",
    "ToolDef",
    "ToolResultBlock",
    "ToolUseBlock",
]

JSON = Any
"""A JSON value as decoded by :func:`json.loads`."""


@dataclass(frozen=True, slots=True)
class CacheControl:
    """An explicit cache breakpoint (Anthropic ``cache_control``)."""

    ttl: Literal["5m", "1h"] = "5m"


@dataclass(frozen=True, slots=True)
class TextBlock:
    text: str
    cache_control: CacheControl | None = None
    kind: Literal["text"] = "text"


@dataclass(frozen=True, slots=True)
class ImageBlock:
    """An image; ``source`` identifies it (a URL, or a digest of inline data).

    ``width`` and ``height`` are the pixel size read from the recorded bytes' header (0 when
    the image was sent by URL or file id, or its header could not be read); ``detail`` is
    OpenAI's ``detail`` setting as sent ("" when absent).
    """

    media_type: str
    source: str
    data_bytes: int = 0
    cache_control: CacheControl | None = None
    width: int = 0
    height: int = 0
    detail: str = ""
    kind: Literal["image"] = "image"


@dataclass(frozen=True, slots=True)
class DocumentBlock:
    """A document (PDF, plain text, file reference); ``source`` identifies it.

    ``text`` is a plain-text document's content, or the text extracted from an inline PDF;
    ``pages`` and ``page_points`` (width, height of each page in PDF points) are read from an
    inline PDF (0 / empty when it was sent by URL or file id, or could not be read).
    """

    media_type: str
    source: str
    text: str = ""
    data_bytes: int = 0
    cache_control: CacheControl | None = None
    pages: int = 0
    page_points: tuple[tuple[float, float], ...] = ()
    kind: Literal["document"] = "document"


@dataclass(frozen=True, slots=True)
class ToolUseBlock:
    """A tool call made by the assistant (Anthropic ``tool_use``, OpenAI ``tool_calls``)."""

    id: str
    name: str
    input: JSON
    cache_control: CacheControl | None = None
    kind: Literal["tool_use"] = "tool_use"


@dataclass(frozen=True, slots=True)
class ToolResultBlock:
    """The result of a tool call, sent back by the client."""

    tool_use_id: str
    content: tuple[Block, ...]
    is_error: bool = False
    cache_control: CacheControl | None = None
    kind: Literal["tool_result"] = "tool_result"

    @property
    def text(self) -> str:
        return "\n".join(block.text for block in self.content if isinstance(block, TextBlock))


@dataclass(frozen=True, slots=True)
class ThinkingBlock:
    text: str
    signature: str = ""
    cache_control: CacheControl | None = None
    kind: Literal["thinking"] = "thinking"


@dataclass(frozen=True, slots=True)
class RedactedThinkingBlock:
    data: str
    cache_control: CacheControl | None = None
    kind: Literal["redacted_thinking"] = "redacted_thinking"


THINKING_BLOCKS = (ThinkingBlock, RedactedThinkingBlock)
"""Anthropic's thinking, plain or redacted: billed inside ``output_tokens``, never counted
apart, and dropped from later requests by models that do not keep earlier thinking."""


@dataclass(frozen=True, slots=True)
class ReasoningBlock:
    """An OpenAI reasoning item (Responses) or ``reasoning_content`` (chat-compatible APIs)."""

    summary: str
    encrypted: str = ""
    cache_control: CacheControl | None = None
    kind: Literal["reasoning"] = "reasoning"


@dataclass(frozen=True, slots=True)
class OtherBlock:
    """A block of a type costsim does not model (server tool use, citations, audio, ...).

    It is kept with its raw JSON, so nothing the request carried is lost.
    """

    type: str
    raw: JSON
    cache_control: CacheControl | None = None
    kind: Literal["other"] = "other"


Block = (
    TextBlock
    | ImageBlock
    | DocumentBlock
    | ToolUseBlock
    | ToolResultBlock
    | ThinkingBlock
    | RedactedThinkingBlock
    | ReasoningBlock
    | OtherBlock
)


@dataclass(frozen=True, slots=True)
class Message:
    """One turn of the conversation: ``role`` as the API named it, and its blocks."""

    role: str
    content: tuple[Block, ...]
    name: str | None = None


@dataclass(frozen=True, slots=True)
class ToolDef:
    """A tool definition sent with a request."""

    name: str
    description: str = ""
    input_schema: JSON = None
    type: str = "function"
    cache_control: CacheControl | None = None
