"""What running scenarios gives: each one's comparison and the gates it breaks."""

from __future__ import annotations

import re
from dataclasses import dataclass

from costsim.analysis.breakdown import AgentMatcher, Breakdown
from costsim.analysis.comparison import Comparison
from costsim.analysis.report import Skipped
from costsim.scenario.load import LoadedScenario

__all__ = ["ScenarioComparison", "ScenarioRun", "ScenarioRuns", "agent_matcher"]


@dataclass(frozen=True, slots=True)
class ScenarioComparison:
    loaded: LoadedScenario
    comparison: Comparison
    gate_failures: tuple[str, ...]
    """The scenario's own budgets that a variant breaks."""

    def agent_matcher(self) -> AgentMatcher:
        """Names each call's agent role by the scenario's ``agents`` rules."""
        return agent_matcher(self.loaded)


def agent_matcher(loaded: LoadedScenario) -> AgentMatcher:
    """Names each call's agent role by a scenario's ``agents`` rules: a system-prompt regex,
    or the cassettes the role's calls come from."""
    rules = loaded.scenario.agents
    return AgentMatcher(
        patterns=tuple(
            (name, re.compile(rule.match)) for name, rule in rules.items() if rule.match
        ),
        files=tuple(
            (name, frozenset(p.resolve() for p in files))
            for name, files in loaded.agent_files().items()
        ),
    )


@dataclass(frozen=True, slots=True)
class ScenarioRun:
    """One scenario of a ``compare`` run: its comparison, every gate it breaks (its budgets and
    ``fail_over``), and the breakdown asked for."""

    result: ScenarioComparison
    gate_failures: tuple[str, ...]
    breakdown: Breakdown | None = None
    skipped: tuple[Skipped, ...] = ()
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ScenarioRuns:
    """Every scenario of a ``compare`` run, in the order they were found."""

    runs: tuple[ScenarioRun, ...]

    @property
    def gate_failures(self) -> list[str]:
        """Every gate failure, each naming its scenario."""
        return [
            f"{run.result.loaded.scenario.name}: {failure}"
            for run in self.runs
            for failure in run.gate_failures
        ]
