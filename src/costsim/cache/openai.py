"""OpenAI's automatic prompt caching (DESIGN.md section 5).

Prompts of 1,024 tokens or more are cached automatically; a later request reads the longest
cached prefix it shares, reported in 128-token increments (GPT-5.6 and later, which bill
writes, read back exactly what they wrote). Entries live for the model's retention.

The match is token by token, not block by block: a request whose text extends a cached one
(a Responses ``input`` string grown by a question, a tool result a variant cut after its
head) reads the cached prefix up to where the two texts part, its tokens in proportion to
the characters shared.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from costsim.cache.prefix import Prefix
from costsim.cache.results import CacheResult, Entry, RuleNote, Write
from costsim.cache.rules import CacheRules

__all__ = ["OpenAICache", "shared_chars", "tokens_into"]


def _before_last_turn(prefix: Prefix) -> int:
    """Tokens up to the end of the previous turn: what an automatic write can reuse."""
    tokens = [b.tokens for b in prefix.blocks]
    return tokens[-2] if len(tokens) > 1 else 0


TEXTS_KEPT = 32
"""Cached texts remembered at one place of a prefix (the most recent): a request is matched
against each, so a trace of thousands of questions after one system prompt stays linear."""


@dataclass(frozen=True, slots=True)
class _Text:
    """A cached text block: where its prefix entry is, and what it said."""

    key: str
    text: str
    start: int
    """Tokens before it."""


def shared_chars(a: str, b: str) -> int:
    """Characters ``a`` and ``b`` open with alike (a binary search over slices: the string
    comparisons run in C, a 40,000-character page in 16 of them)."""
    low, high = 0, min(len(a), len(b))
    if a[:high] == b[:high]:
        return high
    while low < high:
        middle = (low + high + 1) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def tokens_into(start: int, end: int, chars: int, length: int) -> int:
    """The prompt position ``chars`` characters into a text of ``length`` characters that
    spans tokens ``start`` to ``end``: its tokens in proportion to the characters."""
    return start + (end - start) * chars // length


@dataclass(slots=True)
class OpenAICache:
    """Automatic caching: prompts of 1,024+ tokens, matched in 128-token increments."""

    rules: CacheRules
    entries: dict[str, Entry] = field(default_factory=dict)
    texts: dict[str, list[_Text]] = field(default_factory=dict)
    """Cached text blocks by what precedes them (:attr:`PrefixBlock.head`)."""

    def seed(
        self,
        key: str,
        tokens: int,
        *,
        at: float,
        ttl: str = "retention",
        label: str = "warm start",
        exact: bool = True,
    ) -> None:
        seconds = float(self.rules.ttl_seconds.get(ttl, 600))
        self.entries[key] = Entry(tokens, seconds, at, at + seconds, label, exact, ttl)

    def readable(self, key: str, at: float) -> bool:
        entry = self.entries.get(key)
        return entry is not None and entry.readable(at)

    def request(
        self, prefix: Prefix, *, model: str, at: float, when: datetime | None
    ) -> CacheResult:
        retention = float(self.rules.retention(model, when))
        matched = None
        for position in range(len(prefix.blocks) - 1, -1, -1):
            if self.readable(prefix.blocks[position].key, at):
                matched = position
                break
        step = self.rules.openai_granularity(model, when)
        minimum = self.rules.openai_minimum
        matched_tokens, label, exact = 0, None, True
        if matched is not None:
            block = prefix.blocks[matched]
            entry = self.entries[block.key]
            matched_tokens = min(block.tokens, entry.tokens)
            label = entry.label
            exact = entry.exact if matched_tokens == entry.tokens else block.exact
            entry.expires = at + entry.ttl
        within = self._within(prefix, matched, at)
        if within is not None and within[0] > matched_tokens:
            matched_tokens, entry = within
            label, exact = entry.label, False
            entry.expires = at + entry.ttl
        read = (matched_tokens // step) * step if matched_tokens >= minimum else 0
        rules = self._diagnose(prefix, matched, at)
        write = 0
        if prefix.total >= minimum:
            for index, block in enumerate(prefix.blocks):
                if block.key not in self.entries or not self.entries[block.key].readable(at):
                    self.entries[block.key] = Entry(
                        block.tokens, retention, at, at + retention, "automatic", block.exact,
                        "retention",
                    )  # fmt: skip
                    if block.text:
                        start = prefix.blocks[index - 1].tokens if index else 0
                        kept = self.texts.setdefault(block.head, [])
                        kept.append(_Text(block.key, block.text, start))
                        del kept[:-TEXTS_KEPT]
            if self.rules.openai_bills_writes(model, when):
                explicit = prefix.breakpoints()
                end = prefix.blocks[explicit[-1]].tokens if explicit else _before_last_turn(prefix)
                write = max(0, end - read)
        writes = (Write("automatic", write, "5m"),) if write else ()
        return CacheResult(
            read=read,
            write_5m=write,
            hit_block=matched,
            rules=rules,
            read_label=label if read else None,
            read_exact=exact,
            writes=writes,
        )

    def _within(self, prefix: Prefix, matched: int | None, at: float) -> tuple[int, Entry] | None:
        """The tokens of the block after the last one matched whole that a cached text at its
        place shares (in proportion to the characters shared, and no more than that text's
        own entry counted), and that entry; None when none shares any."""
        index = 0 if matched is None else matched + 1
        if index >= len(prefix.blocks) or not prefix.blocks[index].text:
            return None
        block = prefix.blocks[index]
        start = prefix.blocks[index - 1].tokens if index else 0
        best: tuple[int, Entry] | None = None
        for cached in self.texts.get(block.head, ()):
            entry = self.entries.get(cached.key)
            if entry is None or not entry.readable(at) or cached.key == block.key:
                continue
            shared = shared_chars(cached.text, block.text)
            if not shared:
                continue
            tokens = min(  # no further than the cached text's own entry counted
                tokens_into(start, block.tokens, shared, len(block.text)),
                tokens_into(cached.start, entry.tokens, shared, len(cached.text)),
            )
            if best is None or tokens > best[0]:
                best = (tokens, entry)
        return best

    def _diagnose(self, prefix: Prefix, matched: int | None, at: float) -> tuple[RuleNote, ...]:
        floor = -1 if matched is None else matched
        for position in range(len(prefix.blocks) - 1, floor, -1):
            entry = self.entries.get(prefix.blocks[position].key)
            if entry is not None and entry.expires < at:
                return (
                    RuleNote(
                        "ttl",
                        f"the {entry.tokens:,}-token prefix cached {at - entry.created:,.0f} s "
                        f"earlier had left the cache ({entry.ttl:,.0f} s retention)",
                    ),
                )
        return ()

    def warm_seed(
        self, prefix: Prefix, read: int, at: float, *, model: str, when: datetime | None,
        tolerance: float,
    ) -> tuple[str, int, str] | None:  # fmt: skip
        """A recorded read the cache cannot explain (by more than ``tolerance``): the prefix
        was cached up to ``read`` tokens, inside the first block that reaches that far. None
        when the trace itself cached that prefix before (an expiry is not a warm start)."""
        explained, last = 0, None
        for index, block in enumerate(prefix.blocks):
            if self.readable(block.key, at):
                explained = max(explained, min(block.tokens, self.entries[block.key].tokens))
                last = index
        within = self._within(prefix, last, at)
        if within is not None:
            explained = max(explained, within[0])
        if read - explained <= tolerance:
            return None
        reaching = next((b for b in prefix.blocks if b.tokens >= read), None)
        if reaching is None or reaching.key in self.entries:
            return None
        return reaching.key, read, "retention"
