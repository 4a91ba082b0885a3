"""``costsim calibrate``: how well the offline estimator does on the traces at hand."""

from __future__ import annotations

from pathlib import Path

import click

from costsim.cli._common import handle_errors, lenient_option, output_option, paths_argument
from costsim.metering.evaluate import calibrate as fit_and_measure
from costsim.metering.summary import calibration_json, calibration_table
from costsim.render import write_atomic
from costsim.report import load_traces


@click.command()
@paths_argument
@click.option(
    "--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True
)
@lenient_option
@output_option
@handle_errors
def calibrate(paths: tuple[Path, ...], fmt: str, lenient: bool, output: Path | None) -> None:
    """Fit the token estimator on the recorded calls under PATHS and report its error."""
    traces, skipped = load_traces(paths, lenient=lenient)
    for item in skipped:
        click.echo(f"warning: skipped {item.error}", err=True)
    reports = fit_and_measure(traces)
    text = calibration_json(reports) if fmt == "json" else calibration_table(reports)
    if output is not None:
        write_atomic(output, text)
    else:
        click.echo(text, nl=False)
