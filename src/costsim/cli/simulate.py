"""``costsim simulate``: replay recorded traces under a list of strategies."""

from __future__ import annotations

from pathlib import Path

import click

from costsim.cli._common import (
    SIMULATE_BREAKDOWNS,
    Output,
    as_of_option,
    by_help,
    execution_options,
    gap_option,
    lenient_option,
    output_options,
    parse_as_of,
    paths_argument,
    walk_options,
    warm_option,
)
from costsim.cli._errors import handle_errors


@click.command(short_help="Replay PATHS under strategies (-s) against the recording.")
@paths_argument
@click.option(
    "-s",
    "--strategy",
    "strategies",
    multiple=True,
    metavar="NAME[:key=value,...]",
    help="A strategy to apply, in order (repeatable; 'a & b' stacks two in one -s). "
    "costsim strategies lists them and their parameters. None: the identity variant.",
)
@click.option(
    "--by",
    type=click.Choice(SIMULATE_BREAKDOWNS),
    help="Add a breakdown. " + by_help(SIMULATE_BREAKDOWNS),
)
@gap_option
@warm_option
@as_of_option
@lenient_option
@walk_options
@output_options
@handle_errors
@execution_options
def simulate(
    paths: tuple[Path, ...],
    strategies: tuple[str, ...],
    by: str | None,
    gap: float | None,
    warm: str | None,
    as_of: str | None,
    lenient: bool,
    include: tuple[str, ...],
    exclude: tuple[str, ...],
    out: Output,
) -> None:
    """Replay the calls recorded under PATHS with STRATEGIES and compare with the recording.

    Example: costsim simulate cassettes/ -s 'truncation & caching:ttl=1h'. The labels costsim
    prints (compare, the pytest plugin) can be pasted back into -s."""
    from costsim import api

    when = parse_as_of(as_of)
    with out.progress() as progress:
        result = api.simulate(
            paths,
            list(strategies),
            as_of=when,
            gap=gap,
            warm=warm,
            by=by,
            lenient=lenient,
            include=include,
            exclude=exclude,
            progress=progress,
        )
    out.emit(result)
