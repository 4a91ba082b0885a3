"""``costsim advise caching``: the placement and TTL that minimise cost on recorded traces."""

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
    paths_argument,
    warn_skipped,
)


@click.group()
def advise() -> None:
    """Advice a user can act on, from recorded traffic."""


@advise.command("caching")
@paths_argument
@click.option(
    "--gap",
    type=float,
    default=None,
    help="Seconds between calls of traces without recorded dates.",
)
@click.option("-v", "--verbose", is_flag=True, help="Per-breakpoint economics of every placement.")
@format_option
@as_of_option
@lenient_option
@output_option
@handle_errors
@execution_options
def caching(
    paths: tuple[Path, ...],
    gap: float | None,
    verbose: bool,
    fmt: str,
    as_of: str | None,
    lenient: bool,
    output: Path | None,
) -> None:
    """The caching placement and TTL that cost least on the calls recorded under PATHS, the
    saving with its p90 band, and why money is left on the table."""
    from costsim import api
    from costsim.cli._common import parse_as_of

    result = api.advise(paths, "caching", as_of=parse_as_of(as_of), gap=gap, lenient=lenient)
    warn_skipped(result)
    emit(result.render(fmt, verbose=verbose), output)
