"""A request as the cache sees it: blocks in prefix order, each with the identity of the
prefix ending there, its cumulative tokens and any breakpoint on it.

Prefix order is tools -> system -> messages. Identity chains every block's content (without
its ``cache_control`` marker, which does not change the cached content) onto the model, so two
prefixes match only when everything before is identical. ``tool_choice`` and thinking settings
enter the chain where the messages start: changing them invalidates the messages part only.
Token positions come from the calibrated counter, scaled so the whole prefix equals the call's
prompt total less the tokens the API adds after the last block (:data:`TURN_CLOSE`), and pinned
to the recorded cache boundary when the call recorded one.

Server-side tool iterations (web search, code execution) add prompt tokens the client never
sent: they are ``hidden`` tokens after the last block, which no client breakpoint can cache.
Each block says whether its position is ``exact`` (pinned to a recorded number) or estimated,
and carries the ``label`` of the breakpoint position it is (tools, system, message N, ...).
"""

from __future__ import annotations

import hashlib

from costsim.cache.alignment import align
from costsim.cache.blocks import Prefix, PrefixBlock
from costsim.cache.digests import canonical, fields_key, plain
from costsim.metering.models import keeps_thinking
from costsim.metering.serialise import Position, Serialiser
from costsim.model import (
    THINKING_BLOCKS,
    Block,
    CacheControl,
    Call,
    Flavour,
    ReasoningBlock,
    TextBlock,
    ToolDef,
    ToolResultBlock,
)

__all__ = ["TURN_CLOSE", "Prefix", "PrefixBlock", "PrefixBuilder"]

TURN_CLOSE: dict[Flavour, int] = {Flavour.ANTHROPIC_MESSAGES: 3}
"""Prompt tokens an API bills after the request's last block (the last message closed, the
answer's turn opened), which no breakpoint can cache. Anthropic does not document them; its
recordings whose breakpoint sits on the last block bill 2 to 4 tokens beyond what they cache
(3 in crewAI's, 3 and 4 in pydantic-ai's, 4 in openllmetry's; more only where server tools
ran): without them a breakpoint there cached the whole prompt, and caching looked a little
better than it is. Keyed by the flavour's shape (Claude on Bedrock's Converse API too). A
token either way is below any band's resolution: a position that leans on it stays exact."""


class PrefixBuilder:
    """Builds prefixes, remembering the digest of every block object it has seen."""

    def __init__(self, serialiser: Serialiser | None = None) -> None:
        self.serialiser = serialiser or Serialiser()
        self._digests: dict[int, tuple[object, str]] = {}
        self._built: dict[tuple[int, int, int | None, int, int], tuple[object, object, Prefix]] = {}
        self._by_fields: dict[tuple[object, ...], str] = {}

    def _digest(self, item: Block | ToolDef) -> str:
        hit = self._digests.get(id(item))
        if hit is not None and hit[0] is item:
            return hit[1]
        content = plain(item)
        content["cache_control"] = None  # a marker does not change what is cached
        same = fields_key(content)  # a copy with another marker: the same digest
        digest = self._by_fields.get(same) if same is not None else None
        if digest is None:
            digest = hashlib.blake2b(
                canonical(content).encode("utf-8", "surrogatepass"), digest_size=16
            ).hexdigest()
            if same is not None:
                self._by_fields[same] = digest
        self._digests[id(item)] = (item, digest)
        return digest

    def _chain(self, previous: str, part: str) -> str:
        return hashlib.blake2b(
            f"{previous}|{part}".encode("utf-8", "surrogatepass"), digest_size=16
        ).hexdigest()

    def build(
        self,
        call: Call,
        total: int,
        *,
        anchor: int | None = None,
        reference: Prefix | None = None,
        origin: Call | None = None,
        hidden: int = 0,
    ) -> Prefix:
        """The prefix of ``call`` whose whole length is ``total`` tokens.

        ``anchor``: recorded tokens up to the last breakpoint (cache read + write); when given,
        positions are scaled piecewise so that breakpoint lands exactly there. ``reference``:
        the prefix of the recorded request ``origin`` that ``call`` changes, whose positions
        the blocks it shares keep (see :func:`costsim.cache.alignment.align`). ``hidden``:
        tokens of ``total`` the provider added after the request (server-tool iterations). A
        call a variant left as it was is built once for all the variants that bill it.
        """
        key = (id(call), total, anchor, id(reference), hidden)
        hit = self._built.get(key)
        if hit is not None and hit[0] is call and hit[1] is reference:
            return hit[2]
        prefix = self._build(call, total, anchor, reference, origin, hidden)
        self._built[key] = (call, reference, prefix)
        return prefix

    def _build(
        self,
        call: Call,
        total: int,
        anchor: int | None,
        reference: Prefix | None,
        origin: Call | None,
        hidden: int,
    ) -> Prefix:
        hidden = min(max(hidden, 0), total)
        client = total - hidden
        if anchor is not None and anchor > client:
            anchor = None  # the recorded boundary includes server-side iterations
        positions = self.serialiser.positions(call)
        items: list[tuple[Block | ToolDef, CacheControl | None, str]] = [
            *((tool, tool.cache_control, "tools") for tool in call.tools),
            *((block, block.cache_control, "system") for block in call.system),
            *(
                (block, block.cache_control, "messages")
                for message in call.messages
                for block in message.content
            ),
        ]
        marks = [bp for _, bp, _ in items]
        automatic = False
        if call.cache_control is not None and marks and marks[-1] is None:
            marks[-1] = call.cache_control  # the automatic breakpoint: last block
            automatic = True
        tail = min(TURN_CLOSE.get(call.flavour.shape, 0), client)
        scaled, pinned = _scale(positions, marks, client, anchor, tail)
        labels = _labels(call, automatic)
        content = "content"
        blocks: list[PrefixBlock] = []
        messages_started = False
        roles = iter([message.role for message in call.messages for _ in message.content])
        stripped = _stripped(call)
        last = len(items) - 1
        by_token = call.provider == "openai"  # its cache matches within a block
        for index, ((item, _, section), breakpoint, tokens, label) in enumerate(
            zip(items, marks, scaled, labels, strict=True)
        ):
            before = content
            if section == "messages":
                if not messages_started:
                    settings = canonical([call.tool_choice, call.thinking or None])
                    content = before = self._chain(content, settings)
                    messages_started = True
                role = next(roles)
                if id(item) not in stripped:
                    before = self._chain(content, role)
                    content = self._chain(before, self._digest(item))
            else:
                content = self._chain(content, self._digest(item))
            key = self._chain(call.model, content)
            # the last block ends TURN_CLOSE before the whole prompt: a rule, not a count (a
            # token either way, below any band's resolution), so it stays a recorded number
            exact = index == pinned or (index == last and not hidden and pinned is None)
            text = item.text if by_token and isinstance(item, TextBlock) else ""
            head = self._chain(call.model, before) if text else ""
            blocks.append(
                PrefixBlock(key, tokens, breakpoint, section, content, label, exact, text, head)
            )
        if reference is not None:
            raw = [p.cumulative for p in positions]
            recorded = (
                [p.cumulative for p in self.serialiser.positions(origin)]
                if origin is not None
                else None
            )
            # another model counts the same blocks otherwise: their distances to the end too
            same = (
                self._same_tail(call, origin)
                if origin is not None and origin.model == call.model
                else 0
            )
            blocks = align(blocks, reference, raw, client, recorded, tail, same)
        return Prefix(tuple(blocks), total, hidden)

    def _same_tail(self, call: Call, origin: Call) -> int:
        """How many of the request's last blocks are the recorded request's last blocks: the
        same content (markers aside) in the same section, a message's from the same role."""
        count = 0
        for (mine, where), (theirs, was) in zip(
            reversed(_sections(call)), reversed(_sections(origin)), strict=False
        ):
            if where != was or (mine is not theirs and self._digest(mine) != self._digest(theirs)):
                break
            count += 1
        return count


