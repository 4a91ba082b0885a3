"""The snapshot date a model id names, and how a call is priced at a date before it.

genai-prices gives no release date, but providers name a dated snapshot by its date:
Anthropic ``claude-sonnet-4-20250514`` (``YYYYMMDD``; Vertex AI's ``@20250514`` and Bedrock's
``anthropic.…-20250514-v1:0`` are the same id decorated), OpenAI ``gpt-4o-2024-08-06``
(``YYYY-MM-DD``, also inside a fine-tuned id, ``ft:gpt-4o-mini-2024-07-18:org::id``). Each form
is one entry of :data:`SNAPSHOT_FORMS`. A stamp without a year says nothing: OpenAI's older
``gpt-4-0613`` and ``gpt-3.5-turbo-0125`` (``MMDD``), Google's ``gemini-2.5-flash-preview-05-20``
(``MM-DD``), Mistral's ``mistral-large-2411`` (``YYMM``) are not read as dates, nor is a
version (``gemini-1.5-pro-002``) or digits that make no date (``-20251399``); a month and
year (``command-r-08-2024``, ``gemini-2.5-flash-preview-09-2025``) names no day, and is left
out too. Azure's fine-tuned ``gpt-4o-mini-2024-07-18.ft-…`` is read as its base model's date.

A model priced at a date before its snapshot (``--as-of`` before its release) is priced at
what genai-prices gives for that date, and genai-prices has no notion of a model not existing
yet: a model with one price (most) has it for every date; a model with dated prices falls back
to the first of them (its earliest known price) for a date before them all
(``ModelInfo.get_prices``). :class:`EarlySnapshot` says which, once per model.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime
from enum import StrEnum
from functools import cache

from costsim.pricing.flat import period_start, price_starts
from costsim.pricing.platform_ids import model_name

__all__ = ["SNAPSHOT_FORMS", "EarlyPricing", "EarlySnapshot", "early_snapshot", "snapshot_date"]

SNAPSHOT_FORMS: dict[str, re.Pattern[str]] = {
    "yyyymmdd": re.compile(r"(?:^|[-@_])(?P<year>20\d\d)(?P<month>\d\d)(?P<day>\d\d)(?=$|[-:@_.])"),
    "yyyy-mm-dd": re.compile(
        r"(?:^|[-@_])(?P<year>20\d\d)-(?P<month>\d\d)-(?P<day>\d\d)(?=$|[-:@_.])"
    ),
}
"""How a model id names its snapshot date, by form: a match gives the year, month and day
(years 2000-2099; a match that is no date, ``20251399``, names none)."""


@cache
def snapshot_date(model: str) -> date | None:
    """The date of the snapshot ``model`` names (its last date stamp, platform decoration
    left out), None when it names none."""
    name = model_name(model)
    if name.startswith("ft:"):  # ft:BASE:org:suffix:id: the base model's date, not a suffix's
        name = name[3:].split(":", 1)[0]
    for pattern in SNAPSHOT_FORMS.values():
        for found in reversed(list(pattern.finditer(name))):
            try:
                return date(int(found["year"]), int(found["month"]), int(found["day"]))
            except ValueError:  # 20251399: digits, not a date
                continue
    return None


class EarlyPricing(StrEnum):
    """What genai-prices prices a model at, at a date before the model's snapshot."""

    ONE_PRICE = "one-price"
    """It has one price for the model, undated: the same for every date."""
    EARLIEST = "earliest"
    """The date is before all its dated prices for the model: the first of them, its
    earliest known price."""
    DATED = "dated"
    """A dated price had begun by then (``price_start``): that price."""
    BY_MOMENT = "by-moment"
    """Its prices for the model change otherwise (by the time of day): that moment's."""


@dataclass(frozen=True, slots=True)
class EarlySnapshot:
    """A model priced at a date before the snapshot its id names."""

    model: str
    """The id as recorded (or as a variant routed to it)."""
    snapshot: date
    priced_on: date
    """The date its prices were taken at (``--as-of``)."""
    pricing: EarlyPricing
    price_start: date | None = None
    """``EARLIEST``: when genai-prices' second price starts (the first holds until then);
    ``DATED``: when the price used starts."""


def early_snapshot(
    names: tuple[str | None, ...], model: str, provider: str, when: datetime
) -> EarlySnapshot | None:
    """The first of ``names`` (the call's priced, responded and requested model) that names
    a snapshot, when that snapshot is after ``when``'s day, and how ``model`` (the id priced,
    at ``provider``) was priced then; None otherwise."""
    day = when.astimezone(UTC).date() if when.tzinfo is not None else when.date()
    for name in names:
        if not name:
            continue
        snapshot = snapshot_date(name)
        if snapshot is None:
            continue
        if snapshot <= day:
            return None
        pricing, start = _early_pricing(model, provider, day)
        return EarlySnapshot(name, snapshot, day, pricing, start)
    return None


@cache
def _early_pricing(model: str, provider: str, day: date) -> tuple[EarlyPricing, date | None]:
    starts = price_starts(model, provider)
    if starts is None:
        return EarlyPricing.BY_MOMENT, None
    if not starts:
        return EarlyPricing.ONE_PRICE, None
    start = period_start(model, provider, datetime(day.year, day.month, day.day, tzinfo=UTC))
    if start < starts[0]:
        return EarlyPricing.EARLIEST, starts[0].date()
    return EarlyPricing.DATED, start.date()
