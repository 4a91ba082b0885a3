"""The tokens an API bills after a request's last block, which no breakpoint can cache
(:data:`costsim.cache.prefix.TURN_CLOSE`): hand-computed positions, and the evidence of the
recordings, source by source."""

from __future__ import annotations

import statistics
from collections import defaultdict
from pathlib import Path

from costsim.cache.prefix import TURN_CLOSE, PrefixBuilder
from costsim.model import CacheControl, Call, Flavour, Message, Provenance, TextBlock

CLOSE = TURN_CLOSE[Flavour.ANTHROPIC_MESSAGES]


def _call(flavour: Flavour, *, marked: bool) -> Call:
    question = TextBlock("What is the refund window? " * 40, CacheControl("5m") if marked else None)
    return Call(
        flavour=flavour,
        model="claude-sonnet-4-5" if flavour is Flavour.ANTHROPIC_MESSAGES else "gpt-4o",
        provenance=Provenance(Path("t.yaml"), 0),
        system=(TextBlock("You answer questions about orders. " * 60),),
        messages=(Message("user", (question,)),),
    )


def test_the_last_block_ends_before_the_tokens_the_api_adds() -> None:
    """A 2,000-token Anthropic request: its last block ends at 1,997 (the whole prompt, a
    recorded number, less the 3 that close the turn: a rule, a token either way, so the
    position stays exact and a later call's read of it adds no band)."""
    prefix = PrefixBuilder().build(_call(Flavour.ANTHROPIC_MESSAGES, marked=True), 2000)
    assert CLOSE == 3
    assert prefix.blocks[-1].tokens == 2000 - CLOSE and prefix.blocks[-1].exact
    assert not prefix.blocks[0].exact  # the system prompt's end: the counter's estimate
    positions = [block.tokens for block in prefix.blocks]
    assert positions == sorted(positions) and positions[0] > 0
    # anchored on a recorded boundary on the last block, the recording says where it ends
    anchored = PrefixBuilder().build(
        _call(Flavour.ANTHROPIC_MESSAGES, marked=True), 2000, anchor=1996
    )
    assert anchored.blocks[-1].tokens == 1996 and anchored.blocks[-1].exact
    # an API without the rule: the whole prompt, a recorded number
    chat = PrefixBuilder().build(_call(Flavour.OPENAI_CHAT, marked=False), 2000)
    assert chat.blocks[-1].tokens == 2000 and chat.blocks[-1].exact


def test_recordings_bill_a_few_tokens_after_a_breakpoint_on_the_last_block(corpus: Path) -> None:
    """Every source's recordings whose last breakpoint sits on the last block, without
    server tools (whose iterations add tokens of their own): what they bill beyond what they
    cache is TURN_CLOSE give or take one, in each source (the rule is not one project's)."""
    from costsim.analysis.report import load_traces

    traces, _ = load_traces([corpus], lenient=True)
    tails: dict[str, list[int]] = defaultdict(list)
    for trace in traces:
        for call in trace.calls:
            usage = call.usage
            if call.flavour is not Flavour.ANTHROPIC_MESSAGES or usage is None:
                continue
            blocks = [*call.tools, *call.system, *(b for m in call.messages for b in m.content)]
            last_marked = bool(blocks) and (
                blocks[-1].cache_control is not None or call.cache_control is not None
            )
            cached = usage.cache_read + usage.cache_write
            if not last_marked or not cached or call.server_tools:
                continue
            source = Path(trace.path).relative_to(corpus).parts[0]
            tails[source].append(usage.prompt_total - cached)
    assert len(tails) >= 3, tails
    for source, seen in tails.items():
        assert abs(statistics.median(seen) - CLOSE) <= 1, (source, seen)
        assert all(2 <= tail <= CLOSE + 4 for tail in seen), (source, seen)


def test_the_same_request_to_another_model_scales_its_positions() -> None:
    """A routed call shares every block's content with its recording (the model is not part
    of it): its positions stayed the recorded model's, exact, even where the new model's
    count of the prompt is longer (a review's 2,000 -> 2,600: 601 tokens after the last
    block, never cached). They scale with the count now, as estimates."""
    import dataclasses

    recorded = _call(Flavour.ANTHROPIC_MESSAGES, marked=True)
    builder = PrefixBuilder()
    reference = builder.build(recorded, 2000, anchor=1996)
    assert reference.blocks[-1].tokens == 1996 and reference.blocks[-1].exact
    routed = dataclasses.replace(recorded, model="claude-haiku-4-5")
    prefix = builder.build(routed, 2600, reference=reference, origin=recorded)
    positions = [block.tokens for block in prefix.blocks]
    assert positions == sorted(positions) and 2590 <= positions[-1] <= 2600 - CLOSE
    assert not any(block.exact for block in prefix.blocks)
    assert builder.build(routed, 2000, reference=reference, origin=recorded).blocks[-1].tokens == (
        1996  # the same count: the recorded positions, as they were
    )
