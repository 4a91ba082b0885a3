"""A model price read once per price period is the price genai-prices gives on every day of it.

:func:`costsim.pricing.flat.flat` reads genai-prices' calculation at the first day of the
period a moment falls in, and shares it with every other moment of that period. Checked
here for every model genai-prices lists with dated prices, on the days around each start
date and across the years the corpus was recorded in, against genai-prices asked directly.
"""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta

import pytest
from genai_prices.data_snapshot import get_snapshot

from costsim.pricing.flat import _calculated, flat, period_start


def _dated() -> list[tuple[str, str, list[datetime]]]:
    """(provider, model, moments to check) of every model with dated prices."""
    cases = []
    for provider in get_snapshot().providers:
        for model in provider.models:
            prices = model.prices
            if not isinstance(prices, list):
                continue
            starts = [
                c.constraint.start_date
                for c in prices
                if type(c.constraint).__name__ == "StartDateConstraint"
            ]
            if not starts:
                continue
            moments = [
                datetime.combine(start + timedelta(days=shift), at, tzinfo=UTC)
                for start in starts
                for shift in (-1, 0, 1, 40)
                for at in (time(0, 0), time(23, 59, 59))
            ]
            moments += [datetime(year, 6, 1, 12, tzinfo=UTC) for year in range(2023, 2028)]
            cases.append((provider.id, model.id, moments))
    return cases


DATED = _dated()


def test_some_models_have_dated_prices() -> None:
    assert len(DATED) >= 5  # else the check below checks little


@pytest.mark.parametrize(("provider", "model", "moments"), DATED, ids=[m for _, m, _ in DATED])
def test_every_moment_of_a_period_has_the_periods_price(
    provider: str, model: str, moments: list[datetime]
) -> None:
    for moment in moments:
        shared, direct = flat(model, provider, moment), _calculated(model, provider, moment)
        if direct is None:  # genai-prices finds another entry by this id: no price
            assert shared is None
            continue
        assert shared is not None and repr(shared.model_price) == repr(direct.model_price), moment
        assert period_start(model, provider, moment) <= moment


def test_a_model_with_one_price_reads_it_once() -> None:
    first = flat("gpt-4o-mini", "openai", datetime(2025, 3, 4, 10, tzinfo=UTC))
    again = flat("gpt-4o-mini", "openai", datetime(2025, 9, 1, 18, tzinfo=UTC))
    assert first is not None and first is again


def test_a_model_genai_prices_does_not_know_is_unpriced_once_for_all_time() -> None:
    """Routing asks for the input price of every call it moves: a model genai-prices does not
    know at a provider (``gpt-4o-mini`` asked of Anthropic) is read once, not at every call's
    moment (117 reads of 0.3 ms x 10 genai-prices calls each in the corpus's routing run)."""
    from costsim.pricing import input_price as module

    moments = [datetime(2026, 2, 12, 19, 30, second, tzinfo=UTC) for second in range(5)]
    assert {period_start("gpt-4o-mini", "anthropic", m) for m in moments} == {
        period_start("gpt-4o-mini", "anthropic", datetime(2020, 1, 1, tzinfo=UTC))
    }
    assert flat("gpt-4o-mini", "anthropic", moments[0]) is None
    module._input_price.cache_clear()
    prices = {module.input_price("gpt-4o-mini", "anthropic", m) for m in moments}
    assert len(prices) == 1 and next(iter(prices))[0] is None
    assert module._input_price.cache_info().misses == 1
