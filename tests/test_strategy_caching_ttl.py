"""``caching:ttl=1h`` over a recording that already marks 5m breakpoints, and placed
breakpoints below the model's minimum.

Anthropic takes 1h breakpoints only before 5m ones, so a client that chooses the hour sets it
on its recorded breakpoints too: they are raised, never followed by a 1h one. A placed
breakpoint whose prefix is below the model's minimum caches nothing, as online; a note per
trace says how many.
"""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import yaml

from costsim.engine import Engine, Variant, make_step
from costsim.model import CacheControl
from costsim.providers.normalise import load_trace

SYSTEM = "You are a careful support agent for a hardware shop. " * 160  # well over 1,024 tokens


def _cassette(
    tmp_path: Path,
    *,
    system: str,
    usages: list[dict[str, int]],
    system_ttl: str | None = "5m",
    question: str = "Where is my order number {i}?",
) -> Path:
    """Calls of one conversation 30 s apart, the system prompt marked with ``system_ttl``."""
    interactions = []
    mark: dict[str, Any] | None = None
    if system_ttl is not None:
        mark = {"type": "ephemeral"} if system_ttl == "5m" else {"type": "ephemeral", "ttl": "1h"}
    for i, usage in enumerate(usages):
        block: dict[str, Any] = {"type": "text", "text": system}
        if mark is not None:
            block["cache_control"] = mark
        request = {
            "model": "claude-sonnet-4-5",
            "max_tokens": 512,
            "system": [block],
            "messages": [{"role": "user", "content": question.format(i=i)}],
        }
        response = {
            "id": f"msg_{i}",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5-20250929",
            "content": [{"type": "text", "text": "It ships tomorrow."}],
            "stop_reason": "end_turn",
            "usage": {"output_tokens": 20, **usage},
        }
        interactions.append(
            {
                "request": {
                    "method": "POST",
                    "uri": "https://api.anthropic.com/v1/messages",
                    "body": json.dumps(request),
                    "headers": {"content-type": ["application/json"]},
                },
                "response": {
                    "status": {"code": 200, "message": "OK"},
                    "headers": {"date": [f"Tue, 04 Nov 2025 12:00:{30 * i:02d} GMT"]},
                    "body": {"string": json.dumps(response)},
                },
            }
        )
    path = tmp_path / "support.yaml"
    path.write_text(yaml.safe_dump({"version": 1, "interactions": interactions}))
    return path


RECORDED_5M = [
    {"input_tokens": 14, "cache_creation_input_tokens": 1800, "cache_read_input_tokens": 0},
    {"input_tokens": 14, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 1800},
]


def test_ttl_1h_raises_the_recorded_5m_breakpoint_and_bills_the_hour(tmp_path: Path) -> None:
    trace = load_trace(_cassette(tmp_path, system=SYSTEM, usages=RECORDED_5M))
    engine = Engine([trace])
    variant = Variant("hour", (make_step("caching", {"ttl": "1h", "placement": ["system"]}),))
    result = engine.run(variant)
    (simulated,) = result.traces
    for item in simulated.calls:
        assert item.sim.call.system[0].cache_control == CacheControl("1h")
    first, second = (item.usage for item in simulated.calls)
    assert first is not None and second is not None
    # the recorded boundary pins the breakpoint: 1,800 written for the hour, then read
    assert (first.cache_write_1h, first.cache_write_5m, first.uncached_input) == (1800, 0, 14)
    assert (second.cache_read, second.cache_write, second.uncached_input) == (1800, 0, 14)
    # Sonnet 4.5: $3 input, $6 1h write, $0.30 read, $15 output per million
    expected = (
        Decimal(1800) * 6 + Decimal(28) * 3 + Decimal(1800) * Decimal("0.30") + Decimal(40) * 15
    ) / 1_000_000
    assert result.totals().cost_usd == expected
    messages = [event.message for event in result.events]
    assert "raised 1 recorded 5m breakpoint(s) to 1h" in messages
    assert not any("1h entries first" in message for message in messages)  # a valid request


def test_ttl_1h_never_follows_a_5m_breakpoint(tmp_path: Path) -> None:
    # the default placement adds a rolling 1h breakpoint after the recorded system one
    trace = load_trace(_cassette(tmp_path, system=SYSTEM, usages=RECORDED_5M))
    result = Engine([trace]).run(Variant("hour", (make_step("caching", {"ttl": "1h"}),)))
    for item in result.traces[0].calls:
        marks = [b.cache_control for b in item.sim.call.system]
        marks += [b.cache_control for m in item.sim.call.messages for b in m.content]
        assert {mark.ttl for mark in marks if mark is not None} == {"1h"}
    assert not any("1h entries first" in event.message for event in result.events)


