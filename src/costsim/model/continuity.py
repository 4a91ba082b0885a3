"""Whether one request continues another's conversation, cache breakpoints aside.

A client that caches with a rolling breakpoint marks the last message of every request
(``cache_control``) and, on the next turn, marks the new last message instead: the message
that carried the marker is sent again without it. The conversation is the same, and what
is cached is the same (a marker does not change the content), so continuity is judged on
the messages with their markers taken off.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from costsim.model.blocks import Block, Message

__all__ = ["continues", "same_message"]


def _unmarked(block: Block) -> Block:
    return block if block.cache_control is None else dataclasses.replace(block, cache_control=None)


def same_message(first: Message, second: Message) -> bool:
    """The two messages are equal, or would be without their cache breakpoints."""
    if first is second or first == second:
        return True
    if (first.role, first.name, len(first.content)) != (
        second.role,
        second.name,
        len(second.content),
    ):
        return False
    return all(
        a is b or _unmarked(a) == _unmarked(b)
        for a, b in zip(first.content, second.content, strict=True)
    )


def continues(earlier: Sequence[Message], later: Sequence[Message]) -> bool:
    """``later`` begins with every message of ``earlier`` (breakpoints aside)."""
    count = len(earlier)
    if len(later) < count:
        return False
    if tuple(later[:count]) == tuple(earlier):  # the common case, compared in C
        return True
    return all(same_message(a, b) for a, b in zip(earlier, later, strict=False))
