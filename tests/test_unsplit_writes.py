"""Cache writes a recorded Anthropic usage does not split into 5-minute and 1-hour writes.

A usage without ``cache_creation`` (an older API version, a gateway passing the total
through) gives only ``cache_creation_input_tokens``. Read as 5-minute writes, a request whose
every breakpoint asks for 1h was billed at $3.75 a million where Anthropic charged $6 (Claude
Sonnet 4): its writes are 1h writes, as its markers say; a request marking both TTLs keeps the
5-minute price, a lower bound, and says so.
"""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from costsim.io.bodies import SseEvent
from costsim.providers.anthropic import AnthropicMessages
from tests.test_hostile_input import ANTHROPIC_RESPONSE, interaction, run_cli, write_yaml
from tests.test_real_world_recordings import _report

ANTHROPIC = "https://api.anthropic.com/v1/messages"
MODEL = "claude-sonnet-4-20250514"
SYSTEM = "You are a careful assistant. " * 300


def _marked(ttl: str | None) -> dict[str, Any]:
    return {"type": "ephemeral"} if ttl is None else {"type": "ephemeral", "ttl": ttl}


def _request(system_ttl: str | None, message_ttl: str | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"type": "text", "text": "Say hello."}
    if message_ttl is not None:
        message["cache_control"] = _marked(message_ttl)
    return {
        "model": MODEL,
        "max_tokens": 64,
        "system": [{"type": "text", "text": SYSTEM, "cache_control": _marked(system_ttl)}],
        "messages": [{"role": "user", "content": [message]}],
    }


def _reply(split: bool = False) -> dict[str, Any]:
    usage: dict[str, Any] = {
        "input_tokens": 19,
        "cache_creation_input_tokens": 2400,
        "cache_read_input_tokens": 0,
        "output_tokens": 4,
    }
    if split:
        usage["cache_creation"] = {
            "ephemeral_5m_input_tokens": 2400,
            "ephemeral_1h_input_tokens": 0,
        }
    return {**ANTHROPIC_RESPONSE, "model": MODEL, "usage": usage}


def _cassette(tmp_path: Path, request: dict[str, Any], reply: dict[str, Any]) -> Path:
    return write_yaml(tmp_path / "unsplit.yaml", [interaction(ANTHROPIC, request, reply)])


# per million: 19 input x $3 + 2,400 written x (the TTL's rate) + 4 output x $15
HOUR = Decimal(19 * 3 + 2400 * 6 + 4 * 15) / 10**6
FIVE_MINUTES = (
    Decimal(19 * 3) / 10**6 + Decimal("2400") * Decimal("3.75") / 10**6 + Decimal(60) / 10**6
)


@pytest.mark.parametrize(
    ("system_ttl", "message_ttl", "write_1h", "cost"),
    [
        pytest.param("1h", None, 2400, HOUR, id="every-marker-1h"),
        pytest.param("1h", "1h", 2400, HOUR, id="two-1h-markers"),
        pytest.param(None, None, 0, FIVE_MINUTES, id="default-ttl"),
        pytest.param("5m", "5m", 0, FIVE_MINUTES, id="every-marker-5m"),
    ],
)
def test_unsplit_writes_follow_the_requests_markers(
    tmp_path: Path, system_ttl: str | None, message_ttl: str | None, write_1h: int, cost: Decimal
) -> None:
    document = _report(_cassette(tmp_path, _request(system_ttl, message_ttl), _reply()))
    totals = document["totals"]
    assert totals["cache_write_1h_tokens"] == write_1h
    assert totals["cache_write_5m_tokens"] == 2400 - write_1h
    assert Decimal(totals["cost_usd"]) == cost
    assert "mixed-ttl-writes" not in [note["kind"] for note in document["notes"]]


def test_a_recorded_split_is_kept_whatever_the_markers_say(tmp_path: Path) -> None:
    totals = _report(_cassette(tmp_path, _request("1h"), _reply(split=True)))["totals"]
    assert (totals["cache_write_5m_tokens"], totals["cache_write_1h_tokens"]) == (2400, 0)


def test_a_request_marking_both_ttls_is_priced_at_5m_and_warned_of(tmp_path: Path) -> None:
    path = _cassette(tmp_path, _request("1h", "5m"), _reply())
    document = _report(path)
    assert document["totals"]["cache_write_5m_tokens"] == 2400
    assert Decimal(document["totals"]["cost_usd"]) == FIVE_MINUTES
    notes = [note for note in document["notes"] if note["kind"] == "mixed-ttl-writes"]
    assert len(notes) == 1 and notes[0]["interaction"] == 0
    assert "lower bound" in notes[0]["message"]
    check = run_cli("cassettes", "check", path, "--format", "json")
    rules = [finding["rule"] for finding in json.loads(check.stdout)["findings"]]
    assert "mixed-ttl-writes" in rules


