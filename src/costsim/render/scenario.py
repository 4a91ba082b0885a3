"""Scenarios compared: one scenario's comparison, and a ``compare`` run over several, as text
and JSON."""

from __future__ import annotations

from typing import Any

from costsim.analysis.report import Skipped
from costsim.render import breakdown, comparison_text
from costsim.render.comparison import comparison_json
from costsim.render.options import RenderOptions
from costsim.render.report import FORMAT_VERSION
from costsim.render.text import display_path
from costsim.scenario.result import ScenarioComparison, ScenarioRuns

__all__ = [
    "comparisons_document",
    "comparisons_text",
    "scenario_document",
    "scenario_text",
    "skipped_json",
]


def scenario_document(result: ScenarioComparison) -> dict[str, Any]:
    return {
        "scenario": result.loaded.scenario.name,
        "path": display_path(result.loaded.path),
        **comparison_json(result.comparison),
        "gate_failures": list(result.gate_failures),
    }


def skipped_json(skipped: tuple[Skipped, ...]) -> list[dict[str, str]]:
    return [{"path": display_path(s.path), "error": s.error} for s in skipped]


def scenario_text(result: ScenarioComparison, fmt: str, options: RenderOptions) -> str:
    if fmt == "markdown":
        return comparison_text.render_markdown(result.comparison, verbose=options.verbose)
    return comparison_text.render_table(
        result.comparison, width=options.fit, verbose=options.verbose, wide=options.wide
    )


def comparisons_document(runs: ScenarioRuns) -> dict[str, Any]:
    """The ``costsim compare --format json`` document: every scenario, its gate failures and
    the breakdown asked for with ``--by``."""
    scenarios = []
    for run in runs.runs:
        document = {**scenario_document(run.result), "gate_failures": list(run.gate_failures)}
        if run.breakdown is not None:
            document["breakdown"] = breakdown.breakdown_json(run.breakdown)
        document["skipped"] = skipped_json(run.skipped)
        document["warnings"] = list(run.warnings)
        scenarios.append(document)
    return {
        "format_version": FORMAT_VERSION,
        "kind": "costsim.compare",
        "scenarios": scenarios,
        "gate_failures": runs.gate_failures,
    }


def comparisons_text(runs: ScenarioRuns, fmt: str, options: RenderOptions) -> str:
    parts = []
    for run in runs.runs:
        text = scenario_text(run.result, fmt, options)
        if run.breakdown is not None:
            text += "\n" + (
                breakdown.breakdown_markdown(run.breakdown)
                if fmt == "markdown"
                else breakdown.breakdown_table(
                    run.breakdown, width=options.fit, verbose=options.verbose
                )
            )
        if fmt == "markdown" and run.gate_failures:  # the terminal has them on stderr
            text += "\n" + "".join(f"- **gate:** {failure}\n" for failure in run.gate_failures)
        parts.append(text)
    return "\n".join(parts)
