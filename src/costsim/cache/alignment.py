"""Where the blocks of a request a variant changed sit, in tokens: those it shares with the
recorded request keep its positions (which may be recorded numbers); the rest are placed by
what changed before them (see :func:`align`)."""

from __future__ import annotations

from itertools import pairwise

from costsim.cache.blocks import Prefix, PrefixBlock

__all__ = ["align", "moved_block", "placed"]


def align(
    blocks: list[PrefixBlock],
    reference: Prefix,
    raw: list[int],
    total: int,
    recorded: list[int] | None = None,
    tail: int = 0,
    same_tail: int = 0,
) -> list[PrefixBlock]:
    """Blocks shared with ``reference`` (same prefix identity) keep its token positions,
    which may be pinned to what was recorded. The rest: when the request has the reference's
    blocks (its content changed, not its shape) and ``recorded`` gives the reference's raw
    positions, each block's recorded position moved by the growth before it (:func:`_grown`);
    else the request's last ``same_tail`` blocks, the recorded request's last ones, end as
    far before ``total`` as they did before the recorded total (tools dropped ahead of a
    breakpoint shorten what it writes, not the recorded tokens after it), and the blocks
    between are scaled to end where those begin (to end ``tail`` tokens before ``total``
    when there are none). No position lies past that end: a request that dropped most of its
    tools can be estimated shorter than the shared blocks' recorded positions, and a
    breakpoint there wrote the whole prompt, the tokens after its last block included."""
    shared = 0
    while (
        shared < min(len(blocks), len(reference.blocks))
        and blocks[shared].content == reference.blocks[shared].content
    ):
        shared += 1
    grown = _grown(reference, raw, total, recorded) if shared < len(blocks) else None
    after = 0 if grown is not None else min(same_tail, len(blocks), len(reference.blocks))
    after = min(after, len(blocks) - shared, len(reference.blocks) - shared)
    if shared == 0 and grown is None and after == 0:
        return blocks
    end = total - tail
    if shared == len(blocks) and total != reference.client and reference.client > 0:
        # the same content to another model (routed): its count changed all along the
        # prompt, so the positions scale with it (they kept the recorded model's, exact);
        # counted alike but behind another tool-use system prompt (Sonnet 4.5 to Opus 4.1),
        # they shift by the difference
        shift = total - reference.client
        shifted = (
            recorded is not None and len({r - o for r, o in zip(raw, recorded, strict=False)}) == 1
        )
        rate = total / reference.client
        return [
            placed(
                block,
                max(0, min(kept.tokens + shift if shifted else round(kept.tokens * rate), end)),
                False,
            )
            for block, kept in zip(blocks, reference.blocks, strict=False)
        ]
    aligned = [
        placed(block, min(kept.tokens, end), kept.exact and kept.tokens <= end)
        for block, kept in zip(blocks[:shared], reference.blocks, strict=False)
    ]
    if grown is not None:
        low = aligned[-1].tokens if aligned else 0
        for i, block in enumerate(blocks[shared:], start=shared):
            low = min(max(grown[i], low), end)  # positions never go back
            aligned.append(placed(block, low, False))
        return aligned
    return _between(blocks, reference, raw, total, end, shared, after, aligned)


def _between(
    blocks: list[PrefixBlock],
    reference: Prefix,
    raw: list[int],
    total: int,
    end: int,
    shared: int,
    after: int,
    head: list[PrefixBlock],
) -> list[PrefixBlock]:
    """The ``shared`` head, then the blocks after it: the last ``after`` as far before
    ``total`` as the recorded request's last ones were before its total, those between
    scaled by their raw positions from the head's end to where the last ones begin. A head
    that reaches past where the last ones begin (its positions are the recorded request's,
    scaled there from raw counts; the total is the recording's less the calibrated change)
    shrinks to end there: the tokens after the last breakpoint are recorded numbers."""
    stop = len(blocks) - after  # the first of the last blocks
    origin = len(reference.blocks) - after  # where they are in the reference
    low = head[-1].tokens if head else 0
    upto = end
    if after:
        behind = reference.client - (reference.blocks[origin - 1].tokens if origin else 0)
        begins = max(total - behind, 0)
        if head and low > begins:
            rate = begins / low
            head = [placed(block, round(block.tokens * rate), False) for block in head]
            low = head[-1].tokens
        upto = min(max(begins, low), end)
    head_raw = raw[shared - 1] if shared else 0
    span = (raw[stop - 1] if stop else 0) - head_raw
    placed_blocks = list(head)
    for i in range(shared, stop):
        share = (raw[i] - head_raw) / span if span > 0 else 1.0
        placed_blocks.append(placed(blocks[i], round(low + share * (upto - low)), False))
    low = upto
    for i in range(stop, len(blocks)):
        kept = reference.blocks[origin + i - stop]
        low = min(max(total - (reference.client - kept.tokens), low), end)
        placed_blocks.append(placed(blocks[i], low, False))
    return placed_blocks


def _grown(
    reference: Prefix, raw: list[int], total: int, recorded: list[int] | None
) -> list[int] | None:
    """Each block's position as the reference's plus the growth before it, the request's
    growth in tokens shared out as its raw growth is (a system prompt edited by 20 tokens
    moves every later breakpoint by about 20, not by a share of the whole prompt's estimate
    error); None when the shapes differ, or the blocks did not all change one way (text moved
    from one block to another: shared out by the whole's growth, a block's shift could reach
    past the prompt), or the growths in tokens and raw do not agree in sign."""
    count = len(reference.blocks)
    if recorded is None or not raw or len(raw) != count or len(recorded) != count:
        return None
    steps = [b - a for a, b in pairwise([0, *raw])]
    recorded_steps = [b - a for a, b in pairwise([0, *recorded])]
    moved = [new - old for new, old in zip(steps, recorded_steps, strict=True)]
    if any(m > 0 for m in moved) and any(m < 0 for m in moved):
        return None
    tokens, raw_growth = total - reference.client, raw[-1] - recorded[-1]
    if raw_growth == 0:
        return None if tokens else [block.tokens for block in reference.blocks]
    if tokens * raw_growth < 0:
        return None
    rate = tokens / raw_growth
    return [
        round(block.tokens + (raw[i] - recorded[i]) * rate)
        for i, block in enumerate(reference.blocks)
    ]


def placed(block: PrefixBlock, tokens: int, exact: bool) -> PrefixBlock:
    """``block`` at another position (built directly: ``dataclasses.replace`` reads every
    field by name, and a long conversation moves thousands of blocks)."""
    return PrefixBlock(
        key=block.key,
        tokens=tokens,
        breakpoint=block.breakpoint,
        section=block.section,
        content=block.content,
        label=block.label,
        exact=exact,
        text=block.text,
        head=block.head,
    )


def moved_block(key: str, recorded: Prefix, now: Prefix) -> PrefixBlock | None:
    """The block of ``now`` in the place of ``recorded``'s block ``key``, when the request was
    changed in content only (as many blocks as recorded) and that block with it; None
    otherwise (the entry is then the recorded one)."""
    if len(recorded.blocks) != len(now.blocks):
        return None
    at = next((i for i, block in enumerate(recorded.blocks) if block.key == key), None)
    if at is None or now.blocks[at].key == key:
        return None
    return now.blocks[at]