def test_no_ttl_keeps_recorded_1h_breakpoints_before_its_own(tmp_path: Path) -> None:
    usages = [
        {"input_tokens": 14, "cache_creation_input_tokens": 1800, "cache_read_input_tokens": 0},
        {"input_tokens": 14, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 1800},
    ]
    trace = load_trace(_cassette(tmp_path, system=SYSTEM, usages=usages, system_ttl="1h"))
    result = Engine([trace]).run(Variant("five", (make_step("caching", {}),)))
    for item in result.traces[0].calls:
        assert item.sim.call.system[0].cache_control == CacheControl("1h")
    assert not any("raised" in event.message for event in result.events)
    assert not any("1h entries first" in event.message for event in result.events)


RECORDED_1H = [
    {
        "input_tokens": 14,
        "cache_creation_input_tokens": 1800,
        "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 1800},
        "cache_read_input_tokens": 0,
    },
    {"input_tokens": 14, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 1800},
]


def test_ttl_5m_lowers_the_recorded_1h_breakpoint_and_bills_five_minutes(tmp_path: Path) -> None:
    """A user trial: a recording that writes its system prompt for the hour and reads it 30 s
    later; ``caching:ttl=5m`` kept the 1h write, so no client placement beat the recording
    and ``advise caching`` said keep it, while writing it for five minutes saves the
    difference of the two write prices on 1,800 tokens ($6 - $3.75 per million on Sonnet
    4.5: $0.00405)."""
    trace = load_trace(_cassette(tmp_path, system=SYSTEM, usages=RECORDED_1H, system_ttl="1h"))
    engine = Engine([trace])
    step = make_step("caching", {"ttl": "5m", "placement": ["system"]})
    result = engine.run(Variant("five", (step,)))
    first, second = (item.usage for item in result.traces[0].calls)
    assert first is not None and second is not None
    assert (first.cache_write_5m, first.cache_write_1h, first.uncached_input) == (1800, 0, 14)
    assert (second.cache_read, second.cache_write, second.uncached_input) == (1800, 0, 14)
    recorded = engine.run(Variant("baseline")).totals().cost_usd
    assert recorded is not None
    assert recorded - result.totals().cost_usd == Decimal("0.00405")  # 1,800 x $2.25 / 1M
    messages = [event.message for event in result.events]
    assert "lowered 1 recorded 1h breakpoint(s) to 5m" in messages


