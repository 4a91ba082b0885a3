"""``costsim cassettes list|check``: what a folder of recordings holds, and what is wrong in it."""

from __future__ import annotations

from pathlib import Path

import click

from costsim.cli._common import (
    Output,
    loading_options,
    output_options,
    paths_argument,
    walk_options,
)
from costsim.cli._errors import handle_errors

SORTS = ("name", "date", "calls", "size")


@click.group(short_help="What cassette files hold (list) and what is wrong (check).")
def cassettes() -> None:
    """Inspect cassette files."""


@cassettes.command("list")
@paths_argument
@click.option("--sort", type=click.Choice(SORTS), default="name", show_default=True)
@walk_options
@output_options
@handle_errors
@loading_options
def list_cassettes(
    paths: tuple[Path, ...],
    sort: str,
    include: tuple[str, ...],
    exclude: tuple[str, ...],
    out: Output,
) -> None:
    """One line per cassette: recorded dates, LLM calls, providers, models, size."""
    from costsim import api

    with out.progress() as progress:
        result = api.list_cassettes(
            paths, sort=sort, include=include, exclude=exclude, progress=progress
        )
    out.emit(result)


@cassettes.command("check")
@paths_argument
@click.option(
    "--ignore",
    "ignored",
    multiple=True,
    metavar="RULE",
    help="Do not report this rule (repeatable); also [tool.costsim] secrets.ignore.",
)
@click.option("--show-info", is_flag=True, help="Also list informational findings (cookies).")
@walk_options
@output_options
@handle_errors
@loading_options
def check_cassettes(
    paths: tuple[Path, ...],
    ignored: tuple[str, ...],
    show_info: bool,
    include: tuple[str, ...],
    exclude: tuple[str, ...],
    out: Output,
) -> None:
    """Report unreadable cassettes, calls without (valid) usage, LLM calls costsim cannot meter
    and credentials left in recordings, one line per finding with its rule and severity.

    Exit status 1 when an error or warning is found; informational findings (bot-management
    cookies) are hidden unless --show-info, and never fail the check."""
    from costsim import api

    with out.progress() as progress:
        result = api.check_cassettes(
            paths,
            ignore=ignored,
            show_info=show_info,
            include=include,
            exclude=exclude,
            progress=progress,
        )
    out.emit(result)
    if result.failing:
        raise click.exceptions.Exit(1)
