"""The auto caching policy knows what the recording shows the client had sent, and says what
it changed in every request it changed.

tests/data/warm_then_single.yaml holds three Sonnet 4.5 calls: #0 reads a 2,000-token system
prefix nothing in the cassette wrote (the client had sent it before the recording began),
#1 reads it again 30 s later, and #2, another agent's single-turn request, writes 1,200 tokens
(5m) it never sends again. Per million tokens: $3 input, $3.75 5m write, $0.30 read, $15 out.
"""

from __future__ import annotations

import dataclasses
import json
from decimal import Decimal
from pathlib import Path

import yaml

from costsim.engine import Engine, Variant, make_step
from costsim.pricing.ledger import meter
from costsim.providers.normalise import load_trace

CASSETTE = Path(__file__).parent / "data" / "warm_then_single.yaml"


def _auto() -> tuple[Decimal, Decimal, list[tuple[int, str]]]:
    engine = Engine([load_trace(CASSETTE)])
    variant = Variant("auto", (make_step("caching", {"policy": "auto"}),))
    result = engine.run(variant)
    recorded = engine.run(Variant("baseline")).totals().cost_usd
    events = [(e.provenance.index, e.message) for e in result.events if e.kind == "change"]
    cost = result.totals().cost_usd
    assert cost is not None and recorded is not None
    return cost, recorded, events


def test_a_prefix_the_recording_shows_warm_is_still_read() -> None:
    """#0 and #1 keep their reads (20 x 3 + 2,000 x 0.30 + 50 x 15 = $0.001410 each): the
    policy used to drop the breakpoint of a single-turn request whose prefix it had not seen in
    the trace, losing a read the strategy did not cause to be lost (+$0.0054 at #0)."""
    cost, recorded, _ = _auto()
    assert recorded == Decimal("0.008130")  # 0.001410 x 2 + (20 x 3 + 1,200 x 3.75 + 750) / 1e6
    # #2 without its breakpoint: 1,220 x 3 + 50 x 15 = $0.004410; saves 1,200 x 0.75 / 1e6
    assert cost == Decimal("0.007230")
    assert recorded - cost == Decimal("0.000900")


def test_every_request_whose_breakpoints_changed_has_its_event() -> None:
    """One change, at #2 (its breakpoint taken away); none at #0 or #1, whose breakpoints stay
    as recorded (an event used to be listed for #1, and none for #2)."""
    _, _, events = _auto()
    assert events == [(2, "auto: no breakpoint: the request's 1 taken away")]


def _realistic(tmp_path: Path) -> Path:
    """The cassette with #0's system prompt as long as the 2,000 tokens it read (a runbook
    of 168 lines): what the code sends now is then estimated from text that agrees with the
    recording."""
    document = yaml.safe_load(CASSETTE.read_text())
    request = json.loads(document["interactions"][0]["request"]["body"])
    request["system"][0]["text"] += "\n\n" + RUNBOOK_LINE * 168
    document["interactions"][0]["request"]["body"] = json.dumps(request)
    path = tmp_path / "warm.yaml"
    path.write_text(yaml.safe_dump(document))
    return path


RUNBOOK_LINE = "Refunds reach the card five business days after approval. "


def test_a_warm_prefix_follows_an_edited_system_prompt(tmp_path: Path) -> None:
    """The code now sends #0 with a sentence added to its system prompt (a drift, as the
    pytest plugin meters it). The prefix was warm because the same client had sent it
    before the recording began; that client sends the edited prompt now, so the edited prefix
    is warm. It used to be a cold 5m write of the whole prefix: +300% on a small edit."""
    trace = load_trace(_realistic(tmp_path))
    first = trace.calls[0]
    system = (dataclasses.replace(first.system[0], text=first.system[0].text + " Be brief."),)
    sent = {trace.path: [dataclasses.replace(first, system=system), *trace.calls[1:]]}
    (call, *_) = Engine([trace]).run(Variant("as sent"), requests=sent).traces[0].calls
    assert call.usage is not None
    assert call.usage.cache_write == 0
    assert call.usage.prompt_total == 2023  # " Be brief." is 3 tokens, as estimated
    # The 3 tokens grow the system prompt, so the breakpoint on it moves by 3: 2,003 read and
    # the 20-token user turn after it uncached, as recorded. The estimate used to be shared
    # out over the whole prompt (8 uncached, 2,015 read: 12 tokens read that were not).
    assert (call.usage.uncached_input, call.usage.cache_read) == (20, 2003)
    cost = meter(call.call, usage=call.usage).price
    assert cost is not None
    assert cost.amount == Decimal("0.0014109")  # (20 x 3 + 2,003 x 0.30 + 50 x 15) / 1e6


