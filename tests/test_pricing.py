"""Prices: Decimal, dated, and unknown models are unpriced, never $0."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from costsim.model import Call, Flavour, Provenance, Usage
from costsim.pricing.ledger import Totals, meter
from costsim.pricing.prices import price

WHEN = datetime(2025, 11, 1, tzinfo=UTC)


def _call(model: str, usage: Usage | None, *, error: str | None = None) -> Call:
    return Call(
        flavour=Flavour.ANTHROPIC_MESSAGES,
        model=model,
        provenance=Provenance(Path("x.yaml"), 0),
        usage=usage,
        error=error,
        recorded_at=WHEN,
    )


def test_sonnet_45_cache_classes_priced_by_hand() -> None:
    # $3/MTok input, $0.30 cache read, $3.75 5m write, $6 1h write, $15 output.
    usage = Usage(
        uncached_input=1000, cache_read=1000, cache_write_5m=1000, cache_write_1h=1000, output=1000
    )
    result = price(usage, model="claude-sonnet-4-5", provider="anthropic", at=WHEN)
    assert result.amount == Decimal("0.003") + Decimal("0.0003") + Decimal("0.00375") + Decimal(
        "0.006"
    ) + Decimal("0.015")
    assert isinstance(result.amount, Decimal)


def test_long_context_tier_bills_whole_request_at_higher_rate() -> None:
    # Over 200K prompt tokens, Sonnet 4.5 bills the whole request at $6 in / $22.50 out.
    usage = Usage(uncached_input=250_000, output=1000)
    result = price(usage, model="claude-sonnet-4-5", provider="anthropic", at=WHEN)
    assert result.amount == Decimal("1.5") + Decimal("0.0225")


def test_unknown_model_is_unpriced_not_zero() -> None:
    metered = meter(_call("claude-nonexistent-9", Usage(uncached_input=10, output=5)))
    assert metered.unpriced
    totals = Totals.of([metered])
    assert totals.cost_usd is None
    assert totals.unpriced_calls == 1
    assert "claude-nonexistent-9" in totals.unpriced[0].reason
    assert totals.prompt_tokens == 10  # tokens still count


def test_errored_call_is_unbilled() -> None:
    totals = Totals.of([meter(_call("claude-sonnet-4-5", None, error="overloaded"))])
    assert totals.errored_calls == 1 and totals.cost_usd == Decimal(0)


def test_call_without_usage_makes_cost_unknown() -> None:
    totals = Totals.of([meter(_call("claude-sonnet-4-5", None))])
    assert totals.unmetered_calls == 1 and totals.cost_usd is None


def test_as_of_overrides_recorded_date() -> None:
    usage = Usage(uncached_input=1_000_000)
    # claude-3-opus was $15/MTok when it was current; the price at a date is what genai-prices says.
    recorded = meter(_call("claude-sonnet-4-5", usage))
    pinned = meter(_call("claude-sonnet-4-5", usage), as_of=datetime(2025, 12, 1, tzinfo=UTC))
    assert recorded.price is not None and pinned.price is not None
    assert pinned.price.priced_at == datetime(2025, 12, 1, tzinfo=UTC)
    assert recorded.price.priced_at == WHEN


def test_undated_call_priced_today_and_counted() -> None:
    call = Call(
        flavour=Flavour.ANTHROPIC_MESSAGES,
        model="claude-sonnet-4-5",
        provenance=Provenance(Path("x.yaml"), 0),
        usage=Usage(uncached_input=100),
    )
    totals = Totals.of([meter(call)])
    assert totals.undated_calls == 1 and totals.cost_usd is not None


def test_unit_prices_are_shared_within_a_tier_and_change_across_it() -> None:
    """Per-token prices depend on the prompt's size only through whole-request tiers, so one
    probe serves every prompt of a tier; they equal probes at the prompt itself."""
    from costsim.pricing import prices, units

    at = datetime(2025, 11, 15, tzinfo=UTC)
    cases = [("claude-sonnet-4-5", "anthropic"), ("gpt-4o-mini", "openai"), ("sonar", "perplexity")]
    for model, provider in cases:
        for prompt in (1, 5_000, 199_999, 200_000, 200_001, 350_000):
            shared = units.unit_prices(model, provider, at, prompt=prompt)
            probed = units._unit_prices(model, provider, at, prompt)
            assert shared == probed, (model, prompt)
    short = units.unit_prices("claude-sonnet-4-5", "anthropic", at, prompt=200_000)
    long = units.unit_prices("claude-sonnet-4-5", "anthropic", at, prompt=200_001)
    assert short is not None and long is not None
    # $3 / $6 per million input tokens, $15 / $22.50 per million output tokens (Anthropic)
    assert (short.input, long.input) == (Decimal("0.000003"), Decimal("0.000006"))
    assert (short.output, long.output) == (Decimal("0.000015"), Decimal("0.0000225"))
    # a per-request fee makes every prompt size its own (no tier is read for it)
    assert prices.tier_starts("sonar", "perplexity", at) is None
    assert prices.tier_starts("claude-sonnet-4-5", "anthropic", at) == (200_000,)


def test_amounts_in_json_are_plain_decimals() -> None:
    from costsim.pricing.money import amount_text

    assert amount_text(Decimal("0E-8")) == "0.00000000"
    assert amount_text(Decimal("-0E-8")) == "0.00000000"
    assert amount_text(Decimal("-9.0E-7")) == "-0.00000090"
    assert amount_text(Decimal("16.76973703")) == "16.76973703"
    assert amount_text(Decimal("1E+3")) == "1000"
    assert amount_text(None) is None


def test_unit_prices_are_shared_within_a_day_unless_priced_by_the_hour() -> None:
    """Dated prices change from one day to the next, so one probe serves a whole day; a
    model priced by the time of day (DeepSeek's off-peak hours) is probed at the call's time."""
    from costsim.pricing import prices, units

    assert prices.priced_by_day("claude-sonnet-4-5", "anthropic")
    assert not prices.priced_by_day("deepseek-chat", "deepseek")
    for model, provider in [("claude-sonnet-4-6", "anthropic"), ("deepseek-chat", "deepseek")]:
        for day in (datetime(2026, 3, 12, tzinfo=UTC), datetime(2026, 3, 13, tzinfo=UTC)):
            for hour in (0, 1, 12, 17, 23):
                at = day.replace(hour=hour, minute=7)
                shared = units.unit_prices(model, provider, at, prompt=5_000)
                assert shared == units._unit_prices(model, provider, at, 5_000), (model, at)
    peak = units.unit_prices("deepseek-chat", "deepseek", datetime(2026, 3, 12, 12, tzinfo=UTC))
    off = units.unit_prices("deepseek-chat", "deepseek", datetime(2026, 3, 12, 20, tzinfo=UTC))
    assert peak is not None and off is not None and peak != off


def _priced_models() -> list[tuple[str, str]]:
    from genai_prices import data_snapshot

    snapshot = data_snapshot.get_snapshot()
    return sorted(
        (model.id, provider.id) for provider in snapshot.providers for model in provider.models
    )


_DAYS = [
    datetime(2024, 6, 1, tzinfo=UTC),
    datetime(2025, 11, 1, tzinfo=UTC),
    datetime(2026, 9, 1, tzinfo=UTC),
]


@settings(max_examples=400, deadline=None)
@given(
    st.sampled_from(_priced_models()),
    st.sampled_from(_DAYS),
    st.integers(0, 20_000),
    st.integers(0, 300_000),
    st.integers(0, 50_000),
    st.integers(0, 50_000),
    st.integers(0, 100_000),
)
def test_linear_prices_are_genai_prices_digit_for_digit(
    model: tuple[str, str],
    day: datetime,
    uncached: int,
    read: int,
    write_5m: int,
    write_1h: int,
    output: int,
) -> None:
    """Every model genai-prices knows, any usage below its first tier: the linear formula
    gives genai-prices' own amount, the same digits (a JSON amount shows them all)."""
    from costsim.pricing import prices

    name, provider = model
    usage = Usage(
        uncached_input=uncached,
        cache_read=read,
        cache_write_5m=write_5m,
        cache_write_1h=write_1h,
        output=output,
    )
    at = day.replace(hour=13, minute=5)
    linear = prices._linear_at(name, provider, at)
    # a formula found wrong anywhere (it is then never used) fails here, never skips
    assert linear is None or not linear.broken, (name, provider, day)
    if linear is None or (linear.ceiling is not None and usage.prompt_total > linear.ceiling):
        event("no linear formula (tiered, per-request fee, no price) or above its first tier")
        return
    event("priced by the linear formula")
    exact = prices._genai_price(usage, name, provider, at)
    assert str(linear.amount(usage)) == str(exact.amount), (name, provider, usage)
    assert exact.model_id == linear.model_id


def test_the_common_models_are_priced_by_the_formula() -> None:
    """The property above checks the formula wherever there is one: there is one for the
    models most calls are made with (else it would check nothing)."""
    from costsim.pricing import prices

    at = datetime(2025, 11, 1, 9, tzinfo=UTC)
    for model, provider in (
        ("claude-sonnet-4-5", "anthropic"),
        ("claude-3-5-haiku-20241022", "anthropic"),
        ("gpt-4o-mini", "openai"),
        ("gpt-4o", "openai"),
    ):
        linear = prices._linear_at(model, provider, at)
        assert linear is not None and not linear.broken, (model, provider)


def test_a_formula_that_ever_differs_from_genai_prices_is_not_used_again() -> None:
    from costsim.pricing import prices

    at = datetime(2025, 11, 1, 9, tzinfo=UTC)
    linear = prices._linear_at("claude-sonnet-4-5", "anthropic", at)
    assert linear is not None and linear.ceiling == 200_000
    usage = Usage(uncached_input=1234, cache_read=5678, output=91)
    assert (
        prices.price(usage, model="claude-sonnet-4-5", provider="anthropic", at=at).amount
        == (Decimal(1234) * 3 + Decimal(5678) * Decimal("0.3") + Decimal(91) * 15) / 1_000_000
    )
    saved = linear.rates, linear.checks
    try:
        linear.rates = (*saved[0][:4], saved[0][4] * 2)  # a formula gone wrong
        linear.checks = 1
        prices._price_on.cache_clear()  # priced afresh, not remembered
        found = prices.price(usage, model="claude-sonnet-4-5", provider="anthropic", at=at)
        assert (
            found.amount == prices._genai_price(usage, "claude-sonnet-4-5", "anthropic", at).amount
        )
        assert linear.broken and not linear.covers(usage)
    finally:
        linear.rates, linear.checks, linear.broken = saved[0], saved[1], False
        prices._price_on.cache_clear()
    above = Usage(uncached_input=250_000)  # the long-context tier: genai-prices prices it
    assert not linear.covers(above)


def test_the_token_classes_are_counted_in_the_order_they_are_named() -> None:
    from costsim.pricing.linear import KINDS, counts

    usage = Usage(**{kind: 10 + i for i, kind in enumerate(KINDS)})
    assert counts(usage) == (10, 11, 12, 13, 14)


def test_a_breakdown_names_a_model_as_the_traffic_does_one_name_per_price() -> None:
    from costsim.pricing.names import model_label

    # genai-prices' ids read unlike the recording (claude-3-5-haiku-latest, claude-sonnet-4-0)
    assert model_label("claude-3-5-haiku-20241022", "anthropic", "claude-3-5-haiku-latest") == (
        "claude-3-5-haiku"
    )
    assert model_label("claude-3-5-haiku-latest", "anthropic", "claude-3-5-haiku-latest") == (
        "claude-3-5-haiku"
    )
    assert model_label("claude-sonnet-4-20250514", "anthropic", "claude-sonnet-4-0") == (
        "claude-sonnet-4"
    )
    assert model_label("gpt-4o-mini-2024-07-18", "openai", "gpt-4o-mini") == "gpt-4o-mini"
    # a snapshot with its own price keeps its date: it is another row
    assert model_label("gpt-4o-2024-05-13", "openai", "gpt-4o-2024-05-13") == "gpt-4o-2024-05-13"
    assert model_label("claude-haiku-4-5", "anthropic", "claude-haiku-4-5") == "claude-haiku-4-5"
    assert model_label("gpt-9-20990101", "openai", None) == "gpt-9-20990101"  # unpriced: as is
    # a call without a price id (an errored request, billed nothing) is named as a billed one
    assert model_label("claude-3-5-haiku-20241022", "anthropic", None) == "claude-3-5-haiku"
    assert model_label("gpt-4o-2024-05-13", "openai", None) == "gpt-4o-2024-05-13"


def test_an_errored_request_and_a_billed_response_of_one_model_are_one_row() -> None:
    billed = meter(_call("claude-3-5-haiku-20241022", Usage(uncached_input=10, output=5)))
    errored = meter(_call("claude-3-5-haiku-20241022", None, error="overloaded"))
    assert billed.billed_model == errored.billed_model == "claude-3-5-haiku"


def test_class_costs_summed_at_once_equal_adding_them_one_by_one() -> None:
    from costsim.pricing.split import ClassCost

    # divisions give 28 significant digits: sums round, so the order of additions is kept
    costs = [ClassCost(*(Decimal(n) / Decimal(7 + k) for k in range(5))) for n in range(1, 40)]
    one_by_one = ClassCost()
    for cost in costs:
        one_by_one = one_by_one + cost
    assert ClassCost.total_of(costs) == one_by_one
    assert str(ClassCost.total_of(costs).uncached) == str(one_by_one.uncached)
    assert ClassCost.total_of([], start=costs[0]) == costs[0]


def test_a_metered_call_is_remembered_per_usage_moment_and_day(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from costsim.pricing import ledger

    call = _call("claude-sonnet-4-5", Usage(uncached_input=1000, output=10))
    assert meter(call) is meter(call)  # billed once per variant that leaves it alone
    other = Usage(uncached_input=2000, output=10)
    assert meter(call, usage=other).price != meter(call).price
    later = datetime(2026, 3, 1, tzinfo=UTC)
    assert meter(call, as_of=later).price.priced_at != meter(call).price.priced_at  # type: ignore[union-attr]
    undated = dataclasses.replace(call, recorded_at=None)
    today = meter(undated)
    assert today.price is not None and today.price.undated
    monkeypatch.setattr(ledger, "today", lambda: datetime(2030, 1, 1, tzinfo=UTC))
    assert meter(undated) is not today  # another day: priced again, never from yesterday


def test_an_undated_call_is_said_undated_whatever_was_metered_before() -> None:
    from costsim.pricing.prices import today

    undated = _call("claude-sonnet-4-5", Usage(uncached_input=1000, output=10))
    undated = dataclasses.replace(undated, recorded_at=None)
    for order in ((None, today()), (today(), None)):
        fresh = dataclasses.replace(undated)  # another object: nothing remembered for it
        seen = {when: meter(fresh, as_of=when) for when in order}
        assert seen[None].price is not None and seen[None].price.undated
        assert seen[today()].price is not None and not seen[today()].price.undated


def test_class_rates_read_once_per_price_period_equal_those_of_each_day() -> None:
    from datetime import date, timedelta

    from costsim.pricing.split import _rates, _rates_on

    models = [
        ("claude-sonnet-4-5", "anthropic"),
        ("claude-3-5-haiku-20241022", "anthropic"),
        ("gpt-4o", "openai"),
        ("gpt-4o-mini", "openai"),
        ("o3", "openai"),
    ]
    # into 2026, across a price change (o3: $10/$40 per MTok, then $2/$8 from June 2025)
    days = [date(2024, 6, 1) + timedelta(days=37 * k) for k in range(22)]
    for model, provider in models:
        for day in days:
            midnight = datetime(day.year, day.month, day.day, tzinfo=UTC)
            assert _rates(model, provider, day) == _rates_on(model, provider, midnight), (
                model,
                day,
            )
