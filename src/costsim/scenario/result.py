"""What running a scenario gives: its comparison, and the gates it breaks."""

from __future__ import annotations

from dataclasses import dataclass

from costsim.analysis.comparison import Comparison
from costsim.scenario.load import LoadedScenario

__all__ = ["ScenarioComparison"]


@dataclass(frozen=True, slots=True)
class ScenarioComparison:
    loaded: LoadedScenario
    comparison: Comparison
    gate_failures: tuple[str, ...]
    """The scenario's own budgets that a variant breaks."""
