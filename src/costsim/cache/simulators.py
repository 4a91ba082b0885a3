"""Cache simulators: replay requests in time order against a cache that follows the
provider's rules, and split each prompt into read / 1h write / 5m write / uncached.

One simulator per provider, registered in ``SIMULATORS``; state lives in the simulator, one
per recorded trace (a recording is its own cache world).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

from costsim.cache.prefix import Prefix
from costsim.cache.rules import CacheRules

__all__ = ["SIMULATORS", "AnthropicCache", "CacheResult", "CacheSimulator", "OpenAICache"]


@dataclass(frozen=True, slots=True)
class CacheResult:
    read: int = 0
    write_5m: int = 0
    write_1h: int = 0
    hit_block: int | None = None
    written_blocks: tuple[int, ...] = ()
    notes: tuple[str, ...] = ()


@dataclass(slots=True)
class Entry:
    tokens: int
    ttl: float
    created: float
    expires: float

    def readable(self, at: float) -> bool:
        # An entry exists only once the first response began: a request at the same instant
        # (sent concurrently) misses. Lifetimes count from the start of the request.
        return self.created < at <= self.expires


@dataclass(slots=True)
class AnthropicCache:
    """Explicit caching: breakpoints write, reads look back up to 20 blocks from each."""

    rules: CacheRules
    entries: dict[str, Entry] = field(default_factory=dict)

    def seed(self, key: str, tokens: int, *, at: float, ttl: str = "5m") -> None:
        seconds = self.rules.ttl_seconds[ttl]
        self.entries[key] = Entry(tokens, seconds, at, at + seconds)

    def readable(self, key: str, at: float) -> bool:
        entry = self.entries.get(key)
        return entry is not None and entry.readable(at)

    def request(
        self, prefix: Prefix, *, model: str, at: float, when: datetime | None
    ) -> CacheResult:
        notes: list[str] = []
        breakpoints = prefix.breakpoints()
        limit = self.rules.anthropic_max_breakpoints
        if len(breakpoints) > limit:
            notes.append(
                f"{len(breakpoints)} cache breakpoints: the API accepts {limit}; "
                f"using the first {limit}"
            )
            breakpoints = breakpoints[:limit]
        if not breakpoints:
            return CacheResult(notes=tuple(notes))
        ttls = [prefix.blocks[i].breakpoint.ttl for i in breakpoints]  # type: ignore[union-attr]
        if "5m" in ttls and "1h" in ttls[ttls.index("5m") :]:
            notes.append("a 1h breakpoint follows a 5m one: the API requires 1h entries first")
        hit = self._best_hit(prefix, breakpoints, at)
        read = 0
        if hit is not None:
            entry = self.entries[prefix.blocks[hit].key]
            entry.expires = at + entry.ttl  # a hit refreshes the lifetime at no cost
            # the same content has one length: a hit reads what was written, even where two
            # estimates of the prefix disagree by a few tokens
            read = min(prefix.blocks[hit].tokens, entry.tokens)
        minimum = self.rules.minimum(model, when)
        written = [
            i
            for i in breakpoints
            if (hit is None or i > hit) and prefix.blocks[i].tokens >= minimum
        ]
        if not written and hit is None and breakpoints:
            notes.append(
                f"prefix shorter than the {minimum:,}-token minimum for {model}: not cached"
            )
        end_1h = max(
            (prefix.blocks[i].tokens for i in written if _ttl(prefix, i) == "1h"), default=read
        )
        end_all = max((prefix.blocks[i].tokens for i in written), default=read)
        for i in written:
            self.seed(prefix.blocks[i].key, prefix.blocks[i].tokens, at=at, ttl=_ttl(prefix, i))
        return CacheResult(
            read=read,
            write_1h=max(0, end_1h - read),
            write_5m=max(0, end_all - max(read, end_1h)),
            hit_block=hit,
            written_blocks=tuple(written),
            notes=tuple(notes),
        )

    def warm_seed(self, prefix: Prefix, read: int, at: float) -> tuple[str, int, str] | None:
        """The entry a recorded read of ``read`` tokens must have hit, if the cache lacks it:
        the block nearest that length at or within the lookback of a breakpoint."""
        hit = self._best_hit(prefix, prefix.breakpoints(), at)
        if hit is not None and prefix.blocks[hit].tokens >= read:
            return None
        candidates = {
            position
            for bp in prefix.breakpoints()
            for position in range(max(bp - self.rules.anthropic_lookback, 0), bp + 1)
        }
        if not candidates:
            return None
        best = min(candidates, key=lambda i: (abs(prefix.blocks[i].tokens - read), -i))
        block = prefix.blocks[best]
        return block.key, block.tokens, _ttl(prefix, _next_breakpoint(prefix, best))

    def _best_hit(self, prefix: Prefix, breakpoints: list[int], at: float) -> int | None:
        best: int | None = None
        lookback = self.rules.anthropic_lookback
        for bp in breakpoints:
            for position in range(bp, max(bp - lookback, 0) - 1, -1):
                if self.readable(prefix.blocks[position].key, at):
                    best = position if best is None else max(best, position)
                    break
        return best


def _next_breakpoint(prefix: Prefix, index: int) -> int:
    return next((i for i in prefix.breakpoints() if i >= index), index)


def _ttl(prefix: Prefix, index: int) -> str:
    breakpoint = prefix.blocks[index].breakpoint
    return breakpoint.ttl if breakpoint is not None else "5m"


@dataclass(slots=True)
class OpenAICache:
    """Automatic caching: prompts of 1,024+ tokens, matched in 128-token increments."""

    rules: CacheRules
    entries: dict[str, Entry] = field(default_factory=dict)

    def seed(self, key: str, tokens: int, *, at: float, ttl: str = "retention") -> None:
        seconds = float(self.rules.ttl_seconds.get(ttl, 600))
        self.entries[key] = Entry(tokens, seconds, at, at + seconds)

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
        step, minimum = self.rules.openai_increment, self.rules.openai_minimum
        matched_tokens = 0
        if matched is not None:
            block = prefix.blocks[matched]
            matched_tokens = min(block.tokens, self.entries[block.key].tokens)
        read = (matched_tokens // step) * step if matched_tokens >= minimum else 0
        if matched is not None:
            entry = self.entries[prefix.blocks[matched].key]
            entry.expires = at + entry.ttl
        write = 0
        if prefix.total >= minimum:
            for block in prefix.blocks:
                if block.key not in self.entries or not self.entries[block.key].readable(at):
                    self.entries[block.key] = Entry(block.tokens, retention, at, at + retention)
            if self.rules.openai_bills_writes(model, when):
                explicit = prefix.breakpoints()
                end = prefix.blocks[explicit[-1]].tokens if explicit else _before_last_turn(prefix)
                write = max(0, end - read)
        return CacheResult(read=read, write_5m=write, hit_block=matched)

    def warm_seed(self, prefix: Prefix, read: int, at: float) -> tuple[str, int, str] | None:
        """A recorded read the cache cannot explain: the prefix was cached up to ``read``
        tokens, inside the first block that reaches that far."""
        if any(self.readable(b.key, at) and b.tokens >= read for b in prefix.blocks):
            return None
        block = next((b for b in prefix.blocks if b.tokens >= read), None)
        if block is None:
            return None
        return block.key, read, "retention"


def _before_last_turn(prefix: Prefix) -> int:
    """Tokens up to the end of the previous turn: what an automatic write can reuse."""
    tokens = [b.tokens for b in prefix.blocks]
    return tokens[-2] if len(tokens) > 1 else 0


class CacheSimulator(Protocol):
    """What the engine needs of a provider's cache."""

    def seed(self, key: str, tokens: int, *, at: float, ttl: str = "5m") -> None: ...

    def readable(self, key: str, at: float) -> bool: ...

    def warm_seed(self, prefix: Prefix, read: int, at: float) -> tuple[str, int, str] | None: ...

    def request(
        self, prefix: Prefix, *, model: str, at: float, when: datetime | None
    ) -> CacheResult: ...


SIMULATORS: dict[str, Callable[[CacheRules], CacheSimulator]] = {
    "anthropic": AnthropicCache,
    "openai": OpenAICache,
}
