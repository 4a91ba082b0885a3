"""Which day's prices and caching rules a run uses for calls recorded without a date.

A call recorded without a date is priced at today's prices and cached by today's rules, so a
cache entry of a run's result depends on the day. But prices and rules change only on the
days genai-prices dates a new price from (its ``StartDateConstraint``) and the days costsim's
caching rules change (:mod:`costsim.cache.rules`, and a scenario's overrides): between two
such days every day gives the same result. A key holds the last of those days not after
today, so a cache made yesterday is still read today unless something changed at midnight
(keyed by the date itself, every CI run of a new day started cold).

The change days are read once per build of costsim and of genai-prices and kept in the
cache (reading them means importing genai-prices' price list, 0.3 s: a recalled output,
which takes under a second, is not to pay that every time).
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Iterable
from datetime import UTC, date, datetime
from typing import TYPE_CHECKING

from pydantic import TypeAdapter, ValidationError

if TYPE_CHECKING:
    from costsim.cache.rules import CacheRules

from costsim.io.store import CacheStore

__all__ = ["change_days", "prices_day", "rule_days"]

_KIND = "change-days"
_DAYS = TypeAdapter(tuple[date, ...])


def rule_days(rules: CacheRules) -> list[date]:
    """The days from which a caching rule of ``rules`` applies."""
    days: list[object] = []
    for field in dataclasses.fields(rules):
        value = getattr(rules, field.name)
        if isinstance(value, tuple):
            days.extend(getattr(rule, "since", None) for rule in value)
    return [day for day in days if isinstance(day, date)]


def _read_change_days() -> tuple[date, ...]:
    """Every day a price genai-prices knows or a shipped caching rule starts on."""
    from genai_prices.data_snapshot import get_snapshot  # imported when needed: 0.3 s

    from costsim.cache.rules import default_rules

    days = set(rule_days(default_rules()))
    for provider in get_snapshot().providers:
        for model in provider.models:
            # the model's own prices, and its variants' (a service tier's, batch's)
            lists = [model.prices, *(v.prices for v in getattr(model, "price_variants", ()) or ())]
            for prices in lists:
                for conditional in prices if isinstance(prices, list) else ():
                    start = getattr(conditional.constraint, "start_date", None)
                    if isinstance(start, date):  # a datetime is a date too: its day
                        days.add(date(start.year, start.month, start.day))
    return tuple(sorted(days))


def _custom_prices() -> bool:
    """Whether this process priced with a snapshot of its own (genai-prices' ``UpdatePrices``
    or ``set_custom_snapshot``): its days are not the bundled list's (never kept)."""
    module = sys.modules.get("genai_prices.data_snapshot")  # not imported: none was set
    return module is not None and getattr(module, "_custom_snapshot", None) is not None


def change_days(store: CacheStore | None) -> tuple[date, ...]:
    """:func:`_read_change_days`, kept in ``store`` (its key holds this build of costsim and
    genai-prices' version)."""
    key = CacheStore.key(_KIND)
    if _custom_prices():
        return _read_change_days()
    if store is not None:
        data = store.get(_KIND, key)
        if data is not None:
            try:
                return _DAYS.validate_json(data)
            except (ValidationError, ValueError):
                pass  # rebuilt below
    days = _read_change_days()
    if store is not None:
        store.put(_KIND, key, _DAYS.dump_json(days))
    return days


def prices_day(store: CacheStore | None, extra: Iterable[date] = ()) -> str:
    """A key part naming the prices and rules of today: the last change day not after today
    (``extra``: a scenario's own rule days)."""
    today = datetime.now(UTC).date()
    begun = [day for day in (*change_days(store), *extra) if day <= today]
    return f"prices and rules of {max(begun) if begun else 'the first day'}"
