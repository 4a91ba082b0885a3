"""Counts of request blocks with an offline tokenizer: each block kind's raw tokens, the
tokens documented provider rules add to it (``fixed``: images, PDF pages) and the structure
it adds (tool round trips, images, documents), in the context of one request (its tokenizer,
provider, model and the framing rules that depend on them)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from costsim.metering.media import document_overhead, image_tokens
from costsim.metering.openai_framing import call_tokens, parallel_calls_tokens
from costsim.metering.signatures import compact_json
from costsim.metering.tokenizers import TokenCounter
from costsim.model import (
    Block,
    DocumentBlock,
    Flavour,
    ImageBlock,
    Message,
    OtherBlock,
    ReasoningBlock,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)

__all__ = [
    "BLOCK_COUNTERS",
    "BlockCounter",
    "BlockMemo",
    "BlockStats",
    "CountContext",
    "block_tokens",
    "content_stats",
]


@dataclass(frozen=True, slots=True)
class BlockStats:
    """Additive counts of a run of blocks."""

    tokens: int = 0
    tool_round_trips: int = 0
    images: int = 0
    documents: int = 0
    fixed: int = 0

    def __add__(self, other: BlockStats) -> BlockStats:
        return BlockStats(
            self.tokens + other.tokens,
            self.tool_round_trips + other.tool_round_trips,
            self.images + other.images,
            self.documents + other.documents,
            self.fixed + other.fixed,
        )


@dataclass(frozen=True, slots=True)
class CountContext:
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


BlockCounter = Callable[[Block, CountContext], BlockStats]


def _text(block: Block, ctx: CountContext) -> BlockStats:
    assert isinstance(block, TextBlock)
    return BlockStats(ctx.count(block.text))


def _image(block: Block, ctx: CountContext) -> BlockStats:
    assert isinstance(block, ImageBlock)
    fixed = image_tokens(block, ctx.flavour, ctx.model) if ctx.flavour else 0
    return BlockStats(images=1, fixed=fixed)


def _document(block: Block, ctx: CountContext) -> BlockStats:
    assert isinstance(block, DocumentBlock)
    fixed = document_overhead(block, ctx.flavour, ctx.model) if ctx.flavour else 0
    return BlockStats(ctx.count(block.text), documents=0 if block.text else 1, fixed=fixed)


def _tool_use(block: Block, ctx: CountContext) -> BlockStats:
    assert isinstance(block, ToolUseBlock)
    if ctx.openai:  # addressed to=functions.NAME (see openai_framing)
        return BlockStats(call_tokens(block, ctx.count))
    arguments = block.input if isinstance(block.input, str) else compact_json(block.input)
    return BlockStats(ctx.count(block.name) + ctx.count(arguments))


def _tool_result(block: Block, ctx: CountContext) -> BlockStats:
    assert isinstance(block, ToolResultBlock)
    inner = sum((BLOCK_COUNTERS[type(b)](b, ctx) for b in block.content), start=BlockStats())
    return inner + BlockStats(tool_round_trips=1)


def _thinking(block: Block, ctx: CountContext) -> BlockStats:
    assert isinstance(block, ThinkingBlock)
    return BlockStats(ctx.count(block.text) if ctx.keep_thinking else 0)


def _redacted(block: Block, ctx: CountContext) -> BlockStats:
    return BlockStats()


def _reasoning(block: Block, ctx: CountContext) -> BlockStats:
    assert isinstance(block, ReasoningBlock)
    return BlockStats(ctx.count(block.summary) if ctx.keep_thinking else 0)


def _other(block: Block, ctx: CountContext) -> BlockStats:
    assert isinstance(block, OtherBlock)
    return BlockStats(ctx.count(compact_json(block.raw)))


BLOCK_COUNTERS: dict[type, BlockCounter] = {
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


BlockMemo = dict[tuple[int, str, bool, "Flavour | None", str], tuple[Block, BlockStats]]
"""Stats of blocks counted already, by block object and what of the context counts them."""


def content_stats(
    message: Message, ctx: CountContext, memo: BlockMemo | None = None
) -> tuple[BlockStats, tuple[int, ...]]:
    """Stats of a message's blocks (OpenAI's parallel calls of one turn as one call), and the
    count after each block from the message's start (its frame not included: the message's
    own count closes it), in one pass over the blocks. ``memo`` keeps the stats of blocks
    other than text (whose counting renders JSON: tool calls and results, server blocks): a
    strategy that marks or cuts one block of a message makes a new message of the same
    other blocks."""
    stats = BlockStats()
    offsets: list[int] = []
    for block in message.content:
        kind = type(block)
        if memo is None or kind is TextBlock:
            stats = stats + BLOCK_COUNTERS[kind](block, ctx)
        else:
            key = (id(block), ctx.count.name, ctx.keep_thinking, ctx.flavour, ctx.model)
            hit = memo.get(key)
            if hit is None or hit[0] is not block:
                hit = memo[key] = (block, BLOCK_COUNTERS[kind](block, ctx))
            stats = stats + hit[1]
        offsets.append(stats.tokens + stats.fixed)
    calls = [b for b in message.content if isinstance(b, ToolUseBlock)]
    if ctx.wrap_parallel and len(calls) > 1:
        separate = sum(call_tokens(b, ctx.count) for b in calls)
        stats = stats + BlockStats(parallel_calls_tokens(calls, ctx.count) - separate)
        offsets[-1] = stats.tokens + stats.fixed
    return stats, tuple(offsets)


def block_tokens(
    block: Block,
    count: TokenCounter,
    keep_thinking: bool = True,
    *,
    flavour: Flavour | None = None,
    model: str = "",
) -> BlockStats:
    """Raw tokens of one block (and what in it no tokenizer can count).

    With ``flavour`` and ``model``, images and documents also carry their provider tokens
    (``fixed``); without, they are only counted.
    """
    return BLOCK_COUNTERS[type(block)](block, CountContext(count, keep_thinking, flavour, model))
