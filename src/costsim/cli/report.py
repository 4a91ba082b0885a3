"""``costsim report``: what the recorded traffic was billed."""

from __future__ import annotations

from pathlib import Path

import click

from costsim.cli._common import (
    REPORT_GROUPINGS,
    Output,
    as_of_option,
    by_help,
    lenient_option,
    local_execution_options,
    output_options,
    parse_as_of,
    paths_argument,
    walk_options,
)
from costsim.cli._errors import handle_errors


@click.command(short_help="What the LLM calls recorded in PATHS cost.")
@paths_argument
@click.option(
    "--by",
    type=click.Choice(REPORT_GROUPINGS),
    default="cassette",
    show_default=True,
    help=by_help(REPORT_GROUPINGS),
)
@as_of_option
@lenient_option
@walk_options
@output_options
@handle_errors
@local_execution_options
def report(
    paths: tuple[Path, ...],
    by: str,
    as_of: str | None,
    lenient: bool,
    include: tuple[str, ...],
    exclude: tuple[str, ...],
    out: Output,
) -> None:
    """Report tokens and cost of the LLM calls recorded in PATHS (files or folders)."""
    from costsim import api

    when = parse_as_of(as_of)
    with out.progress() as progress:
        result = api.report(
            paths,
            by=by,
            as_of=when,
            lenient=lenient,
            include=include,
            exclude=exclude,
            progress=progress,
        )
    out.emit(result)
