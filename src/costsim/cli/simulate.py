"""``costsim simulate``: replay recorded traces under a list of strategies."""

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
@click.option("-v", "--verbose", is_flag=True, help="Per-breakpoint cache economics.")
@format_option
@as_of_option
@lenient_option
@output_option
@handle_errors
@execution_options
def simulate(
    paths: tuple[Path, ...],
    strategies: tuple[str, ...],
    gap: float | None,
    verbose: bool,
    fmt: str,
    as_of: str | None,
    lenient: bool,
    output: Path | None,
) -> None:
    """Replay the calls recorded under PATHS with STRATEGIES and compare with the recording."""
    from costsim import api

    result = api.simulate(
        paths, list(strategies), as_of=parse_as_of(as_of), gap=gap, lenient=lenient
    )
    warn_skipped(result)
    emit(result.render(fmt, verbose=verbose), output)
