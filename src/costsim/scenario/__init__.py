"""Scenario files and the gates they define."""

from __future__ import annotations

from costsim.scenario.budgets import gate
from costsim.scenario.load import (
    LoadedScenario,
    find_scenarios,
    load_scenario,
    prepare_scenario,
)
from costsim.scenario.model import Scenario

__all__ = [
    "LoadedScenario",
    "Scenario",
    "find_scenarios",
    "gate",
    "load_scenario",
    "prepare_scenario",
]
