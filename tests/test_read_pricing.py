"""Cache reads of models genai-prices has no cached-input price for.

genai-prices gives such reads the input rate. OpenAI's fine-tuned models are billed less:
their pricing page lists each fine-tuned model's cached input at its base model's discount
(``gpt-4o-mini-2024-07-18`` fine-tuned: $0.30 input, $0.15 cached, $1.20 output per million;
``gpt-4o-2024-08-06``: $3.75, $1.875, $15). Other models' reads stay at the input rate and
are said to be.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import yaml
from pydantic import TypeAdapter

import costsim
from costsim.model import Usage
from costsim.pricing.ledger import Totals, meter
from costsim.pricing.prices import price
from costsim.pricing.reads import ReadPricing, read_rule
from costsim.pricing.units import unit_prices
from costsim.providers.normalise import load_trace

WHEN = datetime(2025, 6, 2, 12, tzinfo=UTC)
MINI = "ft:gpt-4o-mini-2024-07-18:acme::B1x2y3z4"
FOUR_O = "ft:gpt-4o-2024-08-06:acme:support:C5d6e7f8"


def _cassette(tmp_path: Path, model: str, turns: list[tuple[int, int]], system: str = "") -> Path:
    """One chat completion per ``(prompt, cached)`` turn, 100 output tokens each, after a
    shared ``system`` prompt when given."""
    interactions = []
    for i, (prompt, cached) in enumerate(turns):
        opening = [{"role": "system", "content": system}] if system else []
        messages = [*opening, {"role": "user", "content": f"Question {i}?"}]
        request = {"model": model, "messages": messages}
        response = {
            "id": f"chatcmpl-{i}",
            "object": "chat.completion",
            "created": 1748865600,
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": "An answer."},
                    "finish_reason": "stop",
                }
            ],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": 100,
                "total_tokens": prompt + 100,
                "prompt_tokens_details": {"cached_tokens": cached},
            },
        }
        interactions.append(
            {
                "request": {
                    "method": "POST",
                    "uri": "https://api.openai.com/v1/chat/completions",
                    "body": json.dumps(request),
                    "headers": {"content-type": ["application/json"]},
                },
                "response": {
                    "status": {"code": 200, "message": "OK"},
                    "headers": {"date": ["Mon, 02 Jun 2025 12:00:00 GMT"]},
                    "body": {"string": json.dumps(response)},
                },
            }
        )
    path = tmp_path / "fine_tuned.yaml"
    path.write_text(yaml.safe_dump({"version": 1, "interactions": interactions}))
    return path


def test_a_fine_tuned_models_reads_get_its_base_models_discount() -> None:
    # 200 uncached x $0.30 + 800 read x $0.15 + 100 out x $1.20 per million
    usage = Usage(uncached_input=200, cache_read=800, output=100)
    result = price(usage, model=MINI, provider="openai", at=WHEN)
    assert result.amount == Decimal("0.00006") + Decimal("0.00012") + Decimal("0.00012")
    assert result.reads is ReadPricing.BASE_MODEL
    # gpt-4o fine-tuned: 1M read at $1.875, not the $3.75 input rate
    big = price(Usage(cache_read=1_000_000), model=FOUR_O, provider="openai", at=WHEN)
    assert big.amount == Decimal("1.875")


def test_the_rule_is_the_base_models_discount_of_the_fine_tuned_input_price() -> None:
    rule = read_rule(MINI, "openai", WHEN)
    assert rule.discount == Decimal("0.5")  # gpt-4o-mini: $0.075 of $0.15
    assert rule.less_per_read == Decimal("0.15") / 1_000_000
    assert read_rule("gpt-4o-mini", "openai", WHEN).pricing is ReadPricing.OWN
    # no base model to go by (gpt-3.5-turbo has no cached-input price): the input rate
    assert read_rule("ft:gpt-3.5-turbo-0125:acme::x", "openai", WHEN).pricing is ReadPricing.INPUT


def test_a_model_without_a_cached_price_keeps_the_input_rate_and_says_so() -> None:
    usage = Usage(uncached_input=1_000_000, cache_read=1_000_000)
    found = price(usage, model="deepseek-v3.2", provider="deepseek", at=WHEN)
    uncached = price(
        Usage(uncached_input=2_000_000), model="deepseek-v3.2", provider="deepseek", at=WHEN
    )
    assert found.amount == uncached.amount and found.reads is ReadPricing.INPUT
    without_reads = price(
        Usage(uncached_input=5), model="deepseek-v3.2", provider="deepseek", at=WHEN
    )
    assert without_reads.reads is ReadPricing.OWN  # nothing read, nothing to say


def test_models_with_a_cached_price_are_priced_as_genai_prices_prices_them() -> None:
    # gpt-4o-mini: 1M read at $0.075
    result = price(Usage(cache_read=1_000_000), model="gpt-4o-mini", provider="openai", at=WHEN)
    assert result.amount == Decimal("0.075") and result.reads is ReadPricing.OWN


def test_unit_prices_and_the_split_use_the_discounted_read() -> None:
    units = unit_prices(MINI, "openai", WHEN)
    assert units is not None
    assert units.input == Decimal("0.30") / 1_000_000
    assert units.cache_read == Decimal("0.15") / 1_000_000  # what a caching what-if weighs


def test_a_report_of_a_fine_tuned_cassette(tmp_path: Path) -> None:
    # turn 1: 1,200 uncached; turn 2: 1,400 with 1,024 read; 100 output each
    path = _cassette(tmp_path, MINI, [(1200, 0), (1400, 1024)])
    trace = load_trace(path)
    metered = [meter(call) for call in trace.calls]
    totals = Totals.of(metered)
    uncached = Decimal(1200 + 376) * Decimal("0.30")
    read = Decimal(1024) * Decimal("0.15")
    output = Decimal(200) * Decimal("1.20")
    assert totals.cost_usd == (uncached + read + output) / 1_000_000
    assert metered[1].split is not None
    assert metered[1].split.cache_read == read / 1_000_000
    assert totals.read_pricing == {ReadPricing.BASE_MODEL: {"ft:gpt-4o-mini": 1}}
    # the cache stores totals as JSON and reads them back as they were (else every run of a
    # fine-tuned cassette would miss the cache)
    adapter = TypeAdapter(Totals)
    assert adapter.validate_json(adapter.dump_json(totals)) == totals

    report = costsim.report(path)
    document = report.to_json()
    assert document["totals"]["cache_reads_without_price"] == [
        {"model": "ft:gpt-4o-mini", "priced_as": "base-model", "calls": 1}
    ]
    text = report.render("table", width=100)
    assert "1 call of fine-tuned models (ft:gpt-4o-mini) read from the cache" in " ".join(
        line.strip() for line in text.splitlines()
    )


def test_a_comparison_says_how_simulated_reads_are_priced(tmp_path: Path) -> None:
    # gpt-4o-mini recorded reading its shared system prompt (OpenAI caches automatically),
    # routed to the fine-tuned model: the reads are billed the fine-tuned model's way
    system = "You answer questions about the shop's orders, politely and briefly. " * 120
    path = _cassette(tmp_path, "gpt-4o-mini", [(1500, 0), (1510, 1280), (1520, 1280)], system)
    simulation = costsim.simulate(path, f'routing:default="{MINI}"')
    (variant,) = simulation.data.variants
    assert simulation.data.baseline.read_pricing == {}
    totals = variant.totals
    assert totals.read_pricing == {ReadPricing.BASE_MODEL: {"ft:gpt-4o-mini": 2}}
    assert totals.cache_read_tokens > 0
    per_million = (
        totals.uncached_input_tokens * Decimal("0.30")
        + totals.cache_read_tokens * Decimal("0.15")
        + totals.output_tokens * Decimal("1.20")
    )
    assert totals.cost_usd == per_million / 1_000_000
    flat = " ".join(line.strip() for line in simulation.render("table", width=100).splitlines())
    assert "Calls of fine-tuned models (ft:gpt-4o-mini) read from the cache" in flat