def test_a_streams_unsplit_writes_follow_its_markers_too() -> None:
    start = {
        "type": "message_start",
        "message": {
            "model": MODEL,
            "usage": {"input_tokens": 19, "cache_creation_input_tokens": 2400, "output_tokens": 1},
        },
    }
    events: list[dict[str, Any]] = [
        start,
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text"}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hi"}},
        {"type": "message_delta", "usage": {"output_tokens": 4}},
        {"type": "message_stop"},
    ]
    parsed = AnthropicMessages().parse_stream([SseEvent(e["type"], e) for e in events])
    assert parsed.unsplit_writes and parsed.usage is not None
    assert parsed.usage.cache_write_5m == 2400


def _tool_loop(system_ttl: str | None, result_ttl: str) -> dict[str, Any]:
    """A request whose last turn returns a tool result with a marker on its own text."""
    request = _request(system_ttl)
    request["messages"] = [
        {"role": "user", "content": "Look it up."},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "find", "input": {}}],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "t1",
                    "content": [
                        {"type": "text", "text": "found", "cache_control": _marked(result_ttl)}
                    ],
                }
            ],
        },
    ]
    if system_ttl is None:
        del request["system"][0]["cache_control"]
    return request


def test_a_marker_inside_a_tool_result_counts_too(tmp_path: Path) -> None:
    """A 1h marker on a tool result's text, the request's only one: 1h writes (they used to
    be read as 5m); beside a 1h system marker, a 5m one there makes the request mixed (it
    used to be priced wholly at 1h, above the bill's lower bound, without a word)."""
    alone = _report(_cassette(tmp_path, _tool_loop(None, "1h"), _reply()))
    assert alone["totals"]["cache_write_1h_tokens"] == 2400
    mixed = _report(_cassette(tmp_path, _tool_loop("1h", "5m"), _reply()))
    assert mixed["totals"]["cache_write_5m_tokens"] == 2400
    assert "mixed-ttl-writes" in [note["kind"] for note in mixed["notes"]]


def _hybrid_reply(read: int, written: int) -> dict[str, Any]:
    reply = _reply()
    reply["usage"] = {
        "input_tokens": 19,
        "cache_creation_input_tokens": written,
        "cache_read_input_tokens": read,
        "output_tokens": 4,
    }
    return reply


def _hybrid_request(turns: int) -> dict[str, Any]:
    """A 1h system prompt (about 2,100 tokens) and a conversation, its last turn marked 5m."""
    request = _request("1h")
    history = [
        {"role": role, "content": f"Turn {i}: " + "tell me more about the runbook. " * 40}
        for i in range(turns)
        for role in ("user", "assistant")
    ]
    last = {"type": "text", "text": "Say hello.", "cache_control": _marked("5m")}
    request["messages"] = [*history, {"role": "user", "content": [last]}]
    return request


@pytest.mark.parametrize(
    ("turns", "read", "written"),
    [
        pytest.param(0, 2400, 50, id="read-ends-on-the-1h-breakpoint"),
        pytest.param(3, 3100, 300, id="read-well-past-it"),
    ],
)
def test_a_read_past_the_1h_breakpoint_wrote_only_5m_entries(
    tmp_path: Path, turns: int, read: int, written: int
) -> None:
    """The usual hybrid: a 1h system prompt, a 5m breakpoint on the conversation. After the
    first turn the read covers the system prompt, so Anthropic bills every write at 5m (its
    "Mixing different TTLs": 1h for B - A, B the last 1h breakpoint, A the read's end): the
    price is exact, and no lower-bound warning (cassettes check used to exit 1 on it)."""
    path = _cassette(tmp_path, _hybrid_request(turns), _hybrid_reply(read, written))
    document = _report(path)
    assert document["totals"]["cache_write_5m_tokens"] == written
    assert "mixed-ttl-writes" not in [note["kind"] for note in document["notes"]]
    assert run_cli("cassettes", "check", path).exit_code == 0
    # 19 x $3 + read x $0.30 + written x $3.75 + 4 x $15, per million
    cost = Decimal(57) + Decimal(read) * Decimal("0.3") + Decimal(written) * Decimal("3.75") + 60
    assert Decimal(document["totals"]["cost_usd"]) == cost / 10**6


def test_a_read_ending_before_the_1h_breakpoint_leaves_the_split_unknown(tmp_path: Path) -> None:
    path = _cassette(tmp_path, _hybrid_request(3), _hybrid_reply(1000, 2400))
    notes = [note["kind"] for note in _report(path)["notes"]]
    assert "mixed-ttl-writes" in notes
