"""Which cache an Anthropic call wrote to, when its usage does not say.

Anthropic's usage splits ``cache_creation_input_tokens`` into 5-minute and 1-hour writes in a
``cache_creation`` object, and the two are priced apart (1.25x and 2x the input price). A
usage without that object (an older API version, a gateway that passes the total through)
says only how many tokens were written. Each write is made at a breakpoint, for that
breakpoint's TTL (Anthropic's prompt caching documentation, "Mixing different TTLs"), so the
request's markers settle it: when every marker asks for 1h, every written token was written
for 1h; when none does, for 5 minutes. A request that marks both is billed by three places
(the documentation's "Mixing different TTLs"): A, where the cache read ends; B, the last 1h
breakpoint; C, the last breakpoint: B - A tokens at the 1h rate, C - B at the 5-minute rate.
Where B lies is told from the request's text, in proportion to the recorded prompt: a read
reaching well past it (the usual 1h system prompt and 5m conversation, after the first turn),
or ending near it with no other breakpoint near (a read ends on a breakpoint: that one), wrote
only 5m entries. Otherwise (a read ending before B, or a request with images or documents,
whose share of the prompt its text cannot tell) the split is unknown: the writes stay priced at
the 5-minute rate, a lower bound, and a note says so.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator

from costsim.model import (
    Block,
    CacheControl,
    Call,
    Flavour,
    Note,
    NoteKind,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
)

__all__ = ["MIXED_TTL_NOTE", "marker_ttls", "split_writes"]

MIXED_TTL_NOTE = (
    "cache writes recorded without their 5-minute / 1-hour split, from a request that marks "
    "both: priced as 5-minute writes (1.25x the input price), a lower bound where part was "
    "written for 1h (2x)"
)


def _items(call: Call) -> Iterator[tuple[CacheControl | None, int | None]]:
    """Each item of the request in cache order (tools, system, message blocks, the blocks a
    tool result holds, which may carry markers of their own) with its marker and its
    characters; None where its share of the prompt cannot be told from characters (an
    image, a document)."""
    for tool in call.tools:
        yield tool.cache_control, len(tool.name) + len(tool.description) + _json(tool.input_schema)
    for blocks in (call.system, *(message.content for message in call.messages)):
        yield from _blocks(blocks)


def _blocks(blocks: tuple[Block, ...]) -> Iterator[tuple[CacheControl | None, int | None]]:
    for block in blocks:
        size: int | None = None
        if isinstance(block, ToolResultBlock):
            yield from _blocks(block.content)
            size = 0  # its own frame: a few tokens
        elif isinstance(block, TextBlock | ThinkingBlock):
            size = len(block.text)
        elif isinstance(block, ToolUseBlock):
            size = len(block.name) + _json(block.input)
        yield getattr(block, "cache_control", None), size


def _json(value: object) -> int:
    return len(json.dumps(value))


def marker_ttls(call: Call) -> frozenset[str]:
    """The TTLs the request's cache breakpoints ask for."""
    markers = [call.cache_control, *(marker for marker, _ in _items(call))]
    return frozenset(marker.ttl for marker in markers if marker is not None)


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
    hour = dataclasses.replace(
        usage, cache_write_5m=0, cache_write_1h=usage.cache_write_1h + usage.cache_write_5m
    )
    if ttls == {"1h"}:
        return dataclasses.replace(call, usage=hour)
    if _read_past_hours(call, usage):
        return call  # every write after the 1h entries: 5-minute writes, as read
    note = Note(NoteKind.MIXED_TTL_WRITES, MIXED_TTL_NOTE)
    return dataclasses.replace(call, notes=(*call.notes, note))


MARGIN = 0.25
"""How far past the last 1h breakpoint (a share of its place) the read must end for the split
to be told from the text: tokens per character differ between prose, code and JSON by less."""


def _read_past_hours(call: Call, usage: Usage) -> bool:
    """Whether the cache read of a request marking both TTLs ends well past its last 1h
    breakpoint, so that it wrote no 1h entry (see the module's docstring)."""
    sized = _sized(call)
    if sized is None or not sized[-1][1]:
        return False
    total = sized[-1][1]
    marks = [mark for mark, _ in sized]
    if call.cache_control is not None and marks[-1] is None:
        marks[-1] = call.cache_control  # the automatic breakpoint: on the last block
    places = [
        (mark, usage.prompt_total * at / total)
        for (_, at), mark in zip(sized, marks, strict=True)
        if mark
    ]
    last = max((i for i, (mark, _) in enumerate(places) if mark.ttl == "1h"), default=None)
    if last is None:
        return False
    read, hour = usage.cache_read, places[last][1]
    if read >= hour * (1 + MARGIN):
        return True
    # a read ends on a breakpoint: near the last 1h one, with none before it near, it is that
    before = max((place for _, place in places[:last]), default=0.0)
    return read >= hour * (1 - MARGIN) and before < read * (1 - MARGIN)


def _sized(call: Call) -> list[tuple[CacheControl | None, int]] | None:
    """:func:`_items` with the characters up to each item's end; None where one cannot be
    told."""
    sized: list[tuple[CacheControl | None, int]] = []
    at = 0
    for marker, size in _items(call):
        if size is None:
            return None
        at += size
        sized.append((marker, at))
    return sized or None
