"""Prices from genai-prices, at each call's recorded date; money is Decimal, unknown is None.

genai-prices ships a dated price snapshot inside the package: nothing is downloaded. Its
``Usage.input_tokens`` is the prompt *total* (cache reads and writes included).
"""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from decimal import Decimal
from functools import cache, lru_cache
from typing import TYPE_CHECKING, Any

from genai_prices import Usage as PriceUsage
from genai_prices import calc_price

from costsim.model import Usage
from costsim.model.quoting import quoted
from costsim.pricing.flat import flat as _flat
from costsim.pricing.hour_writes import hour_writes
from costsim.pricing.linear import KINDS, LinearPrices
from costsim.pricing.priced import Price
from costsim.pricing.reads import ReadPricing, read_rule
from costsim.pricing.tiers import tier_price

if TYPE_CHECKING:
    pass

__all__ = [
    "Price",
    "base_parts",
    "price",
    "price_moment",
    "priced_by_day",
    "search_fee_known",
    "tier_starts",
    "today",
]


def price(usage: Usage, *, model: str, provider: str, at: datetime | None) -> Price:
    """Price ``usage`` of ``model`` at ``provider`` as at ``at`` (now when None, said so); a
    usage billed at a service tier at that tier's prices (:mod:`costsim.pricing.tiers`)."""
    if usage.tier is not None:
        plain = dataclasses.replace(usage, tier=None)
        tiered = tier_price(
            usage,
            model,
            provider,
            at or today(),
            lambda: price(plain, model=model, provider=provider, at=at),
        )
        return dataclasses.replace(tiered, undated=at is None)
    if at is None:
        return _undated(usage, model, provider, today())
    return _price_on(usage, model, provider, at)


@lru_cache(maxsize=1 << 14)
def _undated(usage: Usage, model: str, provider: str, day: datetime) -> Price:
    """Today's price, said to be so (once per usage, model and day)."""
    return dataclasses.replace(_price_on(usage, model, provider, day), undated=True)


@lru_cache(maxsize=1 << 16)
def _price_on(usage: Usage, model: str, provider: str, when: datetime) -> Price:
    """Once per usage, model and moment: a comparison prices each unchanged call once per
    variant, and the baseline again. The one memo of a call's price, and
    bounded: moments are as many as calls, and a metering process lives as long as a test
    run (genai-prices' own reads below are made once per price period, by memoised callers)."""
    linear = _linear_at(model, provider, when)
    if linear is not None and linear.covers(usage):
        result = _linear_price(linear, usage, model, provider, when)
    elif usage.base_tier:
        result = _base_tier_price(usage, model, provider, when)
    else:
        result = _genai_price(usage, model, provider, when)
    if usage.cache_write_1h and result.amount is not None:
        result = hour_writes(result, usage, model, provider, when)
    return _with_reads(result, usage, model, provider, when) if usage.cache_read else result


def _with_reads(result: Price, usage: Usage, model: str, provider: str, when: datetime) -> Price:
    """``result`` with its cache reads priced by the model's read rule (genai-prices gives
    reads without a price of their own the input rate), and the rule it used."""
    rule = read_rule(model, provider, when)
    if rule.pricing is ReadPricing.OWN:
        return result
    less = usage.cache_read * rule.less_per_read
    if result.amount is None:
        lower = max(result.lower_bound - less, Decimal(0))
        return dataclasses.replace(result, lower_bound=lower, reads=rule.pricing)
    return dataclasses.replace(result, amount=result.amount - less, reads=rule.pricing)


def _base_tier_price(usage: Usage, model: str, provider: str, when: datetime) -> Price:
    """The price of a usage billed at the base tier whatever its prompt (it sums samplings
    each within the standard window): the sum of genai-prices' amounts for parts of it each
    below the first tier. Tokens below a tier are priced linearly, so the parts add up to the
    whole at base rates exactly; per-use fees go with the first part."""
    starts = tier_starts(model, provider, price_moment(model, provider, when))
    if not starts or usage.prompt_total <= starts[0]:
        return _genai_price(usage, model, provider, when)
    amount = Decimal(0)
    results = [_genai_price(part, model, provider, when) for part in base_parts(usage, starts[0])]
    for result in results:
        amount += result.lower_bound if result.amount is None else result.amount
    unpriced = next((result for result in results if result.amount is None), None)
    if unpriced is not None:  # a fee without a price: every part's tokens are the priced part
        return dataclasses.replace(unpriced, lower_bound=amount)
    return dataclasses.replace(results[0], amount=amount)


