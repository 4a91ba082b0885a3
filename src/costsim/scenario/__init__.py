"""Scenario files and the gates they define.

The names are imported on first use: listing the files a scenario reads
(:mod:`costsim.scenario.files`) must not import the strategies and the engine."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from costsim.scenario.budgets import gate
    from costsim.scenario.files import find_scenarios
    from costsim.scenario.load import LoadedScenario, load_scenario, prepare_scenario
    from costsim.scenario.model import Scenario

__all__ = [
    "LoadedScenario",
    "Scenario",
    "find_scenarios",
    "gate",
    "load_scenario",
    "prepare_scenario",
]

_HOMES = {
    "gate": "costsim.scenario.budgets",
    "find_scenarios": "costsim.scenario.files",
    "LoadedScenario": "costsim.scenario.load",
    "load_scenario": "costsim.scenario.load",
    "prepare_scenario": "costsim.scenario.load",
    "Scenario": "costsim.scenario.model",
}


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module 'costsim.scenario' has no attribute {name!r}")
    value = getattr(import_module(_HOMES[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
