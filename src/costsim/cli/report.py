"""``costsim report``: what the recorded traffic was billed."""

from __future__ import annotations

from pathlib import Path

import click

from costsim.cli._common import (
    as_of_option,
    emit,
    execution_options,
    format_option,
    handle_errors,
    lenient_option,
    output_option,
    parse_as_of,
    paths_argument,
    warn_skipped,
)

GROUPINGS = ("cassette", "model", "provider", "flavour")


@click.command()
@paths_argument
@click.option(
    "--by",
    type=click.Choice(GROUPINGS),
    default="cassette",
    show_default=True,
    help="One row per cassette, model, provider or API flavour.",
)
@format_option
@as_of_option
@lenient_option
@output_option
@handle_errors
@execution_options
def report(
    paths: tuple[Path, ...],
    by: str,
    fmt: str,
    as_of: str | None,
    lenient: bool,
    output: Path | None,
) -> None:
    """Report tokens and cost of the LLM calls recorded in PATHS (files or folders)."""
    from costsim import api

    result = api.report(paths, by=by, as_of=parse_as_of(as_of), lenient=lenient)
    warn_skipped(result)
    emit(result.render(fmt), output)
