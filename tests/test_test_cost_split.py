"""A test's figures keep what the recording split: reasoning tokens, 1-hour cache writes, and
the models it called (the plugin's report files had none of them)."""

from __future__ import annotations

from pathlib import Path

import pytest

from costsim.analysis.test_cost import TestCost
from costsim.pricing.ledger import meter
from costsim.providers.normalise import load_trace
from tests.test_cli_report import thinking_cassette
from tests.test_hostile_input import ANTHROPIC_URI, interaction, write_yaml

ROOT = Path(__file__).resolve().parents[1]


def _cost(path: Path) -> TestCost:
    return TestCost.of(meter(call) for call in load_trace(path).calls)


def test_reasoning_tokens_and_models_are_kept() -> None:
    cost = _cost(ROOT / "cassettes" / "openai_responses_reasoning.yaml")
    assert cost.reasoning_tokens == 320 + 112  # by hand: the two responses' usage
    assert cost.models == {"gpt-5-mini-2025-08-07": 2}
    again = TestCost.from_json(cost.to_json())
    assert (again.reasoning_tokens, again.models) == (432, {"gpt-5-mini-2025-08-07": 2})
    total = TestCost()
    total.merge(cost)
    total.merge(_cost(ROOT / "cassettes" / "openai_chat_streaming.yaml"))
    assert total.models == {"gpt-4o-mini-2024-07-18": 1, "gpt-5-mini-2025-08-07": 2}


def test_one_hour_cache_writes_are_kept(tmp_path: Path) -> None:
    usage = {
        "input_tokens": 10,
        "output_tokens": 5,
        "cache_read_input_tokens": 0,
        "cache_creation_input_tokens": 3000,
        "cache_creation": {"ephemeral_5m_input_tokens": 1000, "ephemeral_1h_input_tokens": 2000},
    }
    body = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 10,
        "messages": [{"role": "user", "content": "hi"}],
    }
    response = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5-20250929",
        "content": [{"type": "text", "text": "hello"}],
        "stop_reason": "end_turn",
        "usage": usage,
    }
    path = write_yaml(tmp_path / "c.yaml", [interaction(ANTHROPIC_URI, body, response)])
    cost = _cost(path)
    assert (cost.cache_write_tokens, cost.cache_write_1h_tokens) == (3000, 2000)


def test_a_file_older_than_them_reads_and_a_bad_models_map_is_refused() -> None:
    old = TestCost(calls=1, prompt_tokens=5).to_json()
    for name in (
        "reasoning_tokens",
        "cache_write_1h_tokens",
        "models",
        "unreported_thinking_calls",
    ):
        del old[name]
    assert TestCost.from_json(old).models == {}
    with pytest.raises(ValueError, match="models must map model names to call counts"):
        TestCost.from_json({**old, "models": {"gpt-4o": 0}})


def test_thinking_not_counted_apart_is_said_not_read_as_no_reasoning(tmp_path: Path) -> None:
    """Anthropic bills thinking inside output_tokens: a test's reasoning_tokens of 0 would
    read as no thinking at all."""
    path = thinking_cassette(tmp_path)
    cost = _cost(path)
    assert (cost.output_tokens, cost.reasoning_tokens, cost.unreported_thinking_calls) == (
        3000,
        0,
        1,
    )
    assert TestCost.from_json(cost.to_json()).unreported_thinking_calls == 1
