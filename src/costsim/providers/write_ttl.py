"""Which cache an Anthropic call wrote to, when its usage does not say.

Anthropic's usage splits ``cache_creation_input_tokens`` into 5-minute and 1-hour writes in a
``cache_creation`` object, and the two are priced apart (1.25x and 2x the input price). A
usage without that object (an older API version, a gateway that passes the total through)
says only how many tokens were written. Each write is made at a breakpoint, for that
breakpoint's TTL (Anthropic's prompt caching documentation, "Mixing different TTLs"), so the
request's markers settle it: when every marker asks for 1h, every written token was written
for 1h; when none does, for 5 minutes. A request that marks both leaves the split unknown
(it depends on where the written part starts): its writes stay priced at the 5-minute rate,
a lower bound, and a note says so.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

from costsim.model import Block, CacheControl, Call, Flavour, Note, NoteKind, ToolResultBlock

__all__ = ["MIXED_TTL_NOTE", "marker_ttls", "split_writes"]

MIXED_TTL_NOTE = (
    "cache writes recorded without their 5-minute / 1-hour split, from a request that marks "
    "both: priced as 5-minute writes (1.25x the input price), a lower bound where part was "
    "written for 1h (2x)"
)


def _markers(call: Call) -> Iterator[CacheControl | None]:
    yield call.cache_control
    yield from (tool.cache_control for tool in call.tools)
    yield from _block_markers(call.system)
    for message in call.messages:
        yield from _block_markers(message.content)


def _block_markers(blocks: tuple[Block, ...]) -> Iterator[CacheControl | None]:
    """The markers of ``blocks`` and of the blocks a tool result holds (text and images in
    a ``tool_result`` may carry their own)."""
    for block in blocks:
        yield getattr(block, "cache_control", None)
        if isinstance(block, ToolResultBlock):
            yield from _block_markers(block.content)


def marker_ttls(call: Call) -> frozenset[str]:
    """The TTLs the request's cache breakpoints ask for."""
    return frozenset(marker.ttl for marker in _markers(call) if marker is not None)


def split_writes(call: Call, unsplit: bool) -> Call:
    """``call`` with writes its usage did not split (``unsplit``) put where its markers say."""
    usage = call.usage
    if (
        not unsplit
        or usage is None
        or not usage.cache_write_5m
        or call.flavour is not Flavour.ANTHROPIC_MESSAGES
    ):
        return call
    ttls = marker_ttls(call)
    if "1h" not in ttls:
        return call
    if ttls == {"1h"}:
        hour = dataclasses.replace(
            usage, cache_write_5m=0, cache_write_1h=usage.cache_write_1h + usage.cache_write_5m
        )
        return dataclasses.replace(call, usage=hour)
    note = Note(NoteKind.MIXED_TTL_WRITES, MIXED_TTL_NOTE)
    return dataclasses.replace(call, notes=(*call.notes, note))
