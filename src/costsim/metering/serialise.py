"""Serialise a request the way the provider sees it and count it with an offline tokenizer.

The result is a raw count, the tokens documented provider rules add (``fixed``: images, PDF
pages, Anthropic's tool-use system prompt) and the structure features the calibration fits
what remains on (per message, per tool round trip, thinking, output schema). OpenAI Chat and
Responses follow OpenAI's cookbook recipe (3 tokens per message plus its role, reply
priming), which is exact for text, and the framing rules of
:mod:`costsim.metering.openai_framing` (functions, calls and results, reasoning items).
Counts per prefix position (tools, then system, then message blocks: the order providers
cache in) are available for cache simulation.

Work is memoised twice: every distinct text is tokenised once (:class:`TokenCounter`), and
every message object is counted once per :class:`Serialiser`, so metering a conversation grows
with its unique content, not with turns squared.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from costsim.metering.features import Features, Position
from costsim.metering.media import document_overhead, image_tokens
from costsim.metering.models import (
    chat_reply_priming,
    encoding_for,
    keeps_thinking,
    tool_prompt_tokens,
    wraps_parallel_calls,
)
from costsim.metering.openai_framing import (
    call_tokens,
    function_names,
    functions_tokens,
    namespace_tokens,
    output_schema,
    parallel_calls_tokens,
    passed_back_reasoning,
    result_author,
    tool_choice_tokens,
)
from costsim.metering.signatures import anthropic_tool_tokens, compact_json, openai_tool_tokens
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

__all__ = ["Features", "Position", "Serialiser", "block_tokens", "forces_tool", "serialise"]


@dataclass(frozen=True, slots=True)
class _Stats:
    """Additive counts of a run of blocks."""

    tokens: int = 0
    tool_round_trips: int = 0
    images: int = 0
    documents: int = 0
    fixed: int = 0

    def __add__(self, other: _Stats) -> _Stats:
        return _Stats(
            self.tokens + other.tokens,
            self.tool_round_trips + other.tool_round_trips,
            self.images + other.images,
            self.documents + other.documents,
            self.fixed + other.fixed,
        )


@dataclass(frozen=True, slots=True)
class _Context:
    count: TokenCounter
    keep_thinking: bool
    flavour: Flavour | None
    model: str
    names: Mapping[str, str] = field(default_factory=dict)
    """Tool call ids of the conversation and their functions (OpenAI results cost the name)."""
    wrap_parallel: bool = False
    """Several calls of one turn reach the model as one ``multi_tool_use.parallel`` call."""

    @property
    def openai(self) -> bool:
        return self.flavour not in (None, Flavour.ANTHROPIC_MESSAGES)


BlockCounter = Callable[[Block, _Context], _Stats]


def _text(block: Block, ctx: _Context) -> _Stats:
    assert isinstance(block, TextBlock)
    return _Stats(ctx.count(block.text))


def _image(block: Block, ctx: _Context) -> _Stats:
    assert isinstance(block, ImageBlock)
    fixed = image_tokens(block, ctx.flavour, ctx.model) if ctx.flavour else 0
    return _Stats(images=1, fixed=fixed)


def _document(block: Block, ctx: _Context) -> _Stats:
    assert isinstance(block, DocumentBlock)
    fixed = document_overhead(block, ctx.flavour, ctx.model) if ctx.flavour else 0
    return _Stats(ctx.count(block.text), documents=0 if block.text else 1, fixed=fixed)


def _tool_use(block: Block, ctx: _Context) -> _Stats:
    assert isinstance(block, ToolUseBlock)
    if ctx.openai:  # addressed to=functions.NAME (see openai_framing)
        return _Stats(call_tokens(block, ctx.count))
    arguments = block.input if isinstance(block.input, str) else compact_json(block.input)
    return _Stats(ctx.count(block.name) + ctx.count(arguments))


def _tool_result(block: Block, ctx: _Context) -> _Stats:
    assert isinstance(block, ToolResultBlock)
    inner = sum((_BLOCK_COUNTERS[type(b)](b, ctx) for b in block.content), start=_Stats())
    return inner + _Stats(tool_round_trips=1)


def _thinking(block: Block, ctx: _Context) -> _Stats:
    assert isinstance(block, ThinkingBlock)
    return _Stats(ctx.count(block.text) if ctx.keep_thinking else 0)


def _redacted(block: Block, ctx: _Context) -> _Stats:
    return _Stats()


def _reasoning(block: Block, ctx: _Context) -> _Stats:
    assert isinstance(block, ReasoningBlock)
    return _Stats(ctx.count(block.summary) if ctx.keep_thinking else 0)


def _other(block: Block, ctx: _Context) -> _Stats:
    assert isinstance(block, OtherBlock)
    return _Stats(ctx.count(compact_json(block.raw)))


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


def _content(message: Message, ctx: _Context) -> _Stats:
    """Stats of a message's blocks; OpenAI's parallel calls of one turn as one call."""
    stats = sum((_BLOCK_COUNTERS[type(b)](b, ctx) for b in message.content), start=_Stats())
    calls = [b for b in message.content if isinstance(b, ToolUseBlock)]
    if ctx.wrap_parallel and len(calls) > 1:
        separate = sum(call_tokens(b, ctx.count) for b in calls)
        stats = stats + _Stats(parallel_calls_tokens(calls, ctx.count) - separate)
    return stats


def block_tokens(
    block: Block,
    count: TokenCounter,
    keep_thinking: bool = True,
    *,
    flavour: Flavour | None = None,
    model: str = "",
) -> _Stats:
    """Raw tokens of one block (and what in it no tokenizer can count).

    With ``flavour`` and ``model``, images and documents also carry their provider tokens
    (``fixed``); without, they are only counted.
    """
    return _BLOCK_COUNTERS[type(block)](block, _Context(count, keep_thinking, flavour, model))


def forces_tool(choice: object) -> bool:
    """Whether a tool_choice forces a tool call (Anthropic any / tool, OpenAI required / named)."""
    if isinstance(choice, str):
        return choice == "required"
    if isinstance(choice, dict):
        return choice.get("type") in ("any", "tool", "function", "allowed_tools", "custom")
    return False


def _anthropic_tools(tools: tuple[ToolDef, ...], count: TokenCounter) -> int:
    return sum(anthropic_tool_tokens(tool, count) for tool in tools)


@dataclass(frozen=True, slots=True)
class _Style:
    """How a flavour frames messages and tools."""

    per_message: int
    tool_tokens: Callable[[ToolDef, TokenCounter], int]
    tools_section: Callable[[tuple[ToolDef, ...], TokenCounter], int]
    chat_priming: bool
    system_message: bool
    """System blocks (Responses ``instructions``) are framed as one message."""


_STYLES: dict[Flavour, _Style] = {
    Flavour.OPENAI_CHAT: _Style(3, openai_tool_tokens, namespace_tokens, True, False),
    Flavour.ANTHROPIC_MESSAGES: _Style(0, anthropic_tool_tokens, _anthropic_tools, False, False),
    Flavour.OPENAI_RESPONSES: _Style(3, openai_tool_tokens, namespace_tokens, True, True),
}

_SYSTEM_ROLES = frozenset({"system", "developer"})


def _has_system(call: Call) -> bool:
    return bool(call.system) or any(m.role in _SYSTEM_ROLES for m in call.messages)


def _tool_prompt(call: Call) -> int:
    """Anthropic's tool-use system prompt, present whenever a request carries tools."""
    if call.flavour.shape is not Flavour.ANTHROPIC_MESSAGES or not call.tools:
        return 0
    return tool_prompt_tokens(call.model, forced=forces_tool(call.tool_choice))


