"""Token usage normalised to one shape, and the notes that qualify a call's numbers."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

__all__ = ["Note", "NoteKind", "PromptSplit", "Usage", "UsageSource", "split_prompt"]


class UsageSource(StrEnum):
    RECORDED = "recorded"
    ESTIMATED = "estimated"


@dataclass(frozen=True, slots=True)
class PromptSplit:
    """A prompt's tokens by how they are billed; they add up to the prompt."""

    uncached_input: int
    cache_read: int
    cache_write_5m: int
    cache_write_1h: int


def split_prompt(total: int, read: int, write_1h: int, write_5m: int) -> PromptSplit:
    """``total`` prompt tokens split into cache reads, 1h and 5m writes (in that order, each
    within zero and what is left of the prompt) and the rest, uncached."""
    read = min(max(read, 0), total)
    write_1h = min(max(write_1h, 0), total - read)
    write_5m = min(max(write_5m, 0), total - read - write_1h)
    return PromptSplit(total - read - write_1h - write_5m, read, write_5m, write_1h)


@dataclass(frozen=True, slots=True)
class Usage:
    """Token usage normalised to one shape (DESIGN.md section 2).

    ``prompt_total`` is every input token of the request, cached or not. ``output`` includes
    reasoning / thinking tokens; ``reasoning`` is the part of ``output`` spent thinking, or
    ``None`` when the provider did not report it.
    """

    uncached_input: int = 0
    cache_read: int = 0
    cache_write_5m: int = 0
    cache_write_1h: int = 0
    output: int = 0
    reasoning: int | None = None
    source: UsageSource = UsageSource.RECORDED
    web_searches: int = 0
    """Server-side web search requests, billed per use on top of tokens."""
    base_tier: bool = False
    """The prompt sums several samplings (server-tool iterations), none of which could pass the
    standard context window: the whole request is billed at the base tier of a model with
    long-context tiers, however large the sum (DESIGN.md section 9)."""
    tier: str | None = None
    """The service tier the response says billed the call when it has prices of its own
    (``flex``, ``priority``, ``batch``; see :mod:`costsim.pricing.tiers`); None: standard."""

    @property
    def cache_write(self) -> int:
        return self.cache_write_5m + self.cache_write_1h

    @property
    def prompt_total(self) -> int:
        return self.uncached_input + self.cache_read + self.cache_write

    @property
    def estimated(self) -> bool:
        return self.source is UsageSource.ESTIMATED


class NoteKind(StrEnum):
    """Something a reader of the numbers must know about a call or an interaction."""

    INVALID_USAGE = "invalid-usage"
    """The recorded usage has impossible values: the call is estimated instead."""
    INCOMPLETE_STREAM = "incomplete-stream"
    """The stream ends before its final usage event: the call is estimated."""
    NO_USAGE = "no-usage"
    """The API records no usage at all (legacy Text Completions): the call is estimated."""
    USAGE_ONLY = "usage-only"
    """The request body is not one costsim models: metered from the recorded usage alone."""
    UNRECOGNISED_CALL = "unrecognised-llm-call"
    """Looks like an LLM call but costsim cannot meter it: not in the totals."""
    UNREADABLE_CALL = "unreadable"
    """An LLM call a lenient read could not read (a corrupt body): not in the totals, as
    ``cassettes check`` names it."""
    UNPRICED_FEE = "unpriced-fee"
    """A per-use fee (a server tool) was recorded that has no known price."""
    UNSEEN_HISTORY = "unseen-history"
    """A request continues a stored response the cassette does not hold: its history is
    billed (in the recorded usage) but not visible to what-ifs."""
    ERROR_AFTER_USAGE = "error-after-usage"
    """The response ends in an error after it reported its usage (a stream an error cut
    short): billed as recorded, not counted as an errored (unbilled) call."""
    BASE_TIER = "base-tier"
    """A prompt over 200K tokens summed over server-tool iterations of a request without the
    1M-token window: priced at the base tier, not the long-context one."""
    LONG_WINDOW_UNSEEN = "long-window-unseen"
    """A prompt over 200K tokens (no server tools) of a request the recording shows without
    the 1M-token window, which the API needs for it: the recorder dropped the header, and it
    is priced as billed, at the long-context rate where the model has one."""
    UNREADABLE_EMBEDDINGS = "unreadable-embeddings"
    """An embeddings request whose tokens cannot be known (no usage recorded and an input
    that cannot be read, or no model named): in no embeddings figure."""
    MIXED_TTL_WRITES = "mixed-ttl-writes"
    """Cache writes recorded without their 5m / 1h split, from a request marking both TTLs:
    priced as 5-minute writes, a lower bound."""


LEFT_OUT_KINDS = frozenset({NoteKind.UNRECOGNISED_CALL, NoteKind.UNREADABLE_CALL})
"""The notes of interactions left out of every sum (each makes a total a lower bound)."""


@dataclass(frozen=True, slots=True)
class Note:
    kind: NoteKind
    message: str
