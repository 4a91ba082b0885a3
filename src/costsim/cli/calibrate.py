"""``costsim calibrate``: how well the offline estimator does on the traces at hand."""

from __future__ import annotations

from pathlib import Path

import click

from costsim.cli._common import (
    emit,
    handle_errors,
    lenient_option,
    load,
    output_option,
    paths_argument,
)
from costsim.metering.evaluate import calibrate as fit_and_measure
from costsim.metering.summary import calibration_json, calibration_table


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
    reports = fit_and_measure(load(paths, lenient=lenient))
    emit(calibration_json(reports) if fmt == "json" else calibration_table(reports), output)
