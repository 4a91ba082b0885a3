"""What serialising a request yields: the features calibration regresses on, and counts at
prefix positions (see :mod:`costsim.metering.serialise`)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Features", "Position"]


@dataclass(frozen=True, slots=True)
class Features:
    """What the calibration regresses recorded prompt totals on."""

    raw: int
    """Offline tokenizer count of the serialised request (OpenAI: the cookbook count)."""
    messages: int
    tool_round_trips: int
    tools: int
    thinking: bool
    output_schema: bool
    images: int
    documents: int
    forced_tool: bool = False
    """tool_choice forces a tool (Anthropic any/tool, OpenAI required/a named function)."""
    fixed: int = 0
    """Provider tokens from documented rules, not scaled by any coefficient: image tokens,
    PDF page images, Anthropic's tool-use system prompt."""
    reasoning_items: int = 0
    """Encrypted reasoning items the model reads again (OpenAI Responses, current turn)."""
    reasoning_chars: int = 0
    """Their encrypted characters: the only trace of the chain of thought's length."""

    @property
    def has_tools(self) -> bool:
        return self.tools > 0


@dataclass(frozen=True, slots=True)
class Position:
    """A block in prefix order: where it is and the tokens up to and including it
    (raw count plus rule tokens)."""

    section: str  # "tools" | "system" | "messages"
    message: int  # message index (-1 for tools and system)
    block: int
    cumulative: int
