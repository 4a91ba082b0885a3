"""The output-format registry: for each kind of result, its JSON document and its text formats.

Every command and every result of the public API renders through here, so the same
``--format`` means the same thing everywhere. Adding a kind or a format is one entry.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from costsim.errors import ConfigError
from costsim.io.files import write_atomic
from costsim.render import (
    advice,
    baselines,
    breakdown,
    cache_check,
    calibration,
    cassettes,
    comparison,
    html,
    report,
    scenario,
)

__all__ = [
    "FORMATS",
    "KINDS",
    "Kind",
    "RenderOptions",
    "document",
    "formats",
    "render",
    "write_atomic",
]

FORMATS = ("table", "json", "markdown", "html")


@dataclass(frozen=True, slots=True)
class RenderOptions:
    """How text output is laid out (JSON carries every figure whatever these say)."""

    width: int = 100
    verbose: bool = False


Text = Callable[[Any, RenderOptions], str]


@dataclass(frozen=True, slots=True)
class Kind:
    """One kind of result: its JSON document, and its text renderers by format."""

    document: Callable[[Any], dict[str, Any]]
    text: Mapping[str, Text] = field(default_factory=dict)


KINDS: dict[str, Kind] = {
    "report": Kind(
        report.report_json,
        {
            "table": lambda data, _: report.render_table(data),
            "markdown": lambda data, _: report.render_markdown(data),
            "html": lambda data, _: html.report_page(data),
        },
    ),
    "simulation": Kind(
        lambda data: comparison.comparison_json(data, single=True),
        {
            "table": lambda data, options: comparison.render_comparison(
                data, "table", verbose=options.verbose
            ),
            "markdown": lambda data, _: comparison.render_comparison(data, "markdown"),
            "html": lambda data, _: html.simulation_page(data),
        },
    ),
    "comparison": Kind(
        scenario.scenario_document,
        {
            "table": lambda data, _: scenario.scenario_text(data, "table"),
            "markdown": lambda data, _: scenario.scenario_text(data, "markdown"),
            "html": lambda data, _: html.scenario_page(data),
        },
    ),
    "comparisons": Kind(
        scenario.scenarios_document,
        {
            "table": lambda data, _: scenario.scenarios_text(data, "table"),
            "markdown": lambda data, _: scenario.scenarios_text(data, "markdown"),
            "html": lambda data, _: html.scenarios_page(data),
        },
    ),
    "breakdown": Kind(
        breakdown.breakdown_json, {"table": lambda data, _: breakdown.breakdown_table(data)}
    ),
    "check-cache": Kind(
        cache_check.cache_check_document,
        {"table": lambda data, _: cache_check.cache_check_table(data)},
    ),
    "calibration": Kind(
        calibration.calibration_document,
        {"table": lambda data, _: calibration.calibration_table(data)},
    ),
    "cassette-list": Kind(
        cassettes.listing_document, {"table": lambda data, _: cassettes.listing_table(data)}
    ),
    "cassette-check": Kind(
        cassettes.check_document, {"table": lambda data, _: cassettes.check_table(data)}
    ),
    "advice": Kind(
        advice.advice_document,
        {"table": lambda data, options: advice.advice_table(data, options.verbose)},
    ),
    "baseline-comparison": Kind(
        baselines.baseline_document, {"table": lambda data, _: baselines.baseline_table(data)}
    ),
}


def formats(kind: str) -> list[str]:
    """The formats a kind of result can be written in (JSON always)."""
    return [*KINDS[kind].text, "json"]


def document(kind: str, data: Any) -> dict[str, Any]:
    """The JSON document of a result (the same the CLI writes with ``--format json``)."""
    return KINDS[kind].document(data)


def render(kind: str, data: Any, fmt: str, options: RenderOptions | None = None) -> str:
    entry = KINDS[kind]
    if fmt == "json":
        return json.dumps(entry.document(data), indent=2) + "\n"
    renderer = entry.text.get(fmt)
    if renderer is None:
        raise ConfigError(
            f"{kind} output has no {fmt!r} format; formats: {', '.join(formats(kind))}"
        )
    return renderer(data, options or RenderOptions())
