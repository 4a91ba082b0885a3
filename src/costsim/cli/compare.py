"""``costsim compare``: every scenario's variants against the recorded baseline."""

from __future__ import annotations

from pathlib import Path

import click

from costsim.cli._common import (
    BREAKDOWNS,
    Output,
    Percent,
    as_of_option,
    by_help,
    execution_options,
    lenient_option,
    output_options,
    parse_as_of,
    walk_options,
    warm_option,
)
from costsim.cli._errors import handle_errors


@click.command(short_help="Each scenario's variants against the recording, answer first.")
@click.argument("scenarios", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--variant", "only", multiple=True, metavar="NAME", help="Only these variants (repeatable)."
)
@click.option("--by", type=click.Choice(BREAKDOWNS), help="Add a breakdown. " + by_help(BREAKDOWNS))
@click.option(
    "--fail-over",
    type=Percent(),
    metavar="PCT",
    help="Exit 1 when a variant's Δ % (its cost change against the recording billed like "
    "for like, as in the table) is above PCT (5 or 5%).",
)
@warm_option
@as_of_option
@walk_options
@lenient_option
@output_options
@handle_errors
@execution_options
def compare(
    scenarios: tuple[Path, ...],
    only: tuple[str, ...],
    by: str | None,
    fail_over: float | None,
    warm: str | None,
    as_of: str | None,
    include: tuple[str, ...],
    exclude: tuple[str, ...],
    lenient: bool,
    out: Output,
) -> None:
    """Compare the variants of SCENARIOS (files, or folders of scenario files).

    Each scenario opens with its answer: the variant that saves most, what and how sure
    that is. Exit 1 when a scenario budget or --fail-over is broken. --warm overrides the
    scenarios' own warm setting, --as-of their pricing.as_of."""
    from costsim import api

    when = parse_as_of(as_of)
    stamp = when.isoformat() if when else None
    options = (sorted(set(only)), by, fail_over, lenient, list(include), list(exclude), warm, stamp)
    key = api.comparison_key(scenarios, options=options, layout=out.layout())
    transcript = api.recall_output(key)
    if transcript is None:
        with out.progress() as progress:
            result = api.compare_scenarios(
                scenarios,
                variants=only,
                by=by,
                fail_over=fail_over,
                lenient=lenient,
                progress=progress,
                include=include,
                exclude=exclude,
                warm=warm,
                as_of=when,
            )
        transcript = out.transcript(result, failures="\n".join(result.gate_failures))
        if key is not None:
            again = api.comparison_key(scenarios, options=options, layout=out.layout())
            api.remember_output(key, transcript, again=again)
    out.show(transcript)
