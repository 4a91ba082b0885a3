"""Serialise a request the way the provider sees it and count it with an offline tokenizer.

The result is a raw count and the structure features the calibration needs: tokens the API
adds that no tokenizer sees (tool-use system prompt, per message, per tool round trip,
thinking, output schema). OpenAI Chat follows OpenAI's cookbook recipe, which is exact for
text chats. Counts per prefix position (tools, then system, then message blocks: the order
providers cache in) are available for cache simulation.

Work is memoised twice: every distinct text is tokenised once (:class:`TokenCounter`), and
every message object is counted once per :class:`Serialiser`, so metering a conversation grows
with its unique content, not with turns squared.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from costsim.metering.models import chat_reply_priming, encoding_for, keeps_thinking
from costsim.metering.tokenizers import TokenCounter, counter
from costsim.model import (
    Block,
    Call,
    DocumentBlock,
    Flavour,
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

__all__ = ["Features", "Position", "Serialiser", "block_tokens", "serialise"]


@dataclass(frozen=True, slots=True)
class Features:
    """What the calibration regresses recorded prompt totals on."""

    raw: int
    """Offline tokenizer count of the serialised request (OpenAI Chat: the cookbook count)."""
    messages: int
    tool_round_trips: int
    tools: int
    thinking: bool
    output_schema: bool
    images: int
    documents: int
    forced_tool: bool = False
    """tool_choice forces a tool (Anthropic any/tool, OpenAI required/a named function)."""

    @property
    def has_tools(self) -> bool:
        return self.tools > 0


@dataclass(frozen=True, slots=True)
class Position:
    """A block in prefix order: where it is and the raw tokens up to and including it."""

    section: str  # "tools" | "system" | "messages"
    message: int  # message index (-1 for tools and system)
    block: int
    cumulative: int


@dataclass(frozen=True, slots=True)
class _Stats:
    """Additive counts of a run of blocks."""

    tokens: int = 0
    tool_round_trips: int = 0
    images: int = 0
    documents: int = 0

    def __add__(self, other: _Stats) -> _Stats:
        return _Stats(
            self.tokens + other.tokens,
            self.tool_round_trips + other.tool_round_trips,
            self.images + other.images,
            self.documents + other.documents,
        )


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


BlockCounter = Callable[[Block, TokenCounter, bool], _Stats]


def _text(block: Block, count: TokenCounter, keep_thinking: bool) -> _Stats:
    assert isinstance(block, TextBlock)
    return _Stats(count(block.text))


def _image(block: Block, count: TokenCounter, keep_thinking: bool) -> _Stats:
    return _Stats(images=1)


def _document(block: Block, count: TokenCounter, keep_thinking: bool) -> _Stats:
    assert isinstance(block, DocumentBlock)
    return _Stats(count(block.text)) if block.text else _Stats(documents=1)


def _tool_use(block: Block, count: TokenCounter, keep_thinking: bool) -> _Stats:
    assert isinstance(block, ToolUseBlock)
    return _Stats(count(block.name) + count(_json(block.input)))


def _tool_result(block: Block, count: TokenCounter, keep_thinking: bool) -> _Stats:
    assert isinstance(block, ToolResultBlock)
    inner = sum((block_tokens(b, count, keep_thinking) for b in block.content), start=_Stats())
    return inner + _Stats(tool_round_trips=1)


def _thinking(block: Block, count: TokenCounter, keep_thinking: bool) -> _Stats:
    assert isinstance(block, ThinkingBlock)
    return _Stats(count(block.text) if keep_thinking else 0)


def _redacted(block: Block, count: TokenCounter, keep_thinking: bool) -> _Stats:
    return _Stats()


def _reasoning(block: Block, count: TokenCounter, keep_thinking: bool) -> _Stats:
    assert isinstance(block, ReasoningBlock)
    return _Stats(count(block.summary) if keep_thinking else 0)


def _other(block: Block, count: TokenCounter, keep_thinking: bool) -> _Stats:
    assert isinstance(block, OtherBlock)
    return _Stats(count(_json(block.raw)))


_BLOCK_COUNTERS: dict[type, BlockCounter] = {
    TextBlock: _text,
    ImageBlock: _image,
    DocumentBlock: _document,
    ToolUseBlock: _tool_use,
    ToolResultBlock: _tool_result,
    ThinkingBlock: _thinking,
    RedactedThinkingBlock: _redacted,
    ReasoningBlock: _reasoning,
    OtherBlock: _other,
}


def block_tokens(block: Block, count: TokenCounter, keep_thinking: bool = True) -> _Stats:
    """Raw tokens of one block (and what in it no tokenizer can count)."""
    return _BLOCK_COUNTERS[type(block)](block, count, keep_thinking)


def _tool_tokens(tool: ToolDef, count: TokenCounter) -> int:
    return count(tool.name) + count(tool.description) + count(_json(tool.input_schema))


def _chat_tool_tokens(tool: ToolDef, count: TokenCounter) -> int:
    """A function as OpenAI renders it for the model: a TypeScript-like signature with its
    descriptions as comments (the cookbook recipe's per-property counts approximate this,
    but leave nested objects out)."""
    lines = [f"// {tool.description}"] if tool.description else []
    schema = tool.input_schema if isinstance(tool.input_schema, dict) else {}
    lines.append(f"type {tool.name} = (_: {_ts_object(schema)}) => any;")
    return count("\n".join(lines))


def _ts_type(spec: Any) -> str:
    if not isinstance(spec, dict):
        return "any"
    if isinstance(spec.get("enum"), list):
        return " | ".join(json.dumps(item) for item in spec["enum"])
    for combinator in ("anyOf", "oneOf"):
        if isinstance(spec.get(combinator), list):
            return " | ".join(_ts_type(option) for option in spec[combinator])
    kind = spec.get("type")
    if isinstance(kind, list):
        return " | ".join(_ts_type({**spec, "type": k}) for k in kind)
    if kind == "array":
        return f"Array<{_ts_type(spec.get('items'))}>"
    if kind == "object" or "properties" in spec:
        return _ts_object(spec)
    if kind in ("integer", "number"):
        return "number"
    return str(kind) if isinstance(kind, str) else "any"


def _ts_object(schema: dict[str, Any]) -> str:
    properties = schema.get("properties")
    if not isinstance(properties, dict) or not properties:
        return "{}"
    listed = schema.get("required")
    required: list[Any] = listed if isinstance(listed, list) else []
    lines = ["{"]
    for key, spec in properties.items():
        description = spec.get("description") if isinstance(spec, dict) else None
        if description:
            lines.append(f"// {description}")
        optional = "" if key in required else "?"
        lines.append(f"{key}{optional}: {_ts_type(spec)},")
    lines.append("}")
    return "\n".join(lines)


def _forces_tool(choice: Any) -> bool:
    if isinstance(choice, str):
        return choice == "required"
    if isinstance(choice, dict):
        return choice.get("type") in ("any", "tool", "function", "allowed_tools", "custom")
    return False


@dataclass(frozen=True, slots=True)
class _Style:
    """How a flavour frames messages and tools."""

    per_message: int
    role_tokens: bool
    tool_tokens: Callable[[ToolDef, TokenCounter], int]
    tools_end: int
    chat_priming: bool


_STYLES: dict[Flavour, _Style] = {
    Flavour.OPENAI_CHAT: _Style(3, True, _chat_tool_tokens, 12, True),
    Flavour.ANTHROPIC_MESSAGES: _Style(0, True, _tool_tokens, 0, False),
    Flavour.OPENAI_RESPONSES: _Style(0, True, _tool_tokens, 0, False),
}


class Serialiser:
    """Counts requests, remembering every message object it has counted.

    Keep one per trace (or per run): the memo holds references to the messages it counted.
    """

    _RECENT = 16
    """Conversations remembered for prefix reuse (interleaved agents each have one)."""

    def __init__(self) -> None:
        self._messages: dict[tuple[int, str, bool], tuple[Message, _Stats]] = {}
        self._tools: dict[tuple[int, str, Flavour], tuple[tuple[ToolDef, ...], int]] = {}
        self._recent: list[tuple[tuple[Message, ...], str, bool, _Stats]] = []

    def _history(self, call: Call, count: TokenCounter, style: _Style, keep: bool) -> _Stats:
        """Stats of all messages, reusing the longest remembered prefix of this history."""
        messages = call.messages
        start, stats = 0, _Stats()
        for known, name, known_keep, known_stats in self._recent:
            n = len(known)
            if (
                n > start
                and n <= len(messages)
                and name == count.name
                and known_keep == keep
                and messages[:n] == known
            ):
                start, stats = n, known_stats
        for message in messages[start:]:
            stats = stats + self._message(message, count, style, keep)
        self._recent.insert(0, (messages, count.name, keep, stats))
        del self._recent[self._RECENT :]
        return stats

    def _message(self, message: Message, count: TokenCounter, style: _Style, keep: bool) -> _Stats:
        key = (id(message), count.name, keep)
        hit = self._messages.get(key)
        if hit is not None and hit[0] is message:
            return hit[1]
        stats = sum((block_tokens(b, count, keep) for b in message.content), start=_Stats())
        frame = style.per_message + (count(message.role) if style.role_tokens else 0)
        if message.name and style.chat_priming:
            frame += count(message.name) + 1
        stats = stats + _Stats(frame)
        self._messages[key] = (message, stats)
        return stats

    def _tools_tokens(self, call: Call, count: TokenCounter, style: _Style) -> int:
        if not call.tools:
            return 0
        key = (id(call.tools), count.name, call.flavour)
        hit = self._tools.get(key)
        if hit is not None and hit[0] is call.tools:
            return hit[1]
        tokens = sum(style.tool_tokens(tool, count) for tool in call.tools) + style.tools_end
        self._tools[key] = (call.tools, tokens)
        return tokens

    def features(self, call: Call) -> Features:
        """Raw count and structure features of a call's request."""
        count = counter(encoding_for(call))
        style = _STYLES[call.flavour.shape]
        keep = keeps_thinking(call.model) and not style.chat_priming
        stats = _Stats(self._tools_tokens(call, count, style))
        for block in call.system:
            stats = stats + block_tokens(block, count, keep)
        stats = stats + self._history(call, count, style, keep)
        raw = stats.tokens
        if call.output_schema is not None:
            raw += count(_json(call.output_schema))
        if style.chat_priming:
            raw += chat_reply_priming(call.model)
        return Features(
            raw=raw,
            messages=len(call.messages),
            tool_round_trips=stats.tool_round_trips,
            tools=len(call.tools),
            thinking=bool(call.thinking and call.thinking.enabled),
            output_schema=call.output_schema is not None,
            images=stats.images,
            documents=stats.documents,
            forced_tool=_forces_tool(call.tool_choice),
        )

    def positions(self, call: Call) -> tuple[Position, ...]:
        """Raw cumulative counts at every block in prefix order (tools, system, messages)."""
        count = counter(encoding_for(call))
        style = _STYLES[call.flavour.shape]
        keep = keeps_thinking(call.model) and not style.chat_priming
        positions: list[Position] = []
        total = 0
        for index, tool in enumerate(call.tools):
            total += style.tool_tokens(tool, count)
            if index == len(call.tools) - 1:
                total += style.tools_end
            positions.append(Position("tools", -1, index, total))
        for index, block in enumerate(call.system):
            total += block_tokens(block, count, keep).tokens
            positions.append(Position("system", -1, index, total))
        for m_index, message in enumerate(call.messages):
            total += style.per_message + (count(message.role) if style.role_tokens else 0)
            for b_index, block in enumerate(message.content):
                total += block_tokens(block, count, keep).tokens
                positions.append(Position("messages", m_index, b_index, total))
        return tuple(positions)


def serialise(call: Call) -> Features:
    """Features of one call, without memo across calls (use a :class:`Serialiser` for traces)."""
    return Serialiser().features(call)
