"""The output-format registry: for each kind of result, its JSON document and its text formats.

Every command and every result of the public API renders through here, so the same
``--format`` means the same thing everywhere. Adding a kind or a format is one entry.
"""

from __future__ import annotations

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
    comparison_text,
    html,
    report,
    report_text,
    scenario,
    strategies,
)
from costsim.render.json_stream import json_text, materialized
from costsim.render.options import EXTENSIONS, FORMATS, RenderOptions, format_for
from costsim.render.visible import markdown_lines, visible_lines

__all__ = [
    "EXTENSIONS",
    "FORMATS",
    "KINDS",
    "Kind",
    "RenderOptions",
    "document",
    "format_for",
    "formats",
    "render",
    "streamed_document",
    "write_atomic",
]

Text = Callable[[Any, RenderOptions], str]


@dataclass(frozen=True, slots=True)
class Kind:
    """One kind of result: its JSON document, its schema file, its text renderers by format."""

    document: Callable[[Any], dict[str, Any]]
    text: Mapping[str, Text] = field(default_factory=dict)
    schema: str = ""
    """The file under ``costsim/schemas/`` that describes the JSON document."""
    recorded: bool = True
    """Whether its text holds what recordings say (names, paths, quoted content): its
    Markdown then writes ``&``, ``<`` and ``>`` as HTML's entities (see :func:`render`)."""


def _comparison_table(data: Any, o: RenderOptions) -> str:
    return comparison_text.render_table(data, width=o.fit, verbose=o.verbose, wide=o.wide)


def _comparison_markdown(data: Any, o: RenderOptions) -> str:
    return comparison_text.render_markdown(data, verbose=o.verbose)


KINDS: dict[str, Kind] = {
    "report": Kind(
        report.report_json,
        {
            "table": lambda d, o: report_text.render_table(
                d, width=o.fit, verbose=o.verbose, wide=o.wide
            ),
            "markdown": lambda d, o: report_text.render_markdown(d, verbose=o.verbose),
            "html": lambda d, _: html.report_page(d),
        },
        "report.schema.json",
    ),
    "simulation": Kind(
        lambda data: comparison.comparison_json(data, single=True),
        {
            "table": _comparison_table,
            "markdown": _comparison_markdown,
            "html": lambda d, _: html.simulation_page(d),
        },
        "simulation.schema.json",
    ),
    "comparison": Kind(
        scenario.scenario_document,
        {
            "table": lambda d, o: scenario.scenario_text(d, "table", o),
            "markdown": lambda d, o: scenario.scenario_text(d, "markdown", o),
            "html": lambda d, _: html.scenario_page(d),
        },
        "comparison.schema.json",
    ),
    "comparisons": Kind(
        scenario.comparisons_document,
        {
            "table": lambda d, o: scenario.comparisons_text(d, "table", o),
            "markdown": lambda d, o: scenario.comparisons_text(d, "markdown", o),
            "html": lambda d, _: html.scenarios_page([run.result for run in d.runs]),
        },
        "compare.schema.json",
    ),
    "breakdown": Kind(
        breakdown.breakdown_document,
        {
            "table": lambda d, o: breakdown.breakdown_table(d, width=o.fit, verbose=o.verbose),
            "markdown": lambda d, o: breakdown.breakdown_markdown(d),
        },
        "breakdown.schema.json",
    ),
    "check-cache": Kind(
        cache_check.cache_check_document,
        {
            "table": lambda d, o: cache_check.cache_check_table(d, width=o.fit),
            "markdown": lambda d, o: cache_check.cache_check_markdown(d),
        },
        "check-cache.schema.json",
    ),
    "calibration": Kind(
        calibration.calibration_document,
        {
            "table": lambda d, o: calibration.calibration_table(d, width=o.fit, wide=o.wide),
            "markdown": lambda d, o: calibration.calibration_markdown(d),
        },
        "calibration.schema.json",
    ),
    "cassette-list": Kind(
        cassettes.listing_document,
        {
            "table": lambda d, o: cassettes.listing_table(d, width=o.fit, wide=o.wide),
            "markdown": lambda d, o: cassettes.listing_markdown(d),
        },
        "cassettes-list.schema.json",
    ),
    "cassette-check": Kind(
        cassettes.check_document,
        {
            "table": lambda d, o: cassettes.check_table(d, width=o.fit),
            "markdown": lambda d, o: cassettes.check_markdown(d),
        },
        "cassettes-check.schema.json",
    ),
    "advice": Kind(
        advice.advice_document,
        {
            "table": lambda d, o: advice.advice_table(d, width=o.fit, verbose=o.verbose),
            "markdown": lambda d, o: advice.advice_markdown(d, verbose=o.verbose),
        },
        "advice.schema.json",
    ),
    "baseline-comparison": Kind(
        baselines.baseline_document,
        {
            "table": lambda d, o: baselines.baseline_table(d, width=o.fit),
            "markdown": lambda d, o: baselines.baseline_markdown(d),
        },
        "baseline-comparison.schema.json",
    ),
    "baseline-list": Kind(
        baselines.listing_document,
        {
            "table": lambda d, o: baselines.listing_table(d, width=o.fit),
            "markdown": lambda d, o: baselines.listing_markdown(d),
        },
        "baseline-list.schema.json",
    ),
    "strategies": Kind(
        strategies.strategies_document,
        {
            "table": lambda d, o: strategies.strategies_table(d, width=o.fit),
            "markdown": lambda d, o: strategies.strategies_markdown(d),
        },
        "strategies.schema.json",
        recorded=False,  # the installed strategies' own words, with `code` spans
    ),
}


def formats(kind: str) -> list[str]:
    """The formats a kind of result can be written in (JSON always)."""
    return [*KINDS[kind].text, "json"]


def document(kind: str, data: Any) -> dict[str, Any]:
    """The JSON document of a result (the same the CLI writes with ``--format json``)."""
    return materialized(KINDS[kind].document(data))  # type: ignore[no-any-return]


def streamed_document(kind: str, data: Any) -> dict[str, Any]:
    """:func:`document`, its largest lists :class:`~costsim.render.json_stream.Deferred`:
    made as :func:`~costsim.render.json_stream.json_chunks` writes them."""
    return KINDS[kind].document(data)


def render(kind: str, data: Any, fmt: str, options: RenderOptions | None = None) -> str:
    """``data`` in format ``fmt``. Whatever way a recorded string took into a line, its
    control characters are escapes there (:mod:`costsim.render.visible`), and in Markdown
    ``&``, ``<`` and ``>`` are HTML's entities: a recorded ``<script>`` is text on the page."""
    entry = KINDS[kind]
    if fmt == "json":
        return json_text(entry.document(data))
    renderer = entry.text.get(fmt)
    if renderer is None:
        raise ConfigError(
            f"{kind} output has no {fmt!r} format; formats: {', '.join(formats(kind))}"
        )
    text = renderer(data, options or RenderOptions())
    if fmt == "markdown" and entry.recorded:
        return markdown_lines(text)
    return text if fmt == "html" else visible_lines(text)
