"""``costsim report``: what the recorded traffic was billed."""

from __future__ import annotations

from pathlib import Path

import click

from costsim.analysis.report import GROUPINGS, build_report, load_traces
from costsim.cli._common import (
    as_of_option,
    format_option,
    handle_errors,
    lenient_option,
    output_option,
    parse_as_of,
    paths_argument,
)
from costsim.render.report import render, write_atomic


@click.command()
@paths_argument
@click.option(
    "--by",
    type=click.Choice(list(GROUPINGS)),
    default="cassette",
    show_default=True,
    help="One row per cassette, model, provider or API flavour.",
)
@format_option
@as_of_option
@lenient_option
@output_option
@handle_errors
def report(
    paths: tuple[Path, ...],
    by: str,
    fmt: str,
    as_of: str | None,
    lenient: bool,
    output: Path | None,
) -> None:
    """Report tokens and cost of the LLM calls recorded in PATHS (files or folders)."""
    traces, skipped = load_traces(paths, lenient=lenient)
    for item in skipped:
        click.echo(f"warning: skipped {item.error}", err=True)
    result = build_report(traces, by=by, as_of=parse_as_of(as_of), skipped=skipped)
    text = render(result, fmt)
    if output is not None:
        write_atomic(output, text)
    else:
        click.echo(text, nl=False)
