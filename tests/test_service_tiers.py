"""Calls billed at a service tier's prices (OpenAI flex and priority processing, batch), checked
against figures worked out by hand from genai-prices' listed prices."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from costsim.engine import Engine, Variant, make_step
from costsim.model import Usage
from costsim.pricing.ledger import meter
from costsim.pricing.prices import price
from costsim.providers.normalise import load_trace
from tests.test_providers import _cassette

CHAT = "https://api.openai.com/v1/chat/completions"
MESSAGES = "https://api.anthropic.com/v1/messages"


def _chat(tier: str | None, *, cached: int = 0) -> dict[str, Any]:
    reply: dict[str, Any] = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "gpt-5-2025-08-07",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"}}],
        "usage": {
            "prompt_tokens": 1000,
            "completion_tokens": 100,
            "total_tokens": 1100,
            "prompt_tokens_details": {"cached_tokens": cached},
        },
    }
    if tier is not None:
        reply["service_tier"] = tier
    return reply


REQUEST = {"model": "gpt-5", "messages": [{"role": "user", "content": "hi"}]}


@pytest.mark.parametrize(
    ("tier", "cached", "cost"),
    [
        # gpt-5 per million tokens: standard $1.25 in, $0.125 cached, $10 out; flex $0.625,
        # $0.0625, $5; priority $2.50, $0.25, $20 (genai-prices' first listed tier prices,
        # which bill this call of 2025-11-04 too)
        (None, 0, "0.00225"),  # 1000 x 1.25 + 100 x 10
        ("default", 0, "0.00225"),
        ("flex", 0, "0.001125"),  # 1000 x 0.625 + 100 x 5
        ("flex", 800, "0.000675"),  # 200 x 0.625 + 800 x 0.0625 + 100 x 5
        ("priority", 0, "0.0045"),  # 1000 x 2.5 + 100 x 20
    ],
)
def test_a_call_is_billed_at_the_tier_its_response_names(
    tmp_path: Path, tier: str | None, cached: int, cost: str
) -> None:
    (call,) = _cassette(tmp_path, CHAT, REQUEST, _chat(tier, cached=cached)).calls
    assert call.usage is not None
    assert call.usage.tier == (tier if tier in ("flex", "priority") else None)
    metered = meter(call)
    assert metered.price is not None and metered.price.amount == Decimal(cost)


def test_a_stream_names_its_tier_in_its_chunks(tmp_path: Path) -> None:
    chunks = [
        {"id": "c", "object": "chat.completion.chunk", "model": "gpt-5", "service_tier": "flex",
         "choices": [{"index": 0, "delta": {"content": "hi"}}]},
        {"id": "c", "object": "chat.completion.chunk", "model": "gpt-5", "service_tier": "flex",
         "choices": [], "usage": {"prompt_tokens": 1000, "completion_tokens": 100,
                                  "total_tokens": 1100}},
    ]  # fmt: skip
    body = "".join(f"data: {json.dumps(chunk)}\n\n" for chunk in chunks) + "data: [DONE]\n\n"
    (call,) = _cassette(tmp_path, CHAT, {**REQUEST, "stream": True}, body).calls
    assert call.usage is not None and call.usage.tier == "flex"
    assert meter(call).price.amount == Decimal("0.001125")  # type: ignore[union-attr]


def test_a_tier_without_a_price_is_unpriced_never_standard(tmp_path: Path) -> None:
    """Anthropic's Priority Tier has no listed price: the call is unpriced, its standard
    price the part known (priority costs more, never less)."""
    reply = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5-20250929",
        "content": [{"type": "text", "text": "hi"}],
        "usage": {"input_tokens": 1000, "output_tokens": 100, "service_tier": "priority"},
    }
    request = {"model": "claude-sonnet-4-5", "max_tokens": 10, "messages": REQUEST["messages"]}
    (call,) = _cassette(tmp_path, MESSAGES, request, reply).calls
    found = meter(call).price
    assert found is not None and found.amount is None
    assert found.unpriced_reason == (
        "genai-prices has no priority price for anthropic model 'claude-sonnet-4-5-20250929'"
    )
    assert found.lower_bound == Decimal("0.0045")  # 1000 x $3 + 100 x $15 per million


def test_anthropic_standard_and_batch_tiers(tmp_path: Path) -> None:
    """``standard`` is the list price; Message Batches results bill half (genai-prices'
    batch prices for claude-sonnet-4-5: $1.50 in, $7.50 out per million)."""
    standard = Usage(uncached_input=1000, output=100)
    batch = Usage(uncached_input=1000, output=100, tier="batch")
    at = datetime(2025, 11, 4, tzinfo=UTC)
    assert price(standard, model="claude-sonnet-4-5", provider="anthropic", at=at).amount == (
        Decimal("0.0045")
    )
    assert price(batch, model="claude-sonnet-4-5", provider="anthropic", at=at).amount == (
        Decimal("0.00225")
    )


def test_an_estimated_call_keeps_its_tier(tmp_path: Path) -> None:
    """A flex stream recorded without usage (no include_usage) is estimated: at flex prices,
    half the standard ones for gpt-5, as its chunks say; it used to be priced at standard."""
    costs = {}
    for tier in ("flex", "default"):
        chunk = {"id": "c", "object": "chat.completion.chunk", "model": "gpt-5",
                 "service_tier": tier, "choices": [{"index": 0, "delta": {"content": "hi"}}]}  # fmt: skip
        body = f"data: {json.dumps(chunk)}\n\ndata: [DONE]\n\n"
        folder = tmp_path / tier
        folder.mkdir()
        (call,) = _cassette(folder, CHAT, {**REQUEST, "stream": True}, body).calls
        assert call.usage is None and call.service_tier == (tier if tier == "flex" else None)
        engine = Engine([load_trace(folder / "c.yaml")])
        (simulated,) = engine.run(Variant("as recorded")).traces[0].calls
        assert simulated.usage is not None and simulated.usage.estimated
        found = meter(simulated.call, usage=simulated.usage).price
        assert found is not None and found.amount is not None
        costs[tier] = found.amount
    assert costs["flex"] * 2 == costs["default"]


def test_a_call_routed_to_a_model_without_its_tier_is_billed_at_standard(tmp_path: Path) -> None:
    """A gpt-5 flex call routed to gpt-4o-mini, which has no flex price: billed at its
    standard price ($0.15 / $0.60 per million), not left "cost unknown" for the variant."""
    _cassette(tmp_path, CHAT, REQUEST, _chat("flex"))
    engine = Engine([load_trace(tmp_path / "c.yaml")])
    variant = Variant("r", (make_step("routing", {"default": "gpt-4o-mini"}),))
    result = engine.run(variant)
    (call,) = result.traces[0].calls
    assert call.call.model == "gpt-4o-mini" and call.usage is not None
    (event,) = result.events
    assert event.message.endswith(
        "(default; no flex price for gpt-4o-mini: billed at its standard price)"
    )
    assert call.usage.tier is None
    found = meter(call.call, usage=call.usage).price
    # the routed request is counted again (1,001 tokens here): x $0.15, + 100 x $0.60
    expected = (call.usage.prompt_total * Decimal("0.15") + 100 * Decimal("0.60")) / 1_000_000
    assert found is not None and found.amount == expected
    assert abs(call.usage.prompt_total - 1000) <= 5


def test_a_tiered_call_pays_its_searches_or_is_unpriced() -> None:
    """The tier path bills web searches as the standard path does: at genai-prices' fee
    (gpt-5 flex: 1,000 x $0.625 + 100 x $5 per million, + $10 per 1,000 searches), and a
    model with no search fee is unpriced, not billed its tokens alone."""
    at = datetime(2026, 11, 1, tzinfo=UTC)
    searched = Usage(uncached_input=1000, output=100, web_searches=1, tier="flex")
    assert price(searched, model="gpt-5", provider="openai", at=at).amount == Decimal("0.011125")
    found = price(searched, model="gemini-3.8-flash-tts", provider="google", at=at)
    assert found.amount is None and found.unpriced_reason is not None
    assert "no web search fee" in found.unpriced_reason
