"""``costsim simulate``: replay recorded traces under a list of strategies."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import click

from costsim.analysis.comparison import compare_variants
from costsim.cache.rules import default_rules
from costsim.cli._common import (
    as_of_option,
    emit,
    format_option,
    handle_errors,
    lenient_option,
    load,
    output_option,
    parse_as_of,
    paths_argument,
)
from costsim.engine import Engine, Variant, parse_step
from costsim.render.comparison import comparison_json, render_comparison


@click.command()
@paths_argument
@click.option(
    "-s",
    "--strategy",
    "strategies",
    multiple=True,
    metavar="NAME[:key=value,...]",
    help="A strategy to apply, in order (repeatable). None: the identity variant.",
)
@click.option(
    "--gap",
    type=float,
    default=None,
    help="Seconds between calls of traces without recorded dates.",
)
@format_option
@as_of_option
@lenient_option
@output_option
@handle_errors
def simulate(
    paths: tuple[Path, ...],
    strategies: tuple[str, ...],
    gap: float | None,
    fmt: str,
    as_of: str | None,
    lenient: bool,
    output: Path | None,
) -> None:
    """Replay the calls recorded under PATHS with STRATEGIES and compare with the recording."""
    steps = tuple(parse_step(text) for text in strategies)
    traces = load(paths, lenient=lenient)
    rules = default_rules()
    if gap is not None:
        rules = dataclasses.replace(rules, default_gap_seconds=gap)
    engine = Engine(traces, rules=rules)
    variant = Variant("variant", steps)
    comparison = compare_variants(engine, [variant], as_of=parse_as_of(as_of))
    if fmt == "json":
        text = json.dumps(comparison_json(comparison, single=True), indent=2) + "\n"
    else:
        text = render_comparison(comparison, fmt)
    emit(text, output)
