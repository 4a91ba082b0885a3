"""``costsim advise caching``: the placement and TTL that minimise cost on recorded traces."""

from __future__ import annotations

from pathlib import Path

import click

from costsim.cli._common import (
    Output,
    as_of_option,
    gap_option,
    lenient_option,
    local_execution_options,
    output_options,
    parse_as_of,
    paths_argument,
    walk_options,
    warm_option,
)
from costsim.cli._errors import handle_errors


@click.group()
def advise() -> None:
    """Advice a user can act on, from recorded traffic."""


@advise.command("caching")
@paths_argument
@gap_option
@as_of_option
@lenient_option
@warm_option
@walk_options
@output_options
@handle_errors
@local_execution_options
def caching(
    paths: tuple[Path, ...],
    gap: float | None,
    as_of: str | None,
    lenient: bool,
    warm: str | None,
    include: tuple[str, ...],
    exclude: tuple[str, ...],
    out: Output,
) -> None:
    """The caching placement and TTL that cost least on the calls recorded under PATHS, the
    saving with its p90 band, and why money is left on the table (-v: per-breakpoint
    economics of every placement)."""
    from costsim import api

    when = parse_as_of(as_of)
    with out.progress() as progress:
        result = api.advise(
            paths,
            "caching",
            as_of=when,
            gap=gap,
            lenient=lenient,
            warm=warm,
            include=include,
            exclude=exclude,
            progress=progress,
        )
    out.emit(result)
