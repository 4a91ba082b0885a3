"""A scenario's comparison: the comparison's table or Markdown, and its JSON document."""

from __future__ import annotations

from typing import Any

from costsim.render.comparison import comparison_json, render_comparison
from costsim.render.text import display_path
from costsim.scenario.result import ScenarioComparison

__all__ = ["scenario_document", "scenario_text"]


def scenario_document(result: ScenarioComparison) -> dict[str, Any]:
    return {
        "scenario": result.loaded.scenario.name,
        "path": display_path(result.loaded.path),
        **comparison_json(result.comparison),
        "gate_failures": list(result.gate_failures),
    }


def scenario_text(result: ScenarioComparison, fmt: str) -> str:
    return render_comparison(result.comparison, fmt)
