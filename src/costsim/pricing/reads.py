"""Cache reads of a model genai-prices has no cached-input price for.

genai-prices prices a token class without a price of its own at its parent's price: cache
reads at the input rate. That is the most a read can cost, and for some models what they do
cost, but not for OpenAI's fine-tuned models: OpenAI's pricing page lists each fine-tuned
model's cached input at its base model's discount (``ft:gpt-4o-mini-…``: $0.30 input, $0.15
cached; ``gpt-4o-mini``: $0.15 and $0.075), a price genai-prices leaves out. Those reads are
priced at the base model's discount; other models' reads stay at the input rate, and say so.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from enum import StrEnum
from functools import lru_cache

from costsim.pricing.flat import flat

__all__ = ["ReadPricing", "ReadRule", "read_rule"]

_FINE_TUNED = "ft:"
_MILLION = Decimal(1_000_000)
_PER_TOKEN = Decimal("1e-15")
"""What a read's discount is kept to: a millionth of a dollar per billion tokens (a ratio of
two prices need not end; OpenAI's listed prices do, well above this)."""


class ReadPricing(StrEnum):
    """How a call's cache reads were priced."""

    OWN = "own"
    """At the model's cached-input price in genai-prices."""
    BASE_MODEL = "base-model"
    """A fine-tuned model's: at its input price with its base model's cached-input discount."""
    INPUT = "input"
    """No cached-input price is known: at the input rate, the most a read can cost."""


@dataclass(frozen=True, slots=True)
class ReadRule:
    pricing: ReadPricing
    less_per_read: Decimal = Decimal(0)
    """What a read costs less than genai-prices' amount gives it (the input rate)."""
    discount: Decimal | None = None
    """The base model's cached-input discount (0.5: half the input price off)."""


_OWN = ReadRule(ReadPricing.OWN)
_INPUT = ReadRule(ReadPricing.INPUT)


def read_rule(model: str, provider: str, when: datetime) -> ReadRule:
    """How reads of ``model`` at ``provider`` on ``when`` are priced: the rule of its day (a
    price list names a cached-input price, or not, for a day at a time), looked up once."""
    return _read_rule(model, provider, when.replace(hour=0, minute=0, second=0, microsecond=0))


@lru_cache(maxsize=1 << 12)
def _read_rule(model: str, provider: str, when: datetime) -> ReadRule:
    rates = _rates(model, provider, when)
    if rates is None or rates[1] is not None:
        return _OWN
    base = _base_model(model, provider)
    base_rates = None if base is None else _rates(base, provider, when)
    if base_rates is None:
        return _INPUT
    (own_input, _), (base_input, base_read) = rates, base_rates
    if not (
        isinstance(own_input, Decimal)
        and isinstance(base_input, Decimal)
        and isinstance(base_read, Decimal)
        and base_input
    ):
        return _INPUT  # a tiered price, or a base model without a cached-input price
    discount = (base_input - base_read) / base_input
    if not 0 < discount <= 1:
        return _INPUT
    less = (own_input * discount / _MILLION).quantize(_PER_TOKEN).normalize()
    return ReadRule(ReadPricing.BASE_MODEL, less, discount)


def _base_model(model: str, provider: str) -> str | None:
    """The model ``model`` was fine-tuned from (OpenAI's ``ft:<base>:<org>:<name>:<id>``)."""
    if provider != "openai" or not model.startswith(_FINE_TUNED):
        return None
    base = model[len(_FINE_TUNED) :].split(":", 1)[0]
    return base or None


def _rates(model: str, provider: str, when: datetime) -> tuple[object, object] | None:
    """(input, cache read) prices per million tokens of the model in force on ``when``: a
    ``Decimal``, tiered prices, or None when absent; None when the model is unknown."""
    found = flat(model, provider, when)
    if found is None:
        return None
    prices = found.model_price
    return getattr(prices, "input_mtok", None), getattr(prices, "cache_read_mtok", None)
