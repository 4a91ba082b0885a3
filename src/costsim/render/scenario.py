"""A scenario's comparison: the comparison's table or Markdown, and its JSON document."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from costsim.render.comparison import comparison_json, render_comparison
from costsim.render.report import FORMAT_VERSION
from costsim.render.text import display_path
from costsim.scenario.result import ScenarioComparison

__all__ = ["scenario_document", "scenario_text", "scenarios_document", "scenarios_text"]


def scenario_document(result: ScenarioComparison) -> dict[str, Any]:
    return {
        "scenario": result.loaded.scenario.name,
        "path": display_path(result.loaded.path),
        **comparison_json(result.comparison),
        "gate_failures": list(result.gate_failures),
    }


def scenario_text(result: ScenarioComparison, fmt: str) -> str:
    return render_comparison(result.comparison, fmt)


def scenarios_document(results: Sequence[ScenarioComparison]) -> dict[str, Any]:
    """Several scenarios in one document (``costsim compare`` of a folder)."""
    return {
        "format_version": FORMAT_VERSION,
        "kind": "costsim.compare",
        "scenarios": [scenario_document(result) for result in results],
        "gate_failures": [
            f"{result.loaded.scenario.name}: {failure}"
            for result in results
            for failure in result.gate_failures
        ],
    }


def scenarios_text(results: Sequence[ScenarioComparison], fmt: str) -> str:
    return "\n".join(scenario_text(result, fmt) for result in results)
