"""How money is written: Decimal amounts, and costs that are only partly known."""

from __future__ import annotations

from collections.abc import Iterable
from decimal import ROUND_HALF_UP, Decimal

__all__ = ["amount_text", "half_up", "money", "money_places", "partial_money"]


def money(amount: Decimal | None, decimals: int | None = None) -> str:
    """``$0.012051``, ``$1.2190``: six decimals below a dollar, four above (``decimals``: a
    column's, see :func:`money_places`)."""
    if amount is None:
        return "unknown"
    if decimals is None:
        decimals = 6 if abs(amount) < 1 else 4
    return f"${half_up(amount, decimals):,.{decimals}f}"


def half_up(amount: Decimal, decimals: int) -> Decimal:
    """``amount`` to ``decimals`` places, a half rounded away from zero, as a reader rounds
    by hand ($0.0052305 is $0.005231; formatting alone rounds halves to even)."""
    return amount.quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP)


def money_places(amounts: Iterable[Decimal]) -> int:
    """The decimals of a column of costs, one number for all: six while any is below a dollar
    (as :func:`money` writes it alone), else four; a column's rows read ``$0.569573`` and
    ``$1.342096``, not ``$1.3421`` beneath."""
    return 6 if any(abs(amount) < 1 for amount in amounts) else 4


def partial_money(priced: Decimal, unpriced_calls: int, decimals: int | None = None) -> str:
    """A cost that may be partial: ``$0.0312``, or ``≥$0.0312 (+2 unpriced)``."""
    if not unpriced_calls:
        return money(priced, decimals)
    return f"≥{money(priced, decimals)} (+{unpriced_calls} unpriced)"


def amount_text(amount: Decimal | None) -> str | None:
    """An amount as JSON carries it: a plain decimal string (``0.00000000``, never ``0E-8``
    or ``-0``), exact to the last digit; None stays None."""
    if amount is None:
        return None
    if amount.is_zero():
        amount = amount.copy_abs()
    return format(amount, "f")
