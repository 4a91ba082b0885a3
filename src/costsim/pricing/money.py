"""How money is written: Decimal amounts, and costs that are only partly known."""

from __future__ import annotations

from decimal import Decimal

__all__ = ["amount_text", "money", "partial_money"]


def money(amount: Decimal | None) -> str:
    if amount is None:
        return "unknown"
    return f"${amount:,.6f}" if abs(amount) < 1 else f"${amount:,.4f}"


def partial_money(priced: Decimal, unpriced_calls: int) -> str:
    """A cost that may be partial: ``$0.0312``, or ``≥$0.0312 (+2 unpriced)``."""
    if not unpriced_calls:
        return money(priced)
    return f"≥{money(priced)} (+{unpriced_calls} unpriced)"


def amount_text(amount: Decimal | None) -> str | None:
    """An amount as JSON carries it: a plain decimal string (``0.00000000``, never ``0E-8``
    or ``-0``), exact to the last digit; None stays None."""
    if amount is None:
        return None
    if amount.is_zero():
        amount = amount.copy_abs()
    return format(amount, "f")
