"""Content classes: what a request carries, by how well its tokens can be estimated.

A call has one class, the weakest part of its estimate winning: ``documents`` (PDF page
rendering), then ``images`` (pixel rules, unknown sizes for URLs), ``reasoning`` (thinking
enabled, or thinking / reasoning items passed back), ``tools`` (definitions, calls, results),
and ``text``. Validation reports errors per flavour and class, and the meter's per-call error
estimate is looked up by the same pair.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from collections.abc import Set as AbstractSet

from costsim.model import Block, Call, Flavour, ToolResultBlock

__all__ = ["CONTENT_CLASSES", "content_blocks", "content_class", "delta_class", "is_recipe"]

CONTENT_CLASSES = ("text", "tools", "images", "documents", "reasoning")

_REASONING_KINDS = frozenset({"thinking", "redacted_thinking", "reasoning"})


def content_blocks(call: Call) -> Iterator[Block]:
    """Every block of a request: system, messages, and what tool results carry."""
    yield from call.system
    for message in call.messages:
        for block in message.content:
            yield block
            if isinstance(block, ToolResultBlock):
                yield from block.content


def content_class(call: Call) -> str:
    """The class of a call's request (see the module docstring for the precedence)."""
    kinds = {block.kind for block in content_blocks(call)}
    return _class_of(kinds, bool(call.thinking and call.thinking.enabled), bool(call.tools))


def delta_class(original: Call, transformed: Call) -> str:
    """The class of what differs between two requests: the blocks one has and the other has
    not (a system prompt grown by a paragraph of text is a text change, whatever else the
    request carries), with tool definitions and thinking settings; the transformed request's
    own class when only the model or cache markers differ."""
    before, after = list(content_blocks(original)), list(content_blocks(transformed))
    ids_before, ids_after = {id(b) for b in before}, {id(b) for b in after}
    # requests parsed apart hold equal blocks, not the same ones: paired off by value
    added = Counter(_value(b) for b in after if id(b) not in ids_before)
    removed = Counter(_value(b) for b in before if id(b) not in ids_after)
    kinds = {kind for kind, _ in (added - removed) + (removed - added)}
    thinking = original.thinking != transformed.thinking
    tools = original.tools != transformed.tools
    if not kinds and not thinking and not tools:
        return content_class(transformed)
    return _class_of(kinds, thinking, tools)


def _value(block: Block) -> tuple[str, object]:
    """A block's kind and what compares it: itself, or its ``repr`` when it holds a mapping
    (a tool call's input)."""
    try:
        hash(block)
    except TypeError:
        return block.kind, repr(block)
    return block.kind, block


def _class_of(kinds: AbstractSet[str], thinking: bool, tools: bool) -> str:
    if "document" in kinds:
        return "documents"
    if "image" in kinds:
        return "images"
    if thinking or kinds & _REASONING_KINDS:
        return "reasoning"
    if tools or kinds & {"tool_use", "tool_result"}:
        return "tools"
    return "text"


def is_recipe(call: Call) -> bool:
    """An OpenAI request the cookbook recipe and the media rules count on their own: no tools,
    no tool calls, no output schema, no reasoning passed back."""
    if (
        call.flavour.shape is Flavour.ANTHROPIC_MESSAGES
        or call.tools
        or call.output_schema is not None
    ):
        return False
    kinds = {block.kind for block in content_blocks(call)}
    return not kinds & (_REASONING_KINDS | {"tool_use", "tool_result"})
