"""What a test run is gated on: per-test budgets, regression tolerances, and the
``[tool.costsim]`` table they are read from. Light on purpose: a pytest run reads these before
any test runs, and importing them must not import the engine or the price lists (budgets,
which need pydantic, are imported when first asked for).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from costsim.analysis.tolerances import METRICS, TOKEN_METRICS, parse_tolerances
from costsim.io.config import tool_table

if TYPE_CHECKING:
    from costsim.analysis.budgets import Budget

__all__ = ["METRICS", "TOKEN_METRICS", "Budget", "parse_tolerances", "tool_table"]


def __getattr__(name: str) -> Any:
    if name == "Budget":
        from costsim.analysis.budgets import Budget

        return Budget
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
