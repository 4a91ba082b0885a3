"""1-hour cache writes of a model genai-prices has no 1-hour write price for.

Claude Sonnet 4 on Bedrock recorded 2,400 tokens written for an hour: genai-prices gave them
the 5-minute rate ($3.75 a million, not the $6 every listed Claude 1h price is), and the
report said nothing. Such a call is now unpriced, its 5-minute amount the part known.
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from tests.test_hostile_input import ANTHROPIC_REQUEST, interaction, run_cli, write_yaml
from tests.test_real_world_recordings import BEDROCK, BEDROCK_MODEL, _report

ANTHROPIC = "https://api.anthropic.com/v1/messages"


def _reply(model: str) -> dict[str, Any]:
    return {
        "id": "msg_01",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "text", "text": "Hello!"}],
        "stop_reason": "end_turn",
        "usage": {
            "input_tokens": 19,
            "cache_creation_input_tokens": 2400,
            "cache_read_input_tokens": 0,
            "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 2400},
            "output_tokens": 4,
        },
    }


def _bedrock_request() -> dict[str, Any]:
    request = {k: v for k, v in ANTHROPIC_REQUEST.items() if k != "model"}
    return {**request, "anthropic_version": "bedrock-2023-05-31"}


def test_hour_writes_without_a_1h_price_are_unpriced_with_the_5m_amount_as_a_floor(
    tmp_path: Path,
) -> None:
    path = write_yaml(
        tmp_path / "bedrock_1h.yaml",
        [
            interaction(
                f"{BEDROCK}{BEDROCK_MODEL}/invoke",
                _bedrock_request(),
                _reply("claude-sonnet-4-20250514"),
            )
        ],
    )
    totals = _report(path)["totals"]
    assert totals["cache_write_1h_tokens"] == 2400
    assert totals["unpriced_calls"] == 1 and totals["cost_usd"] is None
    # 19 x $3 + 2,400 x $3.75 (the 5-minute rate) + 4 x $15, per million: at least this
    assert Decimal(totals["priced_cost_usd"]) == Decimal(19 * 3 + 2400 * 3.75 + 4 * 15) / 10**6
    table = run_cli("report", path, "--no-cache").output
    assert "≥$0.00912*" in table
    assert "no 1-hour cache-write price for aws model" in " ".join(table.split())


@pytest.mark.parametrize(
    ("uri", "model", "rate"),
    [
        pytest.param(ANTHROPIC, "claude-sonnet-4-20250514", Decimal(1), id="anthropic"),
        pytest.param(
            f"{BEDROCK}us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/invoke",
            "claude-sonnet-4-5-20250929",
            Decimal("1.1"),  # a regional endpoint: 10% above the global prices
            id="bedrock-sonnet-4-5",
        ),
    ],
)
def test_hour_writes_with_a_1h_price_are_priced_at_it(
    tmp_path: Path, uri: str, model: str, rate: Decimal
) -> None:
    request = _bedrock_request() if "bedrock" in uri else {**ANTHROPIC_REQUEST, "model": model}
    path = write_yaml(tmp_path / "one.yaml", [interaction(uri, request, _reply(model))])
    totals = _report(path)["totals"]
    assert totals["unpriced_calls"] == 0
    # 19 x $3 + 2,400 x $6 (twice the input rate) + 4 x $15, per million (x 1.1 regional)
    assert Decimal(totals["cost_usd"]) == rate * (19 * 3 + 2400 * 6 + 4 * 15) / 10**6


def _conversation(tmp_path: Path, uri: str, model: str) -> Path:
    """Three calls at 12:00, 12:02 and 12:22 sending one long system prompt, nothing cached."""
    system = "You are a careful support agent for a hardware shop. " * 200
    items = []
    for i in range(3):
        request: dict[str, Any] = {
            "max_tokens": 256,
            "system": system,
            "messages": [{"role": "user", "content": f"Where is order {i}?"}],
        }
        if "bedrock" in uri:
            request["anthropic_version"] = "bedrock-2023-05-31"
        else:
            request["model"] = model
        reply = {**_reply(model), "usage": {"input_tokens": 2230, "output_tokens": 12}}
        item = interaction(uri, request, reply)
        minute = (0, 2, 22)[i]
        item["response"]["headers"]["Date"] = [f"Tue, 04 Nov 2025 12:{minute:02d}:00 GMT"]
        items.append(item)
    return write_yaml(tmp_path / "conversation.yaml", items)


@pytest.mark.parametrize(
    ("uri", "hour"),
    [
        pytest.param(ANTHROPIC, True, id="anthropic-has-a-1h-price"),
        pytest.param(f"{BEDROCK}{BEDROCK_MODEL}/invoke", False, id="bedrock-has-none"),
    ],
)
def test_the_oracle_writes_for_an_hour_only_where_the_hour_has_a_price(
    tmp_path: Path, uri: str, hour: bool
) -> None:
    """The third call comes 20 minutes after the second: a 1h entry serves both later calls,
    a 5m one the second only. The oracle writes for the hour where the hour has a price; where
    it has none, a plan that writes for an hour is unpriced, so it is never the one chosen: the
    oracle writes for 5 minutes, and its cost stays known."""
    from costsim.engine import Engine, Variant, make_step
    from costsim.providers.normalise import load_trace

    trace = load_trace(_conversation(tmp_path, uri, "claude-sonnet-4-20250514"))
    step = make_step("caching", {"policy": "oracle"})
    totals = Engine([trace]).run(Variant("oracle", (step,))).totals()
    assert totals.unpriced_calls == 0 and totals.cost_usd is not None
    assert (totals.cache_write_1h_tokens > 0) is hour
    assert (totals.cache_write_5m_tokens > 0) is not hour
    assert totals.cache_read_tokens > 0


def test_advice_says_a_1h_ttl_has_no_known_price_where_it_has_none(tmp_path: Path) -> None:
    path = _conversation(tmp_path, f"{BEDROCK}{BEDROCK_MODEL}/invoke", "claude-sonnet-4-20250514")
    said = " ".join(run_cli("advise", "caching", path, "--no-cache").output.split())
    assert "re-sent after 5 minutes (a 1h TTL keeps it, at no known price)" in said


def test_check_cache_says_a_write_without_a_breakpoint_is_not_a_ttl_split(tmp_path: Path) -> None:
    """Recorded 1h writes, a request without a breakpoint: check-cache blamed the 5m/1h split
    of a prediction that wrote nothing."""
    path = write_yaml(
        tmp_path / "auto.yaml",
        [interaction(ANTHROPIC, {**ANTHROPIC_REQUEST, "model": "claude-sonnet-4-5"}, _reply("x"))],
    )
    said = " ".join(run_cli("check-cache", path, "--no-cache").output.split())
    assert "recorded write of 2,400 tokens where the simulator writes none" in said
    assert "5m/1h split" not in said
