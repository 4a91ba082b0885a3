"""The static/dynamic split of ``caching``: system text that changes between calls of one
agent (a timestamp line, a running summary, a count of open tickets) moved after the text
that does not, so the changing part stops invalidating the cached prefix.

Calls of one agent are those whose system text opens alike (its first 120 characters). Among
an agent's distinct system texts, the static part is the whole lines every one of them opens
with (the head) and the whole lines every one of them ends with (the tail); what lies
between, in each, changes. The split request sends the head, then the tail,
then its changing lines: where a timestamp sits near the top of a long prompt, the rules
after it are static too, and cached with the head. Lines between two changing ones are moved
with them (each text is cut in one place, not diffed line by line).
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from costsim.model import Block, CacheControl, Call, Flavour, Message, TextBlock

__all__ = ["SystemSplit", "agent_key", "system_splits", "system_text"]

MIN_STATIC_CHARS = 200
"""A split needs this much static text (shorter, it would not reach a model's minimum)."""
_AGENT_KEY_CHARS = 120


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


@dataclass(frozen=True, slots=True)
class SystemSplit:
    """An agent's static system text: the lines every call opens with and ends with."""

    head: str
    tail: str

    @property
    def static(self) -> str:
        return self.head + self.tail

    def changing(self, text: str) -> str | None:
        """What changes in ``text`` (between the head and the tail); None when ``text`` is
        not laid out so (a short prompt whose opening only looks like the agent's)."""
        if len(text) < len(self.head) + len(self.tail):
            return None
        if not (text.startswith(self.head) and text.endswith(self.tail)):
            return None
        return text[len(self.head) : len(text) - len(self.tail)]

    def apply(self, call: Call, changing: str, mark: CacheControl | None) -> Call:
        """``call`` sending its static text (with ``mark`` at its end), then ``changing``.
        A prompt whose last line has no line end keeps its lines apart: the changing text's
        own last line end goes between them (the same characters, in another order)."""
        static = self.static
        if self.tail and not static.endswith("\n") and changing.endswith("\n"):
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


def _common_prefix(texts: list[str]) -> int:
    """The length of the text every one of ``texts`` opens with."""
    ordered = sorted(texts)
    first, last = ordered[0], ordered[-1]
    common = 0
    while common < min(len(first), len(last)) and first[common] == last[common]:
        common += 1
    return common


def _head(texts: list[str]) -> str:
    """The whole lines every text opens with; of one-line texts, what they open with."""
    common = _common_prefix(texts)
    first = texts[0]
    cut = first.rfind("\n", 0, common)  # a line end inside what they share, not after it
    if cut >= 0:
        return first[: cut + 1]
    return "" if any("\n" in text for text in texts) else first[:common]


def _tail(texts: list[str], head: str) -> str:
    """The whole lines every text ends with, beyond ``head`` in each."""
    common = _common_prefix([text[::-1] for text in texts])
    room = min(len(text) for text in texts) - len(head)
    size = min(common, room) if room > 0 else 0
    candidate = texts[0][len(texts[0]) - size :] if size else ""
    if size and all(len(text) == size or text[-size - 1] == "\n" for text in texts):
        return candidate  # it starts a line in every text
    start = candidate.find("\n")  # else it starts inside a changing line: from the next one
    return candidate[start + 1 :] if start >= 0 else ""


def system_splits(calls: Iterable[Call]) -> dict[str, SystemSplit]:
    """Per agent (:func:`agent_key`), the split of calls whose system text changes; agents
    whose system text never changes, or whose static part is short, are left out."""
    groups: dict[str, set[str]] = defaultdict(set)
    for call in calls:
        text = system_text(call)
        if text and len(text) > MIN_STATIC_CHARS:
            groups[agent_key(text)].add(text)
    splits: dict[str, SystemSplit] = {}
    for key, distinct in groups.items():
        if len(distinct) < 2:
            continue
        texts = sorted(distinct)
        head = _head(texts)
        split = SystemSplit(head, _tail(texts, head))
        if len(split.static) >= MIN_STATIC_CHARS:
            splits[key] = split
    return splits
