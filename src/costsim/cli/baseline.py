"""``costsim baseline compare A B``: the pytest plugin's regression gate, outside pytest."""

from __future__ import annotations

from pathlib import Path

import click

from costsim.cli._common import handle_errors


@click.group()
def baseline() -> None:
    """Work with baselines saved by pytest --costsim-save."""


@baseline.command("compare")
@click.argument("old", type=click.Path(path_type=Path))
@click.argument("new", type=click.Path(path_type=Path))
@click.option("--fail", "fail", default="cost:5%", show_default=True, metavar="METRIC:PCT,...")
@handle_errors
def compare_command(old: Path, new: Path, fail: str) -> None:
    """Compare baseline NEW with OLD; exit 1 on a regression beyond tolerance."""
    from costsim import api

    result = api.compare_baselines(old, new, fail=fail)
    click.echo(result.render("table"), nl=False)
    if result.regressions:
        raise click.exceptions.Exit(1)
