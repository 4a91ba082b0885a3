"""What running a scenario gives: its comparison, and the gates it breaks."""

from __future__ import annotations

import re
from dataclasses import dataclass

from costsim.analysis.breakdown import AgentMatcher
from costsim.analysis.comparison import Comparison
from costsim.scenario.load import LoadedScenario

__all__ = ["ScenarioComparison"]


@dataclass(frozen=True, slots=True)
class ScenarioComparison:
    loaded: LoadedScenario
    comparison: Comparison
    gate_failures: tuple[str, ...]
    """The scenario's own budgets that a variant breaks."""

    def agent_matcher(self) -> AgentMatcher:
        """Names each call's agent role by the scenario's ``agents`` rules."""
        rules = self.loaded.scenario.agents
        return AgentMatcher(
            patterns=tuple(
                (name, re.compile(rule.match)) for name, rule in rules.items() if rule.match
            ),
            files=tuple(
                (name, frozenset(p.resolve() for p in files))
                for name, files in self.loaded.agent_files().items()
            ),
        )