def test_advise_caching_names_the_shorter_ttl_when_it_saves(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from costsim.cli import cli

    path = _cassette(tmp_path, system=SYSTEM, usages=RECORDED_1H, system_ttl="1h")
    result = CliRunner().invoke(cli, ["advise", "caching", str(path), "--no-cache"])
    assert result.exit_code == 0, result.output
    assert "Recommended: -s caching:ttl=5m" in result.stdout
    row = next(line for line in result.stdout.splitlines() if line.startswith("static 5m"))
    assert row.split()[3].startswith("-$0.00")  # saves; it cost more while the 1h write stayed
    # the placement that keeps the recorded hour is weighed too (the default caching's)
    kept = next(line for line in result.stdout.splitlines() if line.startswith("static kept"))
    assert kept.split()[3].startswith("+$0.00")  # the 1h write stays: it saves nothing
    (tmp_path / "five").mkdir()
    five = _cassette(tmp_path / "five", system=SYSTEM, usages=RECORDED_5M)
    plain = CliRunner().invoke(cli, ["advise", "caching", str(five), "--no-cache"])
    assert "static kept" not in plain.stdout  # the same as static 5m there


def test_breakpoints_placed_below_the_minimum_are_noted_once(tmp_path: Path) -> None:
    # a 40-token system prompt: every breakpoint the placement adds is below 1,024 tokens
    usages = [{"input_tokens": 60, "cache_creation_input_tokens": 0}] * 3
    path = _cassette(tmp_path, system="Answer briefly.", usages=usages, system_ttl=None)
    result = Engine([load_trace(path)]).run(Variant("cache", (make_step("caching", {}),)))
    notes = [event for event in result.events if event.kind == "note"]
    assert [(event.strategy, event.message) for event in notes] == [
        (
            "caching",
            "all 6 breakpoints placed (last message, system) sit below the 1,024-token "
            "minimum for claude-sonnet-4-5 (the longest, 57 tokens): they cache nothing",
            # the 60-token prompt less the 3 after its last block (TURN_CLOSE)
        ),
        # the simulator's own note, once per trace with the calls it applies to
        (
            "cache",
            "prefix shorter than the 1,024-token minimum for claude-sonnet-4-5: not cached (3 calls)",
        ),
    ]
    assert [event.provenance.index for event in notes if event.provenance] == [0, 0]
    assert result.totals().cache_write_tokens == 0  # nothing cached, as online


def _last_message_hour(tmp_path: Path) -> Path:
    """The recording marks the last message for an hour and the system prompt not at all."""
    path = _cassette(tmp_path, system=SYSTEM, usages=RECORDED_5M, system_ttl=None)
    document = yaml.safe_load(path.read_text())
    for interaction in document["interactions"]:
        body = json.loads(interaction["request"]["body"])
        text = body["messages"][0]["content"]
        body["messages"][0]["content"] = [
            {"type": "text", "text": text, "cache_control": {"type": "ephemeral", "ttl": "1h"}}
        ]
        interaction["request"]["body"] = json.dumps(body)
    path.write_text(yaml.safe_dump(document))
    return path


def test_a_5m_breakpoint_is_never_placed_before_a_recorded_1h_one(tmp_path: Path) -> None:
    trace = load_trace(_last_message_hour(tmp_path))
    result = Engine([trace]).run(Variant("five", (make_step("caching", {}),)))
    for item in result.traces[0].calls:
        assert item.sim.call.system[0].cache_control == CacheControl("1h")  # not 5m
        assert item.sim.call.messages[0].content[0].cache_control == CacheControl("1h")
    messages = [event.message for event in result.events]
    assert "added 1 1h breakpoint(s)" in messages
    assert not any("1h entries first" in message for message in messages)


def test_a_note_repeated_within_one_call_counts_the_call_once(tmp_path: Path) -> None:
    # one call whose two system blocks each carry a 1h breakpoint after a 5m one: the
    # simulator notes the order twice for the one call
    path = _cassette(tmp_path, system=SYSTEM, usages=RECORDED_5M[:1])
    document = yaml.safe_load(path.read_text())
    body = json.loads(document["interactions"][0]["request"]["body"])
    hour = {"type": "ephemeral", "ttl": "1h"}
    body["system"] += [
        {"type": "text", "text": "Be brief.", "cache_control": hour},
        {"type": "text", "text": "Be kind.", "cache_control": hour},
    ]
    document["interactions"][0]["request"]["body"] = json.dumps(body)
    path.write_text(yaml.safe_dump(document))
    step = make_step("caching", {"placement": ["messages"]})  # changes the call: re-simulated
    result = Engine([load_trace(path)]).run(Variant("rolling", (step,)))
    orders = [event.message for event in result.events if "1h entries first" in event.message]
    assert orders and not any("calls)" in message for message in orders)


def test_a_short_prefix_whose_length_is_estimated_says_so(tmp_path: Path) -> None:
    """A system prompt of about half of a 1,400-token request: where it ends is the offline
    count scaled to the recorded prompt, not a recorded number, and the note says so (a
    trial's provider counted a prefix costsim put at 1,017 tokens above the 1,024 minimum)."""
    usages = [{"input_tokens": 1400, "cache_creation_input_tokens": 0}] * 2
    path = _cassette(
        tmp_path,
        system="Refunds take five business days. " * 100,
        usages=usages,
        system_ttl=None,
        question="Order {i}: " + "where is it, and when does it ship? " * 90,
    )
    result = Engine([load_trace(path)]).run(Variant("cache", (make_step("caching", {}),)))
    (note,) = [e.message for e in result.events if e.kind == "note" and "minimum" in e.message]
    assert note == (
        "2 of the 4 breakpoints placed (system) sit below the 1,024-token minimum for "
        "claude-sonnet-4-5 (the longest, an estimated 609 tokens): they cache nothing"
    )


def test_a_request_static_caching_leaves_as_it_was_is_billed_as_recorded(tmp_path: Path) -> None:
    """A request that already carries the breakpoints static caching would place (its system
    prompt and its last message marked) is left as recorded, and billed as recorded,
    exactly, while the next request of its trace gets a breakpoint: an untouched request is
    the recording's, as in a trace a variant leaves alone (it used to be re-simulated,
    flagged estimated and banded, because the placement copied it)."""
    marked = {"type": "ephemeral"}
    question = {"role": "user", "content": [{"type": "text", "text": "My deploy fails with E42.", "cache_control": marked}]}  # fmt: skip
    answer = {"role": "assistant", "content": [{"type": "text", "text": "Rebuild the image."}]}
    again = {"role": "user", "content": [{"type": "text", "text": "Is there a status page?"}]}
    usages = [
        {"input_tokens": 20, "cache_creation_input_tokens": 1810, "cache_read_input_tokens": 0},
        {"input_tokens": 35, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 1810},
    ]
    path = _cassette(tmp_path, system=SYSTEM, usages=usages)
    document = yaml.safe_load(path.read_text())
    for interaction, messages in zip(
        document["interactions"], ([question], [question, answer, again]), strict=True
    ):
        request = json.loads(interaction["request"]["body"])
        request["messages"] = messages
        interaction["request"]["body"] = json.dumps(request)
    path.write_text(yaml.safe_dump(document))
    trace = load_trace(path)
    result = Engine([trace]).run(Variant("c", (make_step("caching", {}),)))
    first, second = result.traces[0].calls
    assert first.call is trace.calls[0]  # nothing placed: the request as recorded
    assert first.usage == trace.calls[0].usage and not first.resimulated
    assert second.resimulated  # a breakpoint on its last message
    totals = result.totals()
    assert (totals.calls_with_usage, totals.estimated_calls) == (1, 1)