def test_auto_caching_reads_the_edited_warm_prefix_too(tmp_path: Path) -> None:
    """The auto policy over the edited request: it marks the prefix the engine seeds as warm
    (the edited one), so #0 keeps its read; it used to find no warm key, take the request's
    breakpoint away and bill a cold prefix (+$0.0045)."""
    trace = load_trace(_realistic(tmp_path))
    first = trace.calls[0]
    system = (dataclasses.replace(first.system[0], text=first.system[0].text + " Be brief."),)
    sent = {trace.path: [dataclasses.replace(first, system=system), *trace.calls[1:]]}
    auto = Variant("auto", (make_step("caching", {"policy": "auto"}),))
    result = Engine([trace]).run(auto, requests=sent)
    first_call = result.traces[0].calls[0]
    assert first_call.usage is not None and first_call.usage.cache_read >= 2000
    changes = [(e.provenance.index, e.message) for e in result.events if e.kind == "change"]
    assert changes == [(2, "auto: no breakpoint: the request's 1 taken away")]


LOG = "ERROR 2025-10-14 payment gateway timeout while refunding order; retry scheduled. "


def test_text_moved_between_blocks_never_reads_past_the_system_prompt(tmp_path: Path) -> None:
    """The code now sends 119 log lines in its system prompt that the recording sent in the
    user turn: the system block grew, the turn shrank. Shared out by the whole request's
    growth, the system breakpoint landed past the end of the prompt and the user turn was
    billed as a cache read (a review found 4,101 of 4,101 read); blocks that change both
    ways are placed by scaling, and the turn after the breakpoint stays uncached."""
    document = yaml.safe_load(CASSETTE.read_text())
    request = json.loads(document["interactions"][0]["request"]["body"])
    request["system"][0]["text"] += "\n\n" + RUNBOOK_LINE * 168
    request["messages"][0]["content"] = "How long do refunds take? Log:\n" + LOG * 120
    document["interactions"][0]["request"]["body"] = json.dumps(request)
    response = json.loads(document["interactions"][0]["response"]["body"]["string"])
    response["usage"]["input_tokens"] = 2100
    document["interactions"][0]["response"]["body"]["string"] = json.dumps(response)
    path = tmp_path / "moved.yaml"
    path.write_text(yaml.safe_dump(document))
    trace = load_trace(path)
    first = trace.calls[0]
    system = (dataclasses.replace(first.system[0], text=first.system[0].text + "\n\n" + LOG * 119),)
    turn = first.messages[0]
    short = dataclasses.replace(turn.content[0], text="How long do refunds take? Log:\n" + LOG)
    sent = dataclasses.replace(
        first, system=system, messages=(dataclasses.replace(turn, content=(short,)),)
    )
    requests = {trace.path: [sent, *trace.calls[1:]]}
    (call, *_) = Engine([trace]).run(Variant("as sent"), requests=requests).traces[0].calls
    assert call.usage is not None
    assert call.usage.prompt_total == 4101
    # the turn after the breakpoint stays uncached, with the 3 tokens after it (TURN_CLOSE)
    assert (call.usage.uncached_input, call.usage.cache_read) == (32, 4069)


def test_an_edit_is_banded_both_ways_a_removal_only_up_to_the_recording(tmp_path: Path) -> None:
    """What the code sends now replaces text (the runbook as a JSON table, not prose): its
    prompt can go either way whatever the estimate says, so its band is even (a review found
    it capped at the recording, claiming the true prompt no shorter). A strategy that only
    takes text away (truncation here, of nothing; lean context, selective tools) caps it."""
    from costsim.analysis.prompt_band import prompt_error, prompt_sides, removes_only

    trace = load_trace(_realistic(tmp_path))
    first = trace.calls[0]
    text = first.system[0].text
    table = '{"refunds": {"card_days": 5, "after": "approval"}}\n' * 120
    edited = dataclasses.replace(first.system[0], text=text.replace(RUNBOOK_LINE * 168, table))
    sent = [dataclasses.replace(first, system=(edited,)), *trace.calls[1:]]
    engine = Engine([trace])
    result = engine.run(Variant("as sent"), requests={trace.path: sent})
    assert result.sent and not removes_only(result)
    item = result.traces[0].calls[0]
    assert item.usage is not None
    error = prompt_error(item, item.usage, engine.meter)
    assert error > 0 and prompt_sides(item, item.usage, error, removes_only(result)) == (
        error,
        error,
    )
    truncation = engine.run(Variant("t", (make_step("truncation"),)))
    assert removes_only(truncation) and not removes_only(
        engine.run(Variant("c", (make_step("compaction"),)))
    )


def test_a_call_routed_to_another_model_does_not_read_the_old_models_warm_entry() -> None:
    """What the recording shows was cached before it began is the recorded model's entry,
    which the new model cannot read; in a deployment that always routed, the new model's own
    entry was warm in its place (steady state): #0 reads the new model's 2,000 tokens, as the
    recording read its own, never more (a trial's routed calls once read 8,448 tokens each)."""
    trace = load_trace(CASSETTE)
    routing = make_step("routing", {"default": "claude-sonnet-4-20250514"})
    calls = Engine([trace]).run(Variant("r", (routing,))).traces[0].calls
    usages = [(c.usage.uncached_input, c.usage.cache_read, c.usage.cache_write_5m) for c in calls]  # type: ignore[union-attr]
    assert usages == [(20, 2000, 0), (20, 2000, 0), (20, 0, 1200)]
