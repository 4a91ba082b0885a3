"""``costsim cassettes list|check``: what a folder of recordings holds, and what is wrong in it."""

from __future__ import annotations

from pathlib import Path

import click

from costsim.cli._common import handle_errors, paths_argument

SORTS = ("name", "date", "calls", "size")


@click.group()
def cassettes() -> None:
    """Inspect cassette files."""


@cassettes.command("list")
@paths_argument
@click.option("--sort", type=click.Choice(SORTS), default="name", show_default=True)
@handle_errors
def list_cassettes(paths: tuple[Path, ...], sort: str) -> None:
    """One line per cassette: recorded dates, LLM calls, providers, models, size."""
    from costsim import api

    click.echo(api.list_cassettes(paths, sort=sort).render("table"), nl=False)


@cassettes.command("check")
@paths_argument
@handle_errors
def check_cassettes(paths: tuple[Path, ...]) -> None:
    """Report unreadable cassettes, cassettes without LLM calls, calls without usage and
    credentials left in recordings. Exit status 1 when anything is found."""
    from costsim import api

    result = api.check_cassettes(paths)
    click.echo(result.render("table"), nl=False)
    if result.findings:
        raise click.exceptions.Exit(1)
