"""What a test run is gated on: per-test budgets, regression tolerances, and the
``[tool.costsim]`` table they are read from, and the saved calibration the run estimates
with. Light on purpose: a pytest run reads these before any test runs, and importing them
must not import the engine or the price lists.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from costsim.analysis.tolerances import METRICS, TOKEN_METRICS, parse_tolerances
from costsim.io.config import SettingsError, calibration_path, checked_table, tool_table

if TYPE_CHECKING:
    from costsim.analysis.budgets import Budget
    from costsim.metering.saved import read_calibration

__all__ = [
    "METRICS",
    "TOKEN_METRICS",
    "Budget",
    "SettingsError",
    "calibration_path",
    "checked_table",
    "parse_tolerances",
    "read_calibration",
    "tool_table",
]


def __getattr__(name: str) -> Any:
    """What needs pydantic, imported when first asked for: a budget (a test's marker, a
    ``[tool.costsim]`` table), a saved calibration (checked as the run starts)."""
    if name == "Budget":
        from costsim.analysis.budgets import Budget

        return Budget
    if name == "read_calibration":
        from costsim.metering.saved import read_calibration

        return read_calibration
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
