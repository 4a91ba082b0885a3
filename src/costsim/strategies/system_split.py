"""The static/dynamic split of ``caching``: system text that changes between calls of one
agent (a timestamp line, a running summary, a count of open tickets) moved after the text
that does not, so the changing part stops invalidating the cached prefix.

Calls of one agent are those whose system text opens alike (its first 120 characters; see
:func:`system_splits` for prompts that open with a date). Among
an agent's distinct system texts, the static part is the lines every one of them holds, in
the same order (matched line by line, as ``difflib`` matches sequences); the rest of each text
changes. The split request sends the static lines, then its own changing ones, each in the
order it had them: a timestamp near the top and a ticket count in the middle of a long prompt
move, and the rules around them are cached whole.
"""

from __future__ import annotations

import dataclasses
import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from difflib import SequenceMatcher
from functools import lru_cache

from costsim.model import Block, CacheControl, Call, Flavour, Message, TextBlock

__all__ = ["SystemSplit", "agent_key", "opening", "system_splits", "system_text"]

MIN_STATIC_CHARS = 200
"""A split needs this much static text (shorter, it would not reach a model's minimum)."""
_AGENT_KEY_CHARS = 120
_DIGITS = re.compile(r"\d")
_MOSTLY = 0.5
"""Prompts that open alike but for digits are one agent when at least this share of the
shortest is lines they all send."""


def system_text(call: Call) -> str | None:
    """The system prompt when it is plain text (Anthropic system blocks; OpenAI's first
    system/developer message)."""
    if call.flavour is Flavour.OPENAI_CHAT:
        first = call.messages[0] if call.messages else None
        if first is None or first.role not in ("system", "developer"):
            return None
        blocks = first.content
    else:
        blocks = call.system
    if not blocks or not all(isinstance(b, TextBlock) for b in blocks):
        return None
    return "".join(b.text for b in blocks if isinstance(b, TextBlock))


def agent_key(text: str) -> str:
    """What names an agent: its system text's opening. (Digits count: two workers whose
    prompts open alike but for their number are two agents, each with its own split.)"""
    return text[:_AGENT_KEY_CHARS]


def opening(text: str) -> str:
    """An agent's opening with its digits masked: prompts that open with a date or a count
    (``Today is 2025-11-03.``) open alike by it."""
    return _DIGITS.sub("#", agent_key(text))


@dataclass(frozen=True, slots=True)
class SystemSplit:
    """An agent's static system text (the lines every call sends, in order), and what
    changes in each of its distinct texts."""

    static: str
    parts: dict[str, str]
    """Each distinct system text of the agent -> its changing lines, in order."""

    def changing(self, text: str) -> str | None:
        """What changes in ``text``; None when it is not one of the agent's texts (a short
        prompt whose opening only looks like the agent's)."""
        return self.parts.get(text)

    def apply(self, call: Call, changing: str, mark: CacheControl | None) -> Call:
        """``call`` sending the static text (with ``mark`` at its end), then ``changing``.
        A prompt whose last line has no line end keeps its lines apart: the changing text's
        own last line end goes between them (the same characters, in another order)."""
        static = self.static
        if not static.endswith("\n") and changing.endswith("\n"):
            static, changing = static + "\n", changing[:-1]
        if call.flavour is Flavour.OPENAI_CHAT:
            first = call.messages[0]
            split = (
                Message(first.role, (TextBlock(static),)),
                Message(first.role, (TextBlock(changing),)),
            )
            return dataclasses.replace(call, messages=(*split, *call.messages[1:]))
        blocks: tuple[Block, ...] = (TextBlock(static, cache_control=mark), TextBlock(changing))
        return dataclasses.replace(call, system=blocks)


@lru_cache(maxsize=256)
def _split(texts: tuple[str, ...]) -> SystemSplit | None:
    """The split of one agent's distinct texts (sorted): once per set of texts, however many
    variants place breakpoints on the trace."""
    lines = [text.splitlines(keepends=True) for text in texts]
    base = lines[0]
    static = set(range(len(base)))
    places: list[dict[int, int]] = []  # per other text: its line matched to each base line
    for other in lines[1:]:
        matcher = SequenceMatcher(None, base, other, autojunk=False)
        matched = {
            a + k: b + k for a, b, size in matcher.get_matching_blocks() for k in range(size)
        }
        static &= matched.keys()
        places.append(matched)
    order = sorted(static)
    text = "".join(base[i] for i in order)
    if len(text) < MIN_STATIC_CHARS:
        return None
    held = [set(order), *({matched[i] for i in order} for matched in places)]
    parts = {
        source: "".join(line for index, line in enumerate(own) if index not in kept)
        for source, own, kept in zip(texts, lines, held, strict=True)
    }
    return SystemSplit(text, parts)


def system_splits(calls: Iterable[Call]) -> dict[str, SystemSplit]:
    """Per agent (:func:`agent_key`), the split of calls whose system text changes; agents
    whose system text never changes, or whose static part is short, are left out.

    A prompt whose opening changes (``Today is 2025-11-03.``) opens unlike every other: such
    prompts, alone under their openings, are one agent when they open alike but for digits
    and most of their text is the same lines (two workers numbered 1 and 2, each with its own
    rules, are not)."""
    groups: dict[str, set[str]] = defaultdict(set)
    for call in calls:
        text = system_text(call)
        if text and len(text) > MIN_STATIC_CHARS:
            groups[agent_key(text)].add(text)
    splits: dict[str, SystemSplit] = {}
    alone: dict[str, set[str]] = defaultdict(set)
    for key, distinct in groups.items():
        if len(distinct) < 2:
            alone[opening(key)] |= distinct
            continue
        split = _split(tuple(sorted(distinct)))
        if split is not None:
            splits[key] = split
    for distinct in alone.values():
        split = _split(tuple(sorted(distinct))) if len(distinct) > 1 else None
        if split is not None and len(split.static) >= min(map(len, distinct)) * _MOSTLY:
            splits.update((agent_key(text), split) for text in distinct)
    return splits
