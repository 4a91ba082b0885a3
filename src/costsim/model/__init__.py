"""The typed model every layer after loading works on: a trace is a sequence of calls.

A :class:`Call` is one LLM request with its recorded response, normalised across API flavours
(Anthropic Messages, OpenAI Chat Completions, OpenAI Responses). Nothing downstream of the
provider adapters looks at raw JSON.
"""

from __future__ import annotations

from costsim.model.blocks import (
    JSON,
    THINKING_BLOCKS,
    Block,
    CacheControl,
    DocumentBlock,
    ImageBlock,
    Message,
    OtherBlock,
    ReasoningBlock,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolDef,
    ToolResultBlock,
    ToolUseBlock,
)
from costsim.model.call import (
    Call,
    CassetteTrace,
    EmbeddingCall,
    EmbeddingInput,
    Flavour,
    InteractionNote,
    Platform,
    Provenance,
    ThinkingConfig,
)
from costsim.model.paths import CassettePath
from costsim.model.usage import (
    LEFT_OUT_KINDS,
    Note,
    NoteKind,
    PromptSplit,
    Usage,
    UsageSource,
    split_prompt,
)

__all__ = [
    "JSON",
    "LEFT_OUT_KINDS",
    "THINKING_BLOCKS",
    "Block",
    "CacheControl",
    "Call",
    "CassettePath",
    "CassetteTrace",
    "DocumentBlock",
    "EmbeddingCall",
    "EmbeddingInput",
    "Flavour",
    "ImageBlock",
    "InteractionNote",
    "Message",
    "Note",
    "NoteKind",
    "OtherBlock",
    "Platform",
    "PromptSplit",
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
    "split_prompt",
]
