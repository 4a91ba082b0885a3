"""Claude on a Vertex AI regional endpoint is billed at the regional price.

From Claude Sonnet 4.5 on, Anthropic's models on Vertex AI (as on Amazon Bedrock) cost 10%
more at a regional endpoint (``locations/us-east5``) than at the global one; older models
cost the same at both. A trial's us-east5 Sonnet 4.5 calls were billed at the global rate
($0.024345 where $0.0267795 was due) while Bedrock's ``us.`` profile of the same model was
billed right. genai-prices' google list holds only the global price; its aws list holds the
regional one of the same models, which a Vertex AI regional call is now priced from.
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from costsim.engine import Engine, Variant, make_step
from costsim.model import CassetteTrace
from costsim.pricing.ledger import Totals, meter

MILLION = Decimal(1_000_000)


def _vertex(
    folder: Path, location: str, model: str, dated: str, usage: tuple[int, int] = (1000, 100)
) -> CassetteTrace:
    """One rawPredict call at ``location`` (``global``: the global endpoint), recorded
    billing ``usage`` tokens in and out (1,000 and 100)."""
    from tests.test_providers import _cassette

    host = "aiplatform.googleapis.com" if location == "global" else f"{location}-aiplatform"
    host = host if host.endswith(".com") else f"{host}.googleapis.com"
    uri = (
        f"https://{host}/v1/projects/p/locations/{location}/publishers/anthropic/models/"
        f"{model}:rawPredict"
    )
    request = {
        "anthropic_version": "vertex-2023-10-16",
        "max_tokens": 256,
        "messages": [{"role": "user", "content": "Plan the release."}],
    }
    response = {
        "id": "msg_01",
        "type": "message",
        "role": "assistant",
        "model": dated,
        "content": [{"type": "text", "text": "Tag, build, publish."}],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": usage[0], "output_tokens": usage[1]},
    }
    folder.mkdir()
    return _cassette(folder, uri, request, response)


def _cost(trace: CassetteTrace) -> Decimal | None:
    return Totals.of(meter(call) for call in trace.calls).cost_usd


@pytest.mark.parametrize(
    ("location", "model", "dated", "rates"),
    [
        # Sonnet 4.5: $3 / $15 global, $3.30 / $16.50 regional, per million tokens
        ("us-east5", "claude-sonnet-4-5@20250929", "claude-sonnet-4-5-20250929", ("3.30", "16.50")),
        ("europe-west1", "claude-sonnet-4-5@20250929", "claude-sonnet-4-5-20250929", ("3.30", "16.50")),
        ("global", "claude-sonnet-4-5@20250929", "claude-sonnet-4-5-20250929", ("3", "15")),
        # Haiku 4.5: $1 / $5 global, $1.10 / $5.50 regional
        ("us-east5", "claude-haiku-4-5@20251001", "claude-haiku-4-5-20251001", ("1.10", "5.50")),
        # Sonnet 4 predates the premium: $3 / $15 at either endpoint
        ("us-east5", "claude-sonnet-4@20250514", "claude-sonnet-4-20250514", ("3", "15")),
    ],
)  # fmt: skip
def test_a_vertex_call_is_billed_at_its_endpoints_price(
    tmp_path: Path, location: str, model: str, dated: str, rates: tuple[str, str]
) -> None:
    trace = _vertex(tmp_path / "cassette", location, model, dated)
    (call,) = trace.calls
    assert call.platform is not None and call.platform.value == "google-vertex"
    expected = (1000 * Decimal(rates[0]) + 100 * Decimal(rates[1])) / MILLION
    assert _cost(trace) == expected


def test_a_call_routed_on_a_regional_endpoint_is_billed_at_the_targets_regional_price(
    tmp_path: Path,
) -> None:
    """Routing keeps the call on its endpoint: us-east5 Sonnet 4.5 ($0.00495) to Haiku 4.5
    there, $1.10 / $5.50 per million: $0.00165 (it was $0.0015, the global price)."""
    trace = _vertex(tmp_path / "cassette", "us-east5", "claude-sonnet-4-5@20250929", "x")
    assert _cost(trace) == Decimal("0.00495")
    step = make_step("routing", {"default": "claude-haiku-4-5"})
    result = Engine([trace]).run(Variant("haiku", (step,)))
    assert result.totals().cost_usd == Decimal("0.00165")


def test_a_long_prompt_keeps_the_long_context_rate(tmp_path: Path) -> None:
    """A reviewer's case: 300,000 tokens in, 1,000 out at us-east5. The aws regional entries
    carry no long-context rate, so priced from them the call cost $1.0065, 45% below even the
    global long-context rate ($6 / $22.50 per million above 200K tokens): $1.8225, which it
    keeps (10% below what the regional endpoint bills; genai-prices has no such price)."""
    model, dated = "claude-sonnet-4-5@20250929", "claude-sonnet-4-5-20250929"
    trace = _vertex(tmp_path / "long", "us-east5", model, dated, usage=(300_000, 1000))
    assert _cost(trace) == (300_000 * Decimal(6) + 1000 * Decimal("22.50")) / MILLION
