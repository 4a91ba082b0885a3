"""The cache's view of a request: blocks in prefix order, each with the identity of the prefix
ending there and its cumulative tokens (built by :mod:`costsim.cache.prefix`)."""

from __future__ import annotations

from dataclasses import dataclass

from costsim.model import CacheControl

__all__ = ["Prefix", "PrefixBlock"]


@dataclass(frozen=True, slots=True)
class PrefixBlock:
    key: str
    """Identity of the prefix up to and including this block, for this model."""
    tokens: int
    """Cumulative prompt tokens up to and including this block."""
    breakpoint: CacheControl | None
    section: str
    content: str = ""
    """Identity of the prefix's content alone (the same request sent to another model)."""
    label: str = ""
    """Where a breakpoint here sits: ``tools``, ``system``, ``message N``, ``last message``
    or ``automatic`` (the request-level breakpoint)."""
    exact: bool = False
    """The position is a recorded number (a cache boundary, the whole prompt), not estimated."""
    text: str = ""
    """The block's text, where a cache matches prefixes token by token (OpenAI's automatic
    caching): a text that extends a cached one is read up to where they part."""
    head: str = ""
    """With ``text``: the identity of what comes before this block's text (the prefix before
    it, and the role of its message): blocks with one ``head`` are alternatives at one place."""


@dataclass(frozen=True, slots=True)
class Prefix:
    blocks: tuple[PrefixBlock, ...]
    total: int
    hidden: int = 0
    """Prompt tokens after the last block that the provider added (server-tool iterations)."""

    @property
    def client(self) -> int:
        """Prompt tokens the client sent (what breakpoints can cache)."""
        return self.total - self.hidden

    def breakpoints(self) -> list[int]:
        return [i for i, block in enumerate(self.blocks) if block.breakpoint is not None]
