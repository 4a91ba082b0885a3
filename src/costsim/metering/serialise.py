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

from collections.abc import Callable
from dataclasses import dataclass

from costsim.metering.block_counts import (
    BLOCK_COUNTERS,
    BlockMemo,
    BlockStats,
    CountContext,
    block_tokens,
    content_stats,
)
from costsim.metering.features import Features, Position
from costsim.metering.models import (
    chat_reply_priming,
    encoding_for,
    keeps_thinking,
    tool_prompt_tokens,
    wraps_parallel_calls,
)
from costsim.metering.openai_framing import (
    function_names,
    functions_tokens,
    namespace_tokens,
    output_schema,
    passed_back_reasoning,
    result_author,
    tool_choice_tokens,
)
from costsim.metering.signatures import anthropic_tool_tokens, compact_json, openai_tool_tokens
from costsim.metering.tokenizers import TokenCounter, counter
from costsim.model import (
    Call,
    Flavour,
    Message,
    ToolDef,
)

__all__ = [
    "Features",
    "Position",
    "Serialiser",
    "block_tokens",
    "forces_tool",
    "serialise",
    "tool_prompt",
]


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


def tool_prompt(call: Call) -> int:
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
        self._messages: dict[
            tuple[int, str, bool, str, Flavour | None, bool],
            tuple[Message, BlockStats, tuple[int, ...]],
        ] = {}
        self._tools: dict[tuple[int, str, Flavour], tuple[tuple[ToolDef, ...], int]] = {}
        self._tool_counts: dict[tuple[int, str, object], tuple[ToolDef, int]] = {}
        self._blocks: BlockMemo = {}
        self._recent: list[tuple[tuple[Message, ...], tuple[str, bool, str], BlockStats]] = []
        self._calls: dict[int, tuple[Call, Features]] = {}

    def _context(self, call: Call) -> tuple[CountContext, _Style]:
        style = _STYLES[call.flavour.shape]
        keep = keeps_thinking(call.model) and not style.chat_priming
        shape = call.flavour.shape
        openai = shape is not Flavour.ANTHROPIC_MESSAGES
        names = function_names(call.messages) if openai else {}
        ctx = CountContext(
            counter(encoding_for(call)), keep, shape, call.model, names, wraps_parallel_calls(call)
        )
        return ctx, style

    def _history(self, call: Call, ctx: CountContext, style: _Style) -> BlockStats:
        """Stats of all messages, reusing the longest remembered prefix of this history."""
        messages = call.messages
        key = (ctx.count.name, ctx.keep_thinking, ctx.model)
        start, stats = 0, BlockStats()
        for known, known_key, known_stats in self._recent:
            n = len(known)
            if n > start and n <= len(messages) and known_key == key and messages[:n] == known:
                start, stats = n, known_stats
        for message in messages[start:]:
            stats = stats + self._message(message, ctx, style)
        self._recent.insert(0, (messages, key, stats))
        del self._recent[self._RECENT :]
        return stats

    def _message(self, message: Message, ctx: CountContext, style: _Style) -> BlockStats:
        return self._counted(message, ctx)[0] + BlockStats(self._frame(message, ctx, style))

    def _counted(self, message: Message, ctx: CountContext) -> tuple[BlockStats, tuple[int, ...]]:
        """A message's content stats and block offsets (see :func:`content_stats`), each
        message object counted once: a conversation's calls resend every earlier message (the
        same objects, see :mod:`costsim.model.sharing`), and features and prefix positions
        both read them."""
        key = (
            id(message),
            ctx.count.name,
            ctx.keep_thinking,
            ctx.model,
            ctx.flavour,
            ctx.wrap_parallel,
        )
        hit = self._messages.get(key)
        if hit is not None and hit[0] is message:
            return hit[1], hit[2]
        stats, offsets = content_stats(message, ctx, self._blocks)
        self._messages[key] = (message, stats, offsets)
        return stats, offsets

    @staticmethod
    def _frame(message: Message, ctx: CountContext, style: _Style) -> int:
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

    def _tool(self, tool: ToolDef, count: TokenCounter, style: _Style) -> int:
        """One tool's tokens, each tool object rendered and counted once: an agent sends the
        same 40 tools with every request, and every request's positions count them."""
        key = (id(tool), count.name, style.tool_tokens)
        hit = self._tool_counts.get(key)
        if hit is not None and hit[0] is tool:
            return hit[1]
        tokens = style.tool_tokens(tool, count)
        self._tool_counts[key] = (tool, tokens)
        return tokens

    def _system(self, call: Call, ctx: CountContext, style: _Style) -> BlockStats:
        stats = sum((BLOCK_COUNTERS[type(b)](b, ctx) for b in call.system), start=BlockStats())
        if call.system and style.system_message:
            stats = stats + BlockStats(style.per_message + ctx.count("system"))
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
        stats = BlockStats(self._tools_tokens(call, ctx.count, style), fixed=tool_prompt(call))
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
        total = tool_prompt(call)
        section = self._tools_tokens(call, ctx.count, style)
        for index, tool in enumerate(call.tools):
            total += self._tool(tool, ctx.count, style)
            if index == len(call.tools) - 1:  # the section's frame closes the last tool
                total = tool_prompt(call) + section
            positions.append(Position("tools", -1, index, total))
        if call.system and style.system_message:
            total += style.per_message + ctx.count("system")
        for index, block in enumerate(call.system):
            stats = BLOCK_COUNTERS[type(block)](block, ctx)
            total += stats.tokens + stats.fixed
            positions.append(Position("system", -1, index, total))
        for m_index, message in enumerate(call.messages):
            total += self._frame(message, ctx, style)
            start = total
            for b_index, offset in enumerate(self._counted(message, ctx)[1]):
                total = start + offset
                positions.append(Position("messages", m_index, b_index, total))
        return tuple(positions)


def serialise(call: Call) -> Features:
    """Features of one call, without memo across calls (use a :class:`Serialiser` for traces)."""
    return Serialiser().features(call)
