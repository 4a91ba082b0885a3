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
@click.option(
    "--ignore",
    "ignored",
    multiple=True,
    metavar="RULE",
    help="Do not report this rule (repeatable); also [tool.costsim] secrets.ignore.",
)
@click.option("--show-info", is_flag=True, help="Also list informational findings (cookies).")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "json"]),
    default="table",
    show_default=True,
    help="Output format.",
)
@handle_errors
def check_cassettes(
    paths: tuple[Path, ...], ignored: tuple[str, ...], show_info: bool, fmt: str
) -> None:
    """Report unreadable cassettes, calls without (valid) usage, LLM calls costsim cannot meter
    and credentials left in recordings, one line per finding with its rule and severity.

    Exit status 1 when an error or warning is found; informational findings (bot-management
    cookies) are hidden unless --show-info, and never fail the check."""
    from costsim import api

    result = api.check_cassettes(paths, ignore=ignored, show_info=show_info)
    click.echo(result.render(fmt), nl=False)
    if result.failing:
        raise click.exceptions.Exit(1)