def base_parts(usage: Usage, limit: int) -> list[Usage]:
    """``usage`` cut into the fewest even parts whose prompts are each at most ``limit``
    tokens; every class is shared out whole, so the parts add up to ``usage``."""
    whole = [getattr(usage, kind) for kind in KINDS]
    count = max(1, -(-usage.prompt_total // limit))
    while True:
        parts = [
            Usage(
                **{
                    kind: total * (i + 1) // count - total * i // count
                    for kind, total in zip(KINDS, whole, strict=True)
                },
                web_searches=usage.web_searches if i == 0 else 0,
            )
            for i in range(count)
        ]
        if all(part.prompt_total <= limit for part in parts):
            return parts
        count += 1


def _genai_price(usage: Usage, model: str, provider: str, when: datetime) -> Price:
    return _price(
        usage.prompt_total,
        usage.cache_read,
        usage.cache_write,
        usage.cache_write_1h,
        usage.output,
        usage.web_searches,
        model,
        provider,
        when,
    )


def _linear_at(model: str, provider: str, when: datetime) -> LinearPrices | None:
    """The model's linear prices on ``when``'s day, for models priced by the day only."""
    if not priced_by_day(model, provider):
        return None
    return _linear(model, provider, when.replace(hour=0, minute=0, second=0, microsecond=0))


def _linear_price(
    linear: LinearPrices, usage: Usage, model: str, provider: str, when: datetime
) -> Price:
    """The amount from the linear formula; its first amounts are checked against genai-prices
    (a model and day where they ever differ is priced by genai-prices from then on)."""
    amount = linear.amount(usage)
    if linear.checks > 0:
        exact = _genai_price(usage, model, provider, when)
        if str(exact.amount) != str(amount) or exact.model_id != linear.model_id:
            linear.broken = True
            return exact
        linear.checks -= 1
    return Price(amount, model_id=linear.model_id, priced_at=when)


def _usage_of(tokens: dict[int, int]) -> Usage:
    """A usage with ``tokens[i]`` tokens of class ``KINDS[i]``."""
    fields: dict[str, Any] = {KINDS[i]: n for i, n in tokens.items()}
    return Usage(**fields)


@cache
def _linear(model: str, provider: str, day: datetime) -> LinearPrices | None:
    """The model's linear prices on ``day``: those of its price period (every day genai-prices
    gives the same model price shares them, read once)."""
    flat = _flat(model, provider, day)
    if flat is None:
        return None
    period = (model, provider, repr(flat.model_price))
    if period not in _PERIODS:
        _PERIODS[period] = _read_linear(model, provider, day)
    return _PERIODS[period]


_PERIODS: dict[tuple[str, str, str], LinearPrices | None] = {}


def price_period(model: str, provider: str, day: datetime) -> tuple[str, str, str] | None:
    """What names the model's price on ``day`` (a midnight): every day with the same model
    price is one period; None for a model priced by the time of day, or without a price."""
    if not priced_by_day(model, provider):
        return None
    flat = _flat(model, provider, day)
    return None if flat is None else (model, provider, repr(flat.model_price))


def _read_linear(model: str, provider: str, day: datetime) -> LinearPrices | None:
    """Per-token rates below the first tier, read from genai-prices with one token of each
    class; None for a model with a per-request fee, without a price, or whose price units
    cannot be told apart."""
    starts = tier_starts(model, provider, day)
    flat = _flat(model, provider, day)
    if starts is None or flat is None:
        return None
    amounts = [_genai_price(_usage_of({i: 1}), model, provider, day).amount for i in range(5)]
    rates = tuple(amount for amount in amounts if amount is not None)
    exponent = flat.total_price.as_tuple().exponent
    if not isinstance(exponent, int) or len(rates) != len(amounts):
        return None
    linear = LinearPrices(
        flat.model.id,
        rates,
        (),
        exponent,
        ceiling=min(starts) if starts else None,
    )
    units: list[list[int]] = []
    for kind in range(5):
        unit = None
        for candidate in units:
            same = _one_unit(linear, candidate[0], kind, model, provider, day)
            if same is None:
                return None
            if same:
                unit = candidate
                break
        if unit is None:
            units.append([kind])
        else:
            unit.append(kind)
    linear.units = tuple(tuple(unit) for unit in units)
    return linear


def _one_unit(
    linear: LinearPrices, first: int, kind: int, model: str, provider: str, day: datetime
) -> bool | None:
    """Whether genai-prices counts two token classes in one price unit (None: it cannot be
    told). Classes with different rates are different units; for classes sharing a rate it
    shows in how genai-prices writes the amount of 1 and 9 (or 99, ...) tokens of them."""
    if linear.rates[first] != linear.rates[kind]:
        return False
    if not linear.rates[first]:
        return True  # free classes: their terms are zero either way
    for many in (9, 99, 999):
        usage = _usage_of({first: 1, kind: many})
        found = str(_genai_price(usage, model, provider, day).amount)
        together = str(dataclasses.replace(linear, units=((first, kind),)).amount(usage))
        apart = str(dataclasses.replace(linear, units=((first,), (kind,))).amount(usage))
        if together != apart:
            return found == together if found in (together, apart) else None
    return None


def _price(
    prompt: int,
    cache_read: int,
    cache_write: int,
    cache_write_1h: int,
    output: int,
    web_searches: int,
    model: str,
    provider: str,
    when: datetime,
) -> Price:
    if not model:
        return Price(None, unpriced_reason="the request names no model")
    priced_usage = PriceUsage(
        input_tokens=prompt,
        cache_read_tokens=cache_read,
        cache_write_tokens=cache_write,
        cache_write_1h_tokens=cache_write_1h,
        output_tokens=output,
        web_searches=web_searches,
    )
    try:
        result = calc_price(priced_usage, model, provider_id=provider, genai_request_timestamp=when)
    except LookupError:
        return Price(
            None, unpriced_reason=f"genai-prices has no price for {provider} model {quoted(model)}"
        )
    except (ValueError, ArithmeticError) as exc:
        return Price(None, unpriced_reason=f"genai-prices cannot price {quoted(model)}: {exc}")
    if web_searches and getattr(result.model_price, "web_searches_kcount", None) is None:
        return Price(
            None,
            model_id=result.model.id,
            unpriced_reason=(
                f"{web_searches} web search(es) recorded but genai-prices has no web search "
                f"fee for {provider} model {quoted(model)}"
            ),
            priced_at=when,
            lower_bound=result.total_price,
        )
    return Price(result.total_price, model_id=result.model.id, priced_at=when)


def price_moment(model: str, provider: str, when: datetime) -> datetime:
    """The moment whose prices ``when`` has: its day for a model priced by the day (every
    call of a day has that day's prices), else ``when`` itself."""
    if priced_by_day(model, provider):
        return when.replace(hour=0, minute=0, second=0, microsecond=0)
    return when


def today() -> datetime:
    return datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)


@cache
def priced_by_day(model: str, provider: str) -> bool:
    """The model's prices change only from one day to the next (genai-prices gives dated
    prices, and for a few models prices by the time of day: those are not)."""
    found = _flat(model, provider, datetime(2026, 1, 1, tzinfo=UTC))
    if found is None:
        return False
    prices = getattr(found.model, "prices", None)
    if prices is None:
        return False
    if not isinstance(prices, list):
        return True
    for conditional in prices:
        constraint = getattr(conditional, "constraint", "unknown")
        if constraint is not None and type(constraint).__name__ != "StartDateConstraint":
            return False
    return True


@cache
def tier_starts(model: str, provider: str, when: datetime) -> tuple[int, ...] | None:
    """The prompt sizes above which the model's per-token prices change (genai-prices'
    whole-request tiers); None when they cannot be told, or when the price has a part that
    does not grow with tokens (a per-request fee: its share of a token depends on the
    prompt's size, so no two sizes are alike)."""
    flat = _flat(model, provider, when)
    if flat is None or flat.total_price != 0:
        return None
    starts: set[int] = set()
    for value in vars(flat.model_price).values():
        tiers = getattr(value, "tiers", None)
        if tiers is None:
            continue
        for tier in tiers:
            start = getattr(tier, "start", None)
            if not isinstance(start, int):
                return None
            starts.add(start)
    return tuple(sorted(starts))


def search_fee_known(model: str, provider: str, at: datetime | None) -> bool:
    """Whether genai-prices has a per-search price for ``model`` (at ``at``, else today)."""
    found = _flat(model, provider, price_moment(model, provider, at or today()))
    return found is not None and getattr(found.model_price, "web_searches_kcount", None) is not None
