"""``costsim calibrate``: how well the offline estimator does on the traces at hand."""

from __future__ import annotations

from pathlib import Path

import click

from costsim.cli._common import (
    Output,
    lenient_option,
    loading_options,
    output_options,
    paths_argument,
    walk_options,
)
from costsim.cli._errors import handle_errors


@click.command(short_help="How well the offline token estimator does on PATHS.")
@paths_argument
@click.option(
    "--group",
    "pattern",
    metavar="PATTERN",
    help="Regular expression on each cassette's path (relative to its PATH) naming its source: "
    "the first capture group, else the whole match. Default: the first folder under PATH.",
)
@click.option(
    "--shipped",
    is_flag=True,
    help="Evaluate the coefficients shipped with costsim on PATHS instead of refitting: "
    "how good the estimator is on recordings it has never seen.",
)
@click.option(
    "--save",
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="FILE",
    help="Save the fit to FILE; every later estimate uses it when [tool.costsim] calibration "
    "(or --calibration) names FILE. Not with --shipped.",
)
@lenient_option
@walk_options
@output_options
@handle_errors
@loading_options
def calibrate(
    paths: tuple[Path, ...],
    pattern: str | None,
    shipped: bool,
    save: Path | None,
    lenient: bool,
    include: tuple[str, ...],
    exclude: tuple[str, ...],
    out: Output,
) -> None:
    """Fit the token estimator on the recorded calls under PATHS and report its error on
    recordings it was not fitted on (leave-one-source-out, beside leave-one-cassette-out)."""
    from costsim import api

    if save is not None and shipped:
        raise click.UsageError("--save keeps a fit: it cannot be used with --shipped")
    with out.progress() as progress:
        result = api.calibrate(
            paths,
            group=pattern,
            shipped=shipped,
            lenient=lenient,
            include=include,
            exclude=exclude,
            progress=progress,
        )
    if save is not None:
        result.save(save)
    out.emit(result)
    if save is not None:
        for line in out.fitted(
            f"Saved the fit to {save}. Estimate with it: --calibration {save}, or in "
            f'pyproject.toml: [tool.costsim] calibration = "{save}"'
        ):
            click.echo(line, err=True)
