"""The typed model every layer after loading works on: a trace is a sequence of calls.

A :class:`Call` is one LLM request with its recorded response, normalised across API flavours
(Anthropic Messages, OpenAI Chat Completions, OpenAI Responses). Nothing downstream of the
provider adapters looks at raw JSON.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal

__all__ = [
    "Block",
    "CacheControl",
    "Call",
    "CassetteTrace",
    "DocumentBlock",
    "Flavour",
    "ImageBlock",
    "InteractionNote",
    "Message",
    "Note",
    "NoteKind",
    "OtherBlock",
    "Platform",
    "Provenance",
    "ReasoningBlock",
    "RedactedThinkingBlock",
    "TextBlock",
    "ThinkingBlock",
    "ThinkingConfig",
    "ToolDef",
    "ToolResultBlock",
    "ToolUseBlock",
    "Usage",
    "UsageSource",
]

JSON = Any
"""A JSON value as decoded by :func:`json.loads`."""


class Flavour(StrEnum):
    """The API a call was made to (its request and response shapes)."""

    ANTHROPIC_MESSAGES = "anthropic-messages"
    ANTHROPIC_TEXT = "anthropic-text-completions"
    """The legacy Text Completions API (``/v1/complete``): a prompt string, no usage."""
    OPENAI_CHAT = "openai-chat"
    OPENAI_RESPONSES = "openai-responses"
    OPENAI_COMPLETIONS = "openai-completions"
    """The legacy Completions API (``/v1/completions``): a prompt string."""
    BEDROCK_CONVERSE = "bedrock-converse"
    """Amazon Bedrock's Converse API; costsim meters it for Anthropic models."""

    @property
    def provider(self) -> str:
        """Whose models the calls go to: anthropic or openai."""
        return "openai" if self.value.startswith("openai") else "anthropic"

    @property
    def shape(self) -> Flavour:
        """The conversational flavour whose framing this one shares (for token counting)."""
        return _SHAPES.get(self, self)


_SHAPES = {
    Flavour.ANTHROPIC_TEXT: Flavour.ANTHROPIC_MESSAGES,
    Flavour.BEDROCK_CONVERSE: Flavour.ANTHROPIC_MESSAGES,
    Flavour.OPENAI_COMPLETIONS: Flavour.OPENAI_CHAT,
}


class Platform(StrEnum):
    """Where a call was served when not by the provider's own API (or a gateway)."""

    BEDROCK = "aws-bedrock"
    VERTEX = "google-vertex"

    @property
    def price_provider(self) -> str:
        """The genai-prices provider whose price list bills calls served here."""
        return "aws" if self is Platform.BEDROCK else "google"


@dataclass(frozen=True, slots=True)
class CacheControl:
    """An explicit cache breakpoint (Anthropic ``cache_control``)."""

    ttl: Literal["5m", "1h"] = "5m"


# --- content blocks -------------------------------------------------------------------------


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


@dataclass(frozen=True, slots=True)
class ThinkingConfig:
    """Extended thinking / reasoning settings of a request."""

    enabled: bool
    budget_tokens: int | None = None
    effort: str | None = None
    summary: str | None = None
    """OpenAI Responses ``reasoning.summary`` (auto / concise / detailed): summaries are output."""


# --- usage ----------------------------------------------------------------------------------


class UsageSource(StrEnum):
    RECORDED = "recorded"
    ESTIMATED = "estimated"


@dataclass(frozen=True, slots=True)
class Usage:
    """Token usage normalised to one shape (DESIGN.md section 2).

    ``prompt_total`` is every input token of the request, cached or not. ``output`` includes
    reasoning / thinking tokens; ``reasoning`` is the part of ``output`` spent thinking, or
    ``None`` when the provider did not report it.
    """

    uncached_input: int = 0
    cache_read: int = 0
    cache_write_5m: int = 0
    cache_write_1h: int = 0
    output: int = 0
    reasoning: int | None = None
    source: UsageSource = UsageSource.RECORDED
    web_searches: int = 0
    """Server-side web search requests, billed per use on top of tokens."""

    @property
    def cache_write(self) -> int:
        return self.cache_write_5m + self.cache_write_1h

    @property
    def prompt_total(self) -> int:
        return self.uncached_input + self.cache_read + self.cache_write

    @property
    def estimated(self) -> bool:
        return self.source is UsageSource.ESTIMATED


