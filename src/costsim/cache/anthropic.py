"""Anthropic's explicit prompt caching (DESIGN.md section 4), rule by rule.

Breakpoints write the prefix up to them; a read looks back up to 20 blocks from each
breakpoint for a live entry; at most 4 breakpoints count; 1h entries must precede 5m ones;
a prefix below the model's minimum is silently not cached; a hit refreshes the entry's TTL.
Every rule that decides something is reported with the result (:class:`RuleNote`), including
entries a request just missed, so that a recording which breaks a rule is named as such.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from costsim.cache.prefix import Prefix
from costsim.cache.results import CacheResult, Entry, RuleNote, Write
from costsim.cache.rules import CacheRules
from costsim.model.quoting import model_family, short_name

__all__ = ["AnthropicCache"]


def _ttl(prefix: Prefix, index: int) -> str:
    breakpoint = prefix.blocks[index].breakpoint
    return breakpoint.ttl if breakpoint is not None else "5m"


@dataclass(slots=True)
class AnthropicCache:
    """Explicit caching: breakpoints write, reads look back up to 20 blocks from each."""

    rules: CacheRules
    entries: dict[str, Entry] = field(default_factory=dict)
    marked: set[str] = field(default_factory=set)
    """Keys an earlier request of the trace put under a breakpoint (written or not)."""

    def seed(
        self,
        key: str,
        tokens: int,
        *,
        at: float,
        ttl: str = "5m",
        label: str = "warm start",
        exact: bool = True,
    ) -> None:
        seconds = self.rules.ttl_seconds[ttl]
        self.entries[key] = Entry(tokens, seconds, at, at + seconds, label, exact, ttl)

    def readable(self, key: str, at: float) -> bool:
        entry = self.entries.get(key)
        return entry is not None and entry.readable(at)

    def _kept(self, prefix: Prefix, rules: list[RuleNote] | None = None) -> list[int]:
        marked = prefix.breakpoints()
        limit = self.rules.anthropic_max_breakpoints
        if len(marked) > limit and rules is not None:
            ignored = ", ".join(prefix.blocks[i].label for i in marked[limit:])
            rules.append(
                RuleNote(
                    "breakpoints",
                    f"{len(marked)} cache breakpoints: the API accepts {limit}; "
                    f"the rest ({ignored}) cache nothing",
                )
            )
        return marked[:limit]

    def _ttls(self, prefix: Prefix, kept: list[int], rules: list[RuleNote]) -> dict[int, str]:
        """Each breakpoint's TTL; a 1h one after a 5m one is billed as 5m (the API requires
        1h entries first)."""
        ttls: dict[int, str] = {}
        seen_5m = False
        for index in kept:
            ttl = _ttl(prefix, index)
            if ttl == "1h" and seen_5m:
                rules.append(
                    RuleNote(
                        "ttl-order",
                        f"a 1h breakpoint ({prefix.blocks[index].label}) follows a 5m one: "
                        "the API requires 1h entries first",
                    )
                )
                ttl = "5m"
            seen_5m = seen_5m or ttl == "5m"
            ttls[index] = ttl
        return ttls

    def request(
        self, prefix: Prefix, *, model: str, at: float, when: datetime | None
    ) -> CacheResult:
        rules: list[RuleNote] = []
        kept = self._kept(prefix, rules)
        if not kept:
            return CacheResult(notes=tuple(r.message for r in rules), rules=tuple(rules))
        ttls = self._ttls(prefix, kept, rules)
        hit = self._best_hit(prefix, kept, at)
        read, read_label, read_exact = 0, None, True
        if hit is not None:
            block = prefix.blocks[hit]
            entry = self.entries[block.key]
            entry.expires = at + entry.ttl  # a hit refreshes the lifetime at no cost
            # the same content has one length: a hit reads what was written, even where two
            # estimates of the prefix disagree by a few tokens (and is as exact as the write)
            read = min(entry.tokens, prefix.blocks[-1].tokens)  # never past the last block
            read_label = entry.label
            read_exact = entry.exact if read == entry.tokens else block.exact
        minimum = self.rules.minimum(model, when)
        beyond = [i for i in kept if hit is None or i > hit]
        written = [i for i in beyond if prefix.blocks[i].tokens >= minimum]
        short = [i for i in beyond if prefix.blocks[i].tokens < minimum]
        notes = [r.message for r in rules]
        if short:
            block = prefix.blocks[short[-1]]
            rules.append(
                RuleNote(
                    "minimum",
                    f"the {block.tokens:,}-token prefix at the {block.label} breakpoint is "
                    f"below the {minimum:,}-token minimum for {short_name(model)}: not cached",
                )
            )
            if not written and hit is None:
                named = model_family(model)  # one note for a snapshot and its alias
                notes.append(
                    f"prefix shorter than the {minimum:,}-token minimum for {named}: not cached"
                )
        self._diagnose(prefix, kept, hit, at, rules)
        writes: list[Write] = []
        boundary = read
        for index in written:
            block = prefix.blocks[index]
            if block.tokens > boundary:
                writes.append(Write(block.label, block.tokens - boundary, ttls[index], block.exact))
                boundary = block.tokens
        end_1h = max((prefix.blocks[i].tokens for i in written if ttls[i] == "1h"), default=read)
        end_all = max((prefix.blocks[i].tokens for i in written), default=read)
        for index in written:
            block = prefix.blocks[index]
            self.seed(
                block.key, block.tokens, at=at, ttl=ttls[index], label=block.label,
                exact=block.exact,
            )  # fmt: skip
        self.marked.update(prefix.blocks[i].key for i in kept)
        return CacheResult(
            read=read,
            write_1h=max(0, end_1h - read),
            write_5m=max(0, end_all - max(read, end_1h)),
            hit_block=hit,
            written_blocks=tuple(written),
            notes=tuple(notes),
            rules=tuple(rules),
            read_label=read_label,
            read_exact=read_exact,
            writes=tuple(writes),
        )

    def _window(self, breakpoint: int) -> range:
        return range(breakpoint, max(breakpoint - self.rules.anthropic_lookback, 0) - 1, -1)

    def _diagnose(
        self, prefix: Prefix, kept: list[int], hit: int | None, at: float, rules: list[RuleNote]
    ) -> None:
        """Entries this request just missed: expired ones within the lookback, live ones
        beyond it."""
        floor = -1 if hit is None else hit
        in_reach = {p for bp in kept for p in self._window(bp) if p > floor}
        expired = [
            p
            for p in in_reach
            if (entry := self.entries.get(prefix.blocks[p].key)) is not None and entry.expires < at
        ]
        if expired:
            position = max(expired)
            entry = self.entries[prefix.blocks[position].key]
            rules.append(
                RuleNote(
                    "ttl",
                    f"the {entry.tokens:,}-token prefix cached at the {entry.label} breakpoint "
                    f"expired {at - entry.expires:,.0f} s before this call ({entry.ttl_name} TTL)",
                )
            )
        if not kept:
            return  # no breakpoint: nothing can be read, so no lookback to break
        last = max(kept)
        beyond = [
            p
            for p in range(floor + 1, last + 1)
            if p not in in_reach and self.readable(prefix.blocks[p].key, at)
        ]
        if beyond:
            position = max(beyond)
            distance = min(bp - position for bp in kept if bp >= position)
            entry = self.entries[prefix.blocks[position].key]
            rules.append(
                RuleNote(
                    "lookback",
                    f"a live {entry.tokens:,}-token entry ({entry.label}) is {distance} blocks "
                    f"before the nearest breakpoint: beyond the "
                    f"{self.rules.anthropic_lookback}-block lookback",
                )
            )

    def warm_seed(
        self, prefix: Prefix, read: int, at: float, *, model: str, when: datetime | None,
        tolerance: float,
    ) -> tuple[str, int, str] | None:  # fmt: skip
        """The entry a recorded read of ``read`` tokens must have hit, when nothing else can
        explain it: the cache lacks it (by more than ``tolerance``), no rule explains the miss,
        the trace never put that prefix under a breakpoint itself, and a block within the
        lookback of a breakpoint ends within ``tolerance`` of ``read`` at or above the
        model's minimum. None otherwise (the read is then a mismatch, not a warm start)."""
        kept = self._kept(prefix)
        hit = self._best_hit(prefix, kept, at)
        explained = 0
        if hit is not None:
            explained = min(prefix.blocks[hit].tokens, self.entries[prefix.blocks[hit].key].tokens)
        if read - explained <= tolerance or read < self.rules.minimum(model, when):
            return None
        rules: list[RuleNote] = []
        self._diagnose(prefix, kept, hit, at, rules)
        if rules:
            return None  # the trace's own history explains the miss: a rule, not a warm start
        candidates = {p for bp in kept for p in self._window(bp) if hit is None or p > hit}
        if not candidates:
            return None
        best = min(candidates, key=lambda i: (abs(prefix.blocks[i].tokens - read), -i))
        block = prefix.blocks[best]
        if abs(block.tokens - read) > tolerance or block.key in self.marked:
            return None
        following = next((i for i in kept if i >= best), best)
        return block.key, read, _ttl(prefix, following)

    def _best_hit(self, prefix: Prefix, breakpoints: list[int], at: float) -> int | None:
        best: int | None = None
        for bp in breakpoints:
            for position in self._window(bp):
                if self.readable(prefix.blocks[position].key, at):
                    best = position if best is None else max(best, position)
                    break
        return best
