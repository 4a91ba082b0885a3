"""``costsim calibrate``: how well the offline estimator does on the traces at hand."""

from __future__ import annotations

import re
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
from costsim.metering.evaluate import Grouping, first_folder
from costsim.metering.evaluate import calibrate as fit_and_measure
from costsim.metering.summary import calibration_json, calibration_table


def _grouping(paths: tuple[Path, ...], pattern: str | None) -> Grouping:
    """A cassette's source: the first folder under the PATH it was found in, or the first
    capture group (else the whole match) of PATTERN in its path relative to that PATH."""
    roots = [p.resolve() if p.is_dir() else p.resolve().parent for p in paths]
    compiled = re.compile(pattern) if pattern else None

    def group(path: Path) -> str:
        resolved = path.resolve()
        root = next((r for r in roots if resolved.is_relative_to(r)), resolved.parent)
        if compiled is None:
            return first_folder(root)(resolved)
        match = compiled.search(resolved.relative_to(root).as_posix())
        if match is None:
            return "(unmatched)"
        return match.group(1) if compiled.groups else match.group(0)

    return group


def _pattern(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value is None:
        return None
    try:
        re.compile(value)
    except re.error as exc:
        raise click.BadParameter(f"{value!r} is not a regular expression ({exc})") from None
    return value


@click.command()
@paths_argument
@click.option(
    "--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True
)
@click.option(
    "--group",
    "pattern",
    metavar="PATTERN",
    callback=_pattern,
    help="Regular expression on each cassette's path (relative to its PATH) naming its source: "
    "the first capture group, else the whole match. Default: the first folder under PATH.",
)
@click.option(
    "--shipped",
    is_flag=True,
    help="Evaluate the coefficients shipped with costsim on PATHS instead of refitting: "
    "how good the estimator is on recordings it has never seen.",
)
@lenient_option
@output_option
@handle_errors
def calibrate(
    paths: tuple[Path, ...],
    fmt: str,
    pattern: str | None,
    shipped: bool,
    lenient: bool,
    output: Path | None,
) -> None:
    """Fit the token estimator on the recorded calls under PATHS and report its error on
    recordings it was not fitted on (leave-one-source-out, beside leave-one-cassette-out)."""
    report = fit_and_measure(
        load(paths, lenient=lenient), group=_grouping(paths, pattern), shipped=shipped
    )
    emit(calibration_json(report) if fmt == "json" else calibration_table(report), output)
