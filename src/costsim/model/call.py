"""A call: one LLM request with its recorded response; a trace: one cassette's calls."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from enum import StrEnum

from costsim.model.blocks import JSON, Block, CacheControl, Message, OtherBlock, ToolDef
from costsim.model.paths import CassettePath
from costsim.model.usage import Note, Usage

__all__ = [
    "Call",
    "CassetteTrace",
    "EmbeddingCall",
    "EmbeddingInput",
    "Flavour",
    "InteractionNote",
    "Platform",
    "Provenance",
    "ThinkingConfig",
]


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
        return _PROVIDERS[self]

    @property
    def shape(self) -> Flavour:
        """The conversational flavour whose framing this one shares (for token counting)."""
        return _SHAPES.get(self, self)


SERVER_SIDE_BLOCKS = frozenset(
    {
        "server_tool_use",  # Anthropic web search, web fetch, code execution, advisor
        "mcp_tool_use",  # Anthropic MCP connector
        "compaction",  # server-side context compaction (an iteration of its own)
        "web_search_call",  # OpenAI Responses built-in tools
        "file_search_call",
        "code_interpreter_call",
        "image_generation_call",
        "mcp_call",
        "tool_search_call",
    }
)
"""Response blocks that record a step the provider ran itself inside one request: each such
iteration re-reads the prompt and adds tokens the client never sent."""


_PROVIDERS = {
    flavour: "openai" if flavour.value.startswith("openai") else "anthropic" for flavour in Flavour
}
"""Looked up, not worked out: every metered call asks, several times per variant."""

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
class ThinkingConfig:
    """Extended thinking / reasoning settings of a request."""

    enabled: bool
    budget_tokens: int | None = None
    effort: str | None = None
    summary: str | None = None
    """OpenAI Responses ``reasoning.summary`` (auto / concise / detailed): summaries are output."""


@dataclass(frozen=True, slots=True)
class Provenance:
    """Where a call was recorded: the cassette file and the interaction's index in it."""

    path: CassettePath
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
    service_tier: str | None = None
    """The service tier the response names when it has prices of its own (``flex``,
    ``priority``, ``batch``): the usage, recorded or estimated, is billed at it."""
    served_by: str | None = None
    """The genai-prices provider whose host served the call, when it is another provider's
    (Azure OpenAI, OpenRouter, Groq, Mistral, ...): its price list bills the call."""
    response_id: str | None = None
    """The id of the stored response (OpenAI Responses), which a later request can continue."""

    @property
    def provider(self) -> str:
        return _PROVIDERS[self.flavour]

    @property
    def price_provider(self) -> str:
        """The genai-prices provider to price this call with."""
        if self.served_by is not None:
            return self.served_by
        platform = self.platform
        return platform.price_provider if platform is not None else _PROVIDERS[self.flavour]

    @property
    def billed_by(self) -> str:
        """Who bills the call, as ``--by provider`` groups it: the provider whose host served
        it (``azure``, ``groq``, ...), else the platform (``aws-bedrock``, ``google-vertex``),
        else the API's maker (``anthropic``, ``openai``)."""
        if self.served_by is not None:
            return self.served_by
        return self.platform.value if self.platform is not None else _PROVIDERS[self.flavour]

    @property
    def base_tier(self) -> bool:
        """Billed at the base tier whatever its prompt (see :attr:`Usage.base_tier`)."""
        return self.usage is not None and self.usage.base_tier

    @property
    def errored(self) -> bool:
        return self.error is not None

    @property
    def server_tools(self) -> tuple[str, ...]:
        """Server-side steps the response records (web search, code execution, ...), one name
        per step: their prompt tokens were added by the provider, not sent by the client."""
        steps = [
            str(block.raw.get("name") or block.type)
            if isinstance(block.raw, dict) and block.type in ("server_tool_use", "mcp_tool_use")
            else block.type
            for block in self.response
            if isinstance(block, OtherBlock) and block.type in SERVER_SIDE_BLOCKS
        ]
        searches = self.usage.web_searches if self.usage is not None else 0
        if searches and "web_search" not in steps and "web_search_call" not in steps:
            steps.extend(["web_search"] * searches)
        return tuple(steps)

    @property
    def prompt_blocks(self) -> list[Block | ToolDef]:
        """What the request sends, in prefix order: tool definitions, system blocks, then
        every message's blocks."""
        return [
            *self.tools,
            *self.system,
            *(block for message in self.messages for block in message.content),
        ]

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
class EmbeddingInput:
    """What an embeddings request sent, kept when its response recorded no usable usage: the
    texts whose tokens are estimated, and the tokens it sent as token arrays (their length)."""

    texts: tuple[str, ...] = ()
    tokens: int = 0


@dataclass(frozen=True, slots=True)
class EmbeddingCall:
    """An embeddings request (``/embeddings``): billed for its input tokens, not an LLM call
    (no strategy changes it), so it is in no LLM total; a report says what it cost beside
    them."""

    provenance: Provenance
    model: str
    tokens: int | None
    """The input tokens its response reported; None when it reported none usable (they are
    estimated from ``sent``)."""
    host: str = ""
    recorded_at: datetime | None = None
    sent: EmbeddingInput | None = None
    """Its input, when ``tokens`` is None."""

    @property
    def estimated(self) -> bool:
        return self.tokens is None


@dataclass(frozen=True, slots=True)
class CassetteTrace:
    """The LLM calls of one cassette, in recorded order, and a count of everything else."""

    path: CassettePath
    calls: tuple[Call, ...]
    other_interactions: int
    size_bytes: int
    notes: tuple[InteractionNote, ...] = ()
    """LLM-looking interactions costsim could not meter (they are among ``other``)."""
    versioned: bool = True
    """The file ends with vcrpy's closing ``version`` key (see
    :func:`costsim.analysis.cut_short.cut_short`)."""
    embeddings: tuple[EmbeddingCall, ...] = ()
    """Its embeddings requests (among ``other``)."""

    @property
    def interactions(self) -> int:
        return len(self.calls) + self.other_interactions
