"""``costsim baseline list|compare``: baselines saved by ``pytest --costsim-save``, outside
pytest."""

from __future__ import annotations

from pathlib import Path

import click

from costsim.cli._common import Output, output_options
from costsim.cli._errors import handle_errors

folder_option = click.option(
    "--dir",
    "folder",
    type=click.Path(path_type=Path, file_okay=False),
    help="The baseline folder [default: the project's .costsim, found as pytest finds its root].",
)


@click.group(short_help="Baselines pytest --costsim-save wrote: list, compare.")
def baseline() -> None:
    """Work with baselines saved by pytest --costsim-save NAME (.costsim/NAME.json)."""


@baseline.command("list")
@folder_option
@output_options
@handle_errors
def list_command(folder: Path | None, out: Output) -> None:
    """The baselines saved in the project: name, tests, calls, total cost, when saved."""
    from costsim import api

    out.emit(api.list_baselines(folder))


@baseline.command("compare")
@click.argument("old")
@click.argument("new")
@click.option(
    "--fail",
    "fail",
    default="cost:5%",
    show_default=True,
    metavar="METRIC:PCT,...",
    help="Tolerances per metric (cost, prompt_tokens, output_tokens, calls); PCT with or "
    "without %.",
)
@folder_option
@output_options
@handle_errors
def compare_command(old: str, new: str, fail: str, folder: Path | None, out: Output) -> None:
    """Compare baseline NEW with OLD (saved names, as --costsim-compare takes, or paths):
    regressions beyond tolerance (exit 1), improvements, new and gone tests."""
    from costsim import api

    result = api.compare_baselines(old, new, fail=fail, folder=folder)
    out.emit(result)
    if result.regressions:
        raise click.exceptions.Exit(1)
