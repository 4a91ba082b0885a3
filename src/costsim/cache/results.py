"""What a cache simulator says about one request: the billing split, the rules in play, and
the breakpoint each read and write belongs to."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CacheResult", "Entry", "RuleNote", "Write"]


@dataclass(frozen=True, slots=True)
class RuleNote:
    """A caching rule that decided something about a request (see ``RULE_NAMES``): a prefix
    below the minimum, an entry that expired, one beyond the lookback, ..."""

    rule: str
    message: str


@dataclass(frozen=True, slots=True)
class Write:
    """Tokens one breakpoint wrote: from the previous boundary up to it."""

    label: str
    tokens: int
    ttl: str
    exact: bool = False


@dataclass(frozen=True, slots=True)
class CacheResult:
    read: int = 0
    write_5m: int = 0
    write_1h: int = 0
    hit_block: int | None = None
    written_blocks: tuple[int, ...] = ()
    notes: tuple[str, ...] = ()
    """What the request itself gets wrong (more than 4 breakpoints, ...), for the events."""
    rules: tuple[RuleNote, ...] = ()
    """Every rule that decided something here, including entries missed (expired, beyond the
    lookback): what a mismatch with the recording is checked against."""
    read_label: str | None = None
    """The breakpoint position whose entry was read (``warm start`` for inferred entries)."""
    read_exact: bool = True
    """The read length is a recorded number, not an estimated prefix position."""
    writes: tuple[Write, ...] = ()


@dataclass(slots=True)
class Entry:
    tokens: int
    ttl: float
    created: float
    expires: float
    label: str = ""
    exact: bool = False
    ttl_name: str = "5m"

    def readable(self, at: float) -> bool:
        # An entry exists only once the first response began: a request at the same instant
        # (sent concurrently) misses. Lifetimes count from the start of the request.
        return self.created < at <= self.expires