class Serialiser:
    """Counts requests, remembering every message object it has counted.

    Keep one per trace (or per run): the memo holds references to the messages it counted.
    """

    _RECENT = 16
    """Conversations remembered for prefix reuse (interleaved agents each have one)."""
    _CALLS = 4096
    """Requests whose features are remembered (then forgotten at once: a long-lived
    serialiser keeps its memory bounded)."""

    def __init__(self) -> None:
        self._messages: dict[tuple[int, str, bool, str], tuple[Message, _Stats]] = {}
        self._tools: dict[tuple[int, str, Flavour], tuple[tuple[ToolDef, ...], int]] = {}
        self._recent: list[tuple[tuple[Message, ...], tuple[str, bool, str], _Stats]] = []
        self._calls: dict[int, tuple[Call, Features]] = {}

    def _context(self, call: Call) -> tuple[_Context, _Style]:
        style = _STYLES[call.flavour.shape]
        keep = keeps_thinking(call.model) and not style.chat_priming
        shape = call.flavour.shape
        openai = shape is not Flavour.ANTHROPIC_MESSAGES
        names = function_names(call.messages) if openai else {}
        ctx = _Context(
            counter(encoding_for(call)), keep, shape, call.model, names, wraps_parallel_calls(call)
        )
        return ctx, style

    def _history(self, call: Call, ctx: _Context, style: _Style) -> _Stats:
        """Stats of all messages, reusing the longest remembered prefix of this history."""
        messages = call.messages
        key = (ctx.count.name, ctx.keep_thinking, ctx.model)
        start, stats = 0, _Stats()
        for known, known_key, known_stats in self._recent:
            n = len(known)
            if n > start and n <= len(messages) and known_key == key and messages[:n] == known:
                start, stats = n, known_stats
        for message in messages[start:]:
            stats = stats + self._message(message, ctx, style)
        self._recent.insert(0, (messages, key, stats))
        del self._recent[self._RECENT :]
        return stats

    def _message(self, message: Message, ctx: _Context, style: _Style) -> _Stats:
        key = (id(message), ctx.count.name, ctx.keep_thinking, ctx.model)
        hit = self._messages.get(key)
        if hit is not None and hit[0] is message:
            return hit[1]
        stats = _content(message, ctx) + _Stats(self._frame(message, ctx, style))
        self._messages[key] = (message, stats)
        return stats

    @staticmethod
    def _frame(message: Message, ctx: _Context, style: _Style) -> int:
        author = result_author(message, ctx.names) if ctx.openai else None
        if author is not None:  # from functions.NAME, whatever the role and name say
            return style.per_message + ctx.count(author)
        frame = style.per_message + ctx.count(message.role)
        if message.name and style.chat_priming:
            frame += ctx.count(message.name) + 1
        return frame

    def _tools_tokens(self, call: Call, count: TokenCounter, style: _Style) -> int:
        if not call.tools:
            return 0
        key = (id(call.tools), count.name, call.flavour.shape)
        hit = self._tools.get(key)
        if hit is not None and hit[0] is call.tools:
            tokens = hit[1]
        else:
            tokens = style.tools_section(call.tools, count)
            self._tools[key] = (call.tools, tokens)
        if call.flavour.shape is Flavour.ANTHROPIC_MESSAGES:
            return tokens
        section = functions_tokens(call, tokens, system=_has_system(call))
        return section + tool_choice_tokens(call, count)

    def _system(self, call: Call, ctx: _Context, style: _Style) -> _Stats:
        stats = sum((_BLOCK_COUNTERS[type(b)](b, ctx) for b in call.system), start=_Stats())
        if call.system and style.system_message:
            stats = stats + _Stats(style.per_message + ctx.count("system"))
        return stats

    def features(self, call: Call) -> Features:
        """Raw count, rule tokens and structure features of a call's request (each request
        object counted once: a call most variants leave alone is counted for all of them)."""
        hit = self._calls.get(id(call))
        if hit is not None and hit[0] is call:
            return hit[1]
        features = self._features(call)
        if len(self._calls) >= self._CALLS:
            self._calls.clear()
        self._calls[id(call)] = (call, features)
        return features

    def _features(self, call: Call) -> Features:
        ctx, style = self._context(call)
        stats = _Stats(self._tools_tokens(call, ctx.count, style), fixed=_tool_prompt(call))
        stats = stats + self._system(call, ctx, style) + self._history(call, ctx, style)
        raw = stats.tokens
        if call.output_schema is not None:
            raw += ctx.count(compact_json(output_schema(call.output_schema)))
        if style.chat_priming:
            raw += chat_reply_priming(call.model)
        reasoning_items, reasoning_chars = passed_back_reasoning(call)
        return Features(
            raw=raw,
            messages=len(call.messages),
            tool_round_trips=stats.tool_round_trips,
            tools=len(call.tools),
            thinking=bool(call.thinking and call.thinking.enabled),
            output_schema=call.output_schema is not None,
            images=stats.images,
            documents=stats.documents,
            forced_tool=forces_tool(call.tool_choice),
            fixed=stats.fixed,
            reasoning_items=reasoning_items,
            reasoning_chars=reasoning_chars,
        )

    def positions(self, call: Call) -> tuple[Position, ...]:
        """Cumulative counts (raw plus rule tokens) at every block in prefix order."""
        ctx, style = self._context(call)
        positions: list[Position] = []
        total = _tool_prompt(call)
        section = self._tools_tokens(call, ctx.count, style)
        for index, tool in enumerate(call.tools):
            total += style.tool_tokens(tool, ctx.count)
            if index == len(call.tools) - 1:  # the section's frame closes the last tool
                total = _tool_prompt(call) + section
            positions.append(Position("tools", -1, index, total))
        if call.system and style.system_message:
            total += style.per_message + ctx.count("system")
        for index, block in enumerate(call.system):
            stats = _BLOCK_COUNTERS[type(block)](block, ctx)
            total += stats.tokens + stats.fixed
            positions.append(Position("system", -1, index, total))
        for m_index, message in enumerate(call.messages):
            total += self._frame(message, ctx, style)
            start = total
            for b_index, block in enumerate(message.content):
                stats = _BLOCK_COUNTERS[type(block)](block, ctx)
                total += stats.tokens + stats.fixed
                if b_index == len(message.content) - 1:  # the message's own count closes it
                    whole = _content(message, ctx)
                    total = start + whole.tokens + whole.fixed
                positions.append(Position("messages", m_index, b_index, total))
        return tuple(positions)


def serialise(call: Call) -> Features:
    """Features of one call, without memo across calls (use a :class:`Serialiser` for traces)."""
    return Serialiser().features(call)
