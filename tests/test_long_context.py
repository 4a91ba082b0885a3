"""Long-context tiers apply to requests that enable the 1M window, not to server-tool sums.

Anthropic bills a prompt above 200K tokens at its long-context rates (Sonnet 4.5: $6 in,
$22.50 out, against $3 / $15) only with the ``context-1m`` beta. A response that ran server
tools records usage summed over its iterations, each within the standard 200K window.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

import costsim
from costsim.analysis.bands import call_terms
from costsim.analysis.report import load_traces
from costsim.analysis.spread import Spread
from costsim.engine import Engine, Variant, make_step
from costsim.engine.simulate import SimulatedCall
from costsim.model import NoteKind, Usage
from costsim.pricing.ledger import Totals, meter
from costsim.pricing.prices import base_parts, price
from costsim.pricing.units import unit_prices
from costsim.providers._window import long_window
from costsim.providers.normalise import load_trace

WHEN = datetime(2025, 11, 4, 12, tzinfo=UTC)
SEARCH = {"type": "web_search_20250305", "name": "web_search", "max_uses": 10}


def _cassette(
    tmp_path: Path,
    *,
    prompt: int,
    searches: int = 10,
    headers: dict[str, list[str]] | None = None,
    name: str = "c.yaml",
) -> Path:
    request = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 1024,
        "messages": [{"role": "user", "content": "Search the news, ten times."}],
        "tools": [SEARCH] if searches else [],
    }
    content: list[dict[str, Any]] = []
    if searches:
        content.append(
            {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}}
        )
    content.append({"type": "text", "text": "Done."})
    usage: dict[str, Any] = {"input_tokens": prompt, "output_tokens": 1000}
    if searches:
        usage["server_tool_use"] = {"web_search_requests": searches}
    response = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5-20250929",
        "content": content,
        "stop_reason": "end_turn",
        "usage": usage,
    }
    document = {
        "version": 1,
        "interactions": [
            {
                "request": {
                    "method": "POST",
                    "uri": "https://api.anthropic.com/v1/messages?beta=true",
                    "body": json.dumps(request),
                    "headers": {"content-type": ["application/json"], **(headers or {})},
                },
                "response": {
                    "status": {"code": 200, "message": "OK"},
                    "headers": {"date": ["Tue, 04 Nov 2025 12:00:00 GMT"]},
                    "body": {"string": json.dumps(response)},
                },
            }
        ],
    }
    path = tmp_path / name
    path.write_text(yaml.safe_dump(document))
    return path


def _cost(path: Path) -> Decimal | None:
    return Totals.of([meter(call) for call in load_trace(path).calls]).cost_usd


def test_a_server_tool_sum_over_200k_is_billed_at_the_base_tier(tmp_path: Path) -> None:
    # 401,468 tokens summed over ten web-search iterations, no 1M window: $3 / $15 per million
    # and $10 per thousand searches, 1.204404 + 0.015 + 0.1 (the long tier: 2.531308).
    path = _cassette(tmp_path, prompt=401_468)
    (call,) = load_trace(path).calls
    assert call.usage is not None and call.usage.base_tier
    assert [note.kind for note in call.notes] == [NoteKind.BASE_TIER]  # said, with -v and check
    assert _cost(path) == Decimal("1.319404")


def test_the_1m_window_beta_keeps_the_long_context_tier(tmp_path: Path) -> None:
    # 401,468 x $6 + 1,000 x $22.50 per million + 10 searches at $10 per thousand
    beta = {"anthropic-beta": ["web-search-2025-03-05,context-1m-2025-08-07"]}
    path = _cassette(tmp_path, prompt=401_468, headers=beta)
    (call,) = load_trace(path).calls
    assert call.usage is not None and not call.usage.base_tier
    assert _cost(path) == Decimal("2.531308")


def test_one_request_over_200k_without_server_tools_is_long_context(tmp_path: Path) -> None:
    # no server tools: the recorded prompt is one request's, so the window must have been on
    path = _cassette(tmp_path, prompt=250_000, searches=0)
    assert _cost(path) == Decimal("1.5") + Decimal("0.0225")
    # and the report says why a request without the beta is priced so (a trial saw $1.26
    # against its $0.63, with no note): the recorder lost the header
    (call,) = load_trace(path).calls
    assert [note.kind for note in call.notes] == [NoteKind.LONG_WINDOW_UNSEEN]
    beta = {"anthropic-beta": ["context-1m-2025-08-07"]}
    (seen,) = load_trace(_cassette(tmp_path, prompt=250_000, searches=0, headers=beta)).calls
    assert not seen.notes
    (short,) = load_trace(_cassette(tmp_path, prompt=150_000, searches=0, name="s.yaml")).calls
    assert not short.notes


def test_under_200k_the_flag_changes_nothing(tmp_path: Path) -> None:
    path = _cassette(tmp_path, prompt=150_000)
    assert not load_trace(path).calls[0].notes  # nothing to say below the tier
    assert _cost(path) == Decimal("0.45") + Decimal("0.015") + Decimal("0.1")


def test_the_window_is_read_from_the_header_or_a_platform_body() -> None:
    assert long_window({"anthropic-beta": "context-1m-2025-08-07"}, {})
    assert long_window({"anthropic-beta": "files-api-2025-04-14, context-1m-2025-08-07"}, {})
    assert long_window({}, {"anthropic_beta": ["context-1m-2025-08-07"]})  # Bedrock, Vertex
    assert not long_window({"anthropic-beta": "web-search-2025-03-05"}, {})
    assert not long_window({}, {"anthropic_beta": "interleaved-thinking-2025-05-14"})


def test_unit_prices_at_the_base_tier_whatever_the_prompt() -> None:
    base = unit_prices("claude-sonnet-4-5", "anthropic", WHEN, prompt=400_000, base_tier=True)
    long = unit_prices("claude-sonnet-4-5", "anthropic", WHEN, prompt=400_000)
    assert base is not None and long is not None
    assert (base.input, base.output) == (Decimal("0.000003"), Decimal("0.000015"))
    assert (long.input, long.output) == (Decimal("0.000006"), Decimal("0.0000225"))


def test_every_token_class_is_billed_at_base_rates() -> None:
    # $3 input, $0.30 read, $3.75 5m write, $6 1h write, $15 output per million; 5 searches
    usage = Usage(
        uncached_input=300_001,
        cache_read=100_000,
        cache_write_5m=50_000,
        cache_write_1h=20_000,
        output=3_000,
        web_searches=5,
        base_tier=True,
    )
    found = price(usage, model="claude-sonnet-4-5", provider="anthropic", at=WHEN)
    expected = (
        (Decimal("0.900003") + Decimal("0.03") + Decimal("0.1875") + Decimal("0.12"))
        + Decimal("0.045")
        + Decimal("0.05")
    )
    assert found.amount == expected


@given(
    st.tuples(*[st.integers(0, 700_000)] * 5),
    st.integers(0, 20),
    st.integers(100_000, 250_000),  # tier starts are of this order
)
def test_base_parts_add_up_and_each_fits(
    tokens: tuple[int, int, int, int, int], searches: int, limit: int
) -> None:
    usage = Usage(*tokens, web_searches=searches, base_tier=True)
    parts = base_parts(usage, limit)
    for kind in ("uncached_input", "cache_read", "cache_write_5m", "cache_write_1h", "output"):
        assert sum(getattr(part, kind) for part in parts) == getattr(usage, kind)
    assert sum(part.web_searches for part in parts) == searches
    assert all(part.prompt_total <= limit for part in parts)
    assert len(parts) <= max(1, -(-usage.prompt_total // limit)) + 1


def test_a_what_if_keeps_the_base_tier(tmp_path: Path) -> None:
    # caching re-simulates the call: its prompt is still a server-tool sum
    path = _cassette(tmp_path, prompt=401_468)
    simulated = costsim.simulate(path, "caching", cache=False).to_json()
    variant = simulated["variant"]
    tokens = (
        Decimal(variant["uncached_input_tokens"]) * Decimal("0.000003")
        + Decimal(variant["cache_write_5m_tokens"]) * Decimal("0.00000375")
        + Decimal(variant["cache_read_tokens"]) * Decimal("0.0000003")
    )
    assert Decimal(variant["cost_usd"]) == tokens + Decimal("0.015") + Decimal("0.1")


def test_the_corpus_web_search_recordings_cost_the_base_rates(corpus: Path) -> None:
    # pydantic-ai's pause_turn recordings: two calls each, summed over up to ten searches,
    # no context-1m beta among the recorded headers
    folder = corpus / "pydantic__pydantic-ai"
    names = [
        "tests__models__cassettes__test_anthropic__test_pause_turn_web_search_vcr.yaml",
        "tests__models__cassettes__test_anthropic__test_pause_turn_web_search_streaming_vcr.yaml",
    ]
    for name in names:
        path = folder / name
        if not path.exists():
            pytest.skip(f"{path} is not in the corpus")
        calls = load_trace(path).calls
        usages = [call.usage for call in calls if call.usage is not None]
        assert len(usages) == 2 and max(u.prompt_total for u in usages) > 400_000
        expected = sum(
            (
                u.uncached_input * Decimal("0.000003")
                + u.output * Decimal("0.000015")
                + u.web_searches * Decimal("0.01")
                for u in usages
            ),
            start=Decimal(0),
        )
        assert _cost(path) == expected, name
    first = Totals.of([meter(call) for call in load_trace(folder / names[0]).calls])
    assert first.cost_usd == Decimal("2.868606")  # 896,017 in, 2,037 out, 15 searches


def _band_terms(
    tmp_path: Path, system: str, variant: Variant, *, baseline: bool = False
) -> tuple[SimulatedCall, dict[Any, Spread]]:
    """(the simulated call, its band terms) of the one call of a web-search recording under
    ``variant`` (or of the recording's replay, its baseline's simulation): 60,000 prompt
    tokens recorded, the client sending only its system prompt."""
    path = _cassette(tmp_path, prompt=60_000, searches=3)
    document = yaml.safe_load(path.read_text())
    body = json.loads(document["interactions"][0]["request"]["body"])
    body["system"] = system
    document["interactions"][0]["request"]["body"] = json.dumps(body)
    path.write_text(yaml.safe_dump(document))
    engine = Engine(load_traces([path])[0])
    result = engine.run(variant)
    (item,) = (result.baselines if baseline else result.traces)[0].calls
    assert item.resimulated
    return item, call_terms(item, engine.meter)


def test_server_tool_tokens_are_banded_lopsided_only_where_they_could_cache(
    tmp_path: Path,
) -> None:
    """Tokens the provider's own iterations added are billed uncached. With a breakpoint that
    caches, they may have been read ($0.30 against $3 per million: $2.70 below), and so may
    the prefix the simulation writes ($3.75 against $0.30: $3.45 below), or they may have been
    written at 5m ($3.75: $0.75 above); with none, nothing of the request can cache."""
    long_system = "You are a careful research assistant who cites every source. " * 300
    item, terms = _band_terms(tmp_path, long_system, Variant("c", (make_step("caching"),)))
    hidden = item.hidden
    assert 50_000 < hidden < 60_000 and item.cache is not None
    assert {write.ttl for write in item.cache.writes} == {"5m"}
    written = sum(write.tokens for write in item.cache.writes)
    assert 3_000 < written < 5_000  # the system prompt, and the user message after it
    (lopsided,) = (spread for key, spread in terms.items() if key[0] == "hidden")
    below = hidden * Decimal("0.0000027") + written * Decimal("0.00000345")
    assert lopsided == Spread(below, hidden * Decimal("0.00000075"))
    # the same request without breakpoints: the recording's replay, simulated as sent
    caching = Variant("c", (make_step("caching"),))
    _, unmarked = _band_terms(tmp_path, long_system, caching, baseline=True)
    assert not any(key[0] == "hidden" for key in unmarked)
    # a breakpoint below the 1,024-token minimum caches nothing, so neither could they
    _, short = _band_terms(tmp_path, "Be brief.", Variant("c", (make_step("caching"),)))
    assert not any(key[0] == "hidden" for key in short)


def test_an_unpriced_fee_keeps_every_part_s_tokens_as_the_priced_part() -> None:
    # Vertex prices Sonnet 4.5 in tiers but has no web search fee in genai-prices: the priced
    # part is all 300,001 tokens at $3 per million, not only the first part's 150,001
    usage = Usage(uncached_input=300_001, web_searches=2, base_tier=True)
    found = price(usage, model="claude-sonnet-4-5", provider="google", at=WHEN)
    assert found.amount is None and "web search" in (found.unpriced_reason or "")
    assert found.lower_bound == Decimal("0.900003")


def test_a_cut_stream_keeps_the_flag_on_what_it_recorded(tmp_path: Path) -> None:
    """A stream cut before its final usage is estimated from its opening usage: that usage is
    a server-tool sum too, so it is billed at the base tier like a whole one."""
    path = _cassette(tmp_path, prompt=250_000)
    document = yaml.safe_load(path.read_text())
    events = [
        {
            "type": "message_start",
            "message": {
                "model": "claude-sonnet-4-5-20250929",
                "usage": {"input_tokens": 250_000, "output_tokens": 1},
            },
        },
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "server_tool_use", "id": "s1", "name": "web_search"},
        },
    ]
    body = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)
    response = document["interactions"][0]["response"]
    response["body"]["string"] = body
    response["headers"]["content-type"] = ["text/event-stream"]
    path.write_text(yaml.safe_dump(document))
    (call,) = load_trace(path).calls
    assert call.usage is None and call.usage_hint is not None
    assert call.usage_hint.base_tier
    assert NoteKind.BASE_TIER in [note.kind for note in call.notes]
    engine = Engine([load_trace(path)])
    (item,) = engine.run(Variant("as recorded")).traces[0].calls
    assert item.usage is not None and item.usage.base_tier and item.usage.estimated


def test_a_model_with_a_1m_window_needs_no_beta_and_gets_no_note() -> None:
    """Sonnet 4.6 and Opus 4.6 on take a 1M-token prompt without the beta (genai-prices lists
    their window at 1M): a recording without it has lost nothing."""
    from costsim.model import Call, Flavour, Message, Provenance, TextBlock, Usage
    from costsim.providers._window import hides_its_window

    def call(model: str) -> Call:
        return Call(
            flavour=Flavour.ANTHROPIC_MESSAGES,
            model=model,
            provenance=Provenance(Path("c.yaml"), 0),
            messages=(Message("user", (TextBlock("Read all of it."),)),),
            usage=Usage(uncached_input=250_000, output=100),
        )

    assert hides_its_window(call("claude-sonnet-4-5"), {})
    assert not hides_its_window(call("claude-sonnet-4-6"), {})
    assert not hides_its_window(call("claude-opus-4-7"), {})
