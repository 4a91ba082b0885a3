"""A model's token prices as one linear formula, giving genai-prices' own amount, digit for digit.

genai-prices prices a usage as a sum over its price units, each ``price x count / 1,000,000``
in exact ``Decimal`` arithmetic. For a model without a per-request fee and a prompt below its
first long-context tier, every unit's price is fixed, so the amount is linear in the token
counts: ``sum(count x rate)``, with each class's rate read once from genai-prices itself.

The amount is written as genai-prices writes it, too: exact arithmetic keeps every digit, and
the number of decimals is the least of the sum's terms (each term keeps its own significant
digits, and no fewer decimals than its unit's price; a zero term, its unit price's decimals;
the sum starts from ``Decimal(0)``). Those of the prices are read once, as the decimals of a
zero usage's amount. :func:`costsim.pricing.prices.price` checks the formula against
genai-prices on the first amounts of every model and day, and stops using it for one that
ever differs.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from costsim.model import Usage

__all__ = ["LinearPrices"]


def _exponent(value: Decimal) -> int:
    exponent = value.as_tuple().exponent
    assert isinstance(exponent, int)  # finite amounts only
    return exponent


KINDS = ("uncached_input", "cache_read", "cache_write_5m", "cache_write_1h", "output")
"""The token classes of a :class:`~costsim.model.Usage` (its field names), in the order
rates are given and :func:`counts` counts them."""


def counts(usage: Usage) -> tuple[int, int, int, int, int]:
    """The usage's tokens of each of :data:`KINDS` (spelled out: it runs for every call)."""
    return (
        usage.uncached_input,
        usage.cache_read,
        usage.cache_write_5m,
        usage.cache_write_1h,
        usage.output,
    )


@dataclass(slots=True)
class LinearPrices:
    """Per-token rates of one model, provider and day, below its first tier."""

    model_id: str
    rates: tuple[Decimal, ...]
    """USD per token of each of :data:`KINDS`."""
    units: tuple[tuple[int, ...], ...]
    """The classes each of genai-prices' price units counts together (a model without cache
    prices bills cache writes as input: one unit, one term)."""
    exponent: int
    """The decimals of a zero usage's amount (``-6``: six), as genai-prices writes it."""
    ceiling: int | None
    """The largest prompt total the rates hold for (None: every prompt)."""
    checks: int = 2
    """Amounts still to check against genai-prices before the formula is trusted."""
    broken: bool = False

    def covers(self, usage: Usage) -> bool:
        if self.broken or usage.web_searches:
            return False
        return self.ceiling is None or usage.prompt_total <= self.ceiling

    def amount(self, usage: Usage) -> Decimal:
        tokens = counts(usage)
        terms = [sum(tokens[i] for i in unit) * self.rates[unit[0]] for unit in self.units]
        total = sum(terms, start=Decimal(0))
        exponent = self.exponent
        for term in terms:
            if term:
                exponent = min(exponent, _exponent(term.normalize()))
        return total.quantize(Decimal(1).scaleb(exponent))