# --- notes -----------------------------------------------------------------------------------


class NoteKind(StrEnum):
    """Something a reader of the numbers must know about a call or an interaction."""

    INVALID_USAGE = "invalid-usage"
    """The recorded usage has impossible values: the call is estimated instead."""
    INCOMPLETE_STREAM = "incomplete-stream"
    """The stream ends before its final usage event: the call is estimated."""
    NO_USAGE = "no-usage"
    """The API records no usage at all (legacy Text Completions): the call is estimated."""
    USAGE_ONLY = "usage-only"
    """The request body is not one costsim models: metered from the recorded usage alone."""
    UNRECOGNISED_CALL = "unrecognised-llm-call"
    """Looks like an LLM call but costsim cannot meter it: not in the totals."""
    UNPRICED_FEE = "unpriced-fee"
    """A per-use fee (a server tool) was recorded that has no known price."""


@dataclass(frozen=True, slots=True)
class Note:
    kind: NoteKind
    message: str


# --- the call -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Provenance:
    """Where a call was recorded: the cassette file and the interaction's index in it."""

    path: Path
    index: int

    def __str__(self) -> str:
        return f"{self.path} interaction {self.index}"


@dataclass(frozen=True, slots=True)
class Call:
    """One LLM request with its recorded response."""

    flavour: Flavour
    model: str
    provenance: Provenance
    host: str = ""
    system: tuple[Block, ...] = ()
    messages: tuple[Message, ...] = ()
    tools: tuple[ToolDef, ...] = ()
    tool_choice: JSON = None
    thinking: ThinkingConfig | None = None
    output_schema: JSON = None
    cache_control: CacheControl | None = None
    """The request-level (automatic) cache breakpoint, when the request carries one."""
    stream: bool = False
    response_model: str | None = None
    response: tuple[Block, ...] = ()
    usage: Usage | None = None
    status: int = 200
    error: str | None = None
    recorded_at: datetime | None = None
    extra: dict[str, JSON] = field(default_factory=dict, hash=False, compare=False)
    """Request parameters the model does not type (temperature, max_tokens, ...)."""
    platform: Platform | None = None
    """Amazon Bedrock or Google Vertex AI when the call was served there."""
    endpoint: str = ""
    """The URL path the request was sent to."""
    notes: tuple[Note, ...] = ()
    """What the reader must know: invalid usage, a cut stream, a request read from usage only."""
    usage_hint: Usage | None = None
    """Usage a cut stream recorded before it ended (input counts): estimates start from it."""
    recorded_cost: Decimal | None = None
    """The cost a gateway recorded in the response (OpenRouter ``usage.cost``), in USD."""

    @property
    def provider(self) -> str:
        return self.flavour.provider

    @property
    def price_provider(self) -> str:
        """The genai-prices provider to price this call with."""
        return self.platform.price_provider if self.platform else self.provider

    @property
    def errored(self) -> bool:
        return self.error is not None

    @property
    def priced_model(self) -> str:
        """The model to price: the dated name the response reports, else the requested one.

        On a platform the requested id is the one its price list knows
        (``us.anthropic.claude-sonnet-4-20250514-v1:0``, ``claude-sonnet-4@20250514``)."""
        if self.platform is not None and self.model:
            return self.model
        return self.response_model or self.model


@dataclass(frozen=True, slots=True)
class InteractionNote:
    """A note about an interaction that is not a metered call (an unrecognised LLM call)."""

    provenance: Provenance
    note: Note


@dataclass(frozen=True, slots=True)
class CassetteTrace:
    """The LLM calls of one cassette, in recorded order, and a count of everything else."""

    path: Path
    calls: tuple[Call, ...]
    other_interactions: int
    size_bytes: int
    foreign_calls: tuple[Call, ...] = ()
    """Calls in an Anthropic or OpenAI API shape to another provider's host (Azure, Mistral,
    ...): recognised and kept, but not metered as Anthropic or OpenAI traffic."""
    notes: tuple[InteractionNote, ...] = ()
    """LLM-looking interactions costsim could not meter (they are among ``other``)."""

    @property
    def interactions(self) -> int:
        return len(self.calls) + len(self.foreign_calls) + self.other_interactions