def _sections(call: Call) -> list[tuple[Block | ToolDef, str]]:
    """The request's blocks in prefix order, each with its section (a message's role)."""
    return [
        *((tool, "tools") for tool in call.tools),
        *((block, "system") for block in call.system),
        *((block, message.role) for message in call.messages for block in message.content),
    ]


def _stripped(call: Call) -> set[int]:
    """The thinking the provider drops from a request, by block id: the thinking of turns
    before its last user turn (one not only tool results; the current turn's, in its tool
    loop, stays) on an Anthropic model that does not keep earlier thinking (DESIGN.md section
    6), and the reasoning items of earlier turns on OpenAI Responses (unless the request keeps
    all turns'). The prompt the cache sees lacks them, so a request after a new user turn
    matches the cached prefix only up to the first earlier turn that thought."""
    shape = call.flavour.shape
    if shape is Flavour.ANTHROPIC_MESSAGES and not keeps_thinking(call.model):
        kinds: tuple[type, ...] = THINKING_BLOCKS
    elif shape is Flavour.OPENAI_RESPONSES and call.extra.get("reasoning_context") != "all_turns":
        kinds = (ReasoningBlock,)
    else:
        return set()
    turn = max(
        (
            index
            for index, message in enumerate(call.messages)
            if message.role == "user"
            and any(not isinstance(block, ToolResultBlock) for block in message.content)
        ),
        default=-1,
    )
    return {
        id(block)
        for message in call.messages[: max(turn, 0)]
        if message.role == "assistant"
        for block in message.content
        if isinstance(block, kinds)
    }


def _labels(call: Call, automatic: bool) -> list[str]:
    """The breakpoint label of every block in prefix order."""
    count = len(call.messages)
    labels = ["tools"] * len(call.tools) + ["system"] * len(call.system)
    for index, message in enumerate(call.messages):
        name = "last message" if index == count - 1 else f"message {index}"
        labels += [name] * len(message.content)
    if automatic and labels:
        labels[-1] = "automatic"
    return labels


def _scale(
    positions: tuple[Position, ...],
    breakpoints: list[CacheControl | None],
    total: int,
    anchor: int | None,
    tail: int = 0,
) -> tuple[list[int], int | None]:
    """Token positions scaled to end ``tail`` tokens before ``total`` (see
    :data:`TURN_CLOSE`), and the index pinned to ``anchor``."""
    raw = [p.cumulative for p in positions]
    raw_total = raw[-1] if raw else 0
    if raw_total <= 0:
        return [0] * len(raw), None
    pivot = max((i for i, bp in enumerate(breakpoints) if bp is not None), default=None)
    if anchor is not None and pivot is not None and 0 < anchor <= total and raw[pivot] == raw_total:
        # the breakpoint is on the last block: what follows it are tokens the API adds
        return [round(r * anchor / raw_total) for r in raw], pivot
    if (
        anchor is not None
        and pivot is not None
        and 0 < anchor <= total
        and 0 < raw[pivot] < raw_total
    ):
        head, end = raw[pivot], max(anchor, total - tail)
        return [
            round(r * anchor / head)
            if r <= head
            else round(anchor + (r - head) * (end - anchor) / (raw_total - head))
            for r in raw
        ], pivot
    return [round(r * (total - tail) / raw_total) for r in raw], None
