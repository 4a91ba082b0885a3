"""``costsim check-cache``: does the cache simulator reproduce what recordings billed?"""

from __future__ import annotations

from pathlib import Path

import click

from costsim.cli._common import (
    emit,
    execution_options,
    handle_errors,
    lenient_option,
    output_option,
    paths_argument,
    warn_skipped,
)


@click.command("check-cache")
@paths_argument
@click.option(
    "--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True
)
@lenient_option
@output_option
@handle_errors
@execution_options
def check_cache_command(
    paths: tuple[Path, ...], fmt: str, lenient: bool, output: Path | None
) -> None:
    """Simulate recorded traces that used caching and compare with what they billed."""
    from costsim import api

    result = api.check_cache(paths, lenient=lenient)
    warn_skipped(result)
    emit(result.render(fmt), output)
