"""``costsim check-cache``: does the cache simulator reproduce what recordings billed?"""

from __future__ import annotations

from pathlib import Path

import click

from costsim.cli._common import (
    Output,
    lenient_option,
    local_execution_options,
    output_options,
    paths_argument,
    walk_options,
)
from costsim.cli._errors import handle_errors


@click.command("check-cache", short_help="Does the cache simulator reproduce what was billed?")
@paths_argument
@lenient_option
@walk_options
@output_options
@handle_errors
@local_execution_options
def check_cache_command(
    paths: tuple[Path, ...],
    lenient: bool,
    include: tuple[str, ...],
    exclude: tuple[str, ...],
    out: Output,
) -> None:
    """Simulate recorded traces that used caching and compare with what they billed."""
    from costsim import api

    with out.progress() as progress:
        result = api.check_cache(
            paths, lenient=lenient, include=include, exclude=exclude, progress=progress
        )
    out.emit(result)
