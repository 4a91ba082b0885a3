"""``costsim baseline compare A B``: the pytest plugin's regression gate, outside pytest."""

from __future__ import annotations

from pathlib import Path

import click

from costsim.analysis.baseline import compare_baselines, load_baseline, parse_tolerances
from costsim.cli._common import Findings, handle_errors


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
    result = compare_baselines(load_baseline(old), load_baseline(new), parse_tolerances(fail))
    for line in result.improvements:
        click.echo(f"improved: {line}")
    for test in result.new_tests:
        click.echo(f"new test (not in {old}): {test}")
    for test in result.missing_tests:
        click.echo(f"gone (only in {old}): {test}")
    if result.regressions:
        raise Findings("\n".join(result.regressions))
    click.echo("no regression beyond tolerance")
