"""The ``costsim`` command line: a thin door onto the library.

Exit codes: 0 clean; 1 findings (``cassettes check``) or a failed gate; 2 bad input or usage.
"""

from __future__ import annotations

import click

from costsim.cli.advise import advise
from costsim.cli.baseline import baseline
from costsim.cli.cache import cache
from costsim.cli.calibrate import calibrate
from costsim.cli.cassettes import cassettes
from costsim.cli.check_cache import check_cache_command
from costsim.cli.compare import compare
from costsim.cli.report import report
from costsim.cli.simulate import simulate
from costsim.cli.strategies import strategies_command

__all__ = ["cli", "main"]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="costsim")
def cli() -> None:
    """Replay recorded LLM API traffic (vcrpy cassettes) and report what it cost.

    \b
    Start with:
      costsim report tests/cassettes/        what the recordings cost
      costsim strategies                     what can be simulated
      costsim simulate tests/cassettes/ -s caching:ttl=1h
      costsim compare scenarios/             which variant saves most, how sure

    Every command takes --format table|json|markdown (html: report, simulate and
    compare), -o FILE, --wide, -v and -q.
    """


cli.add_command(report)
cli.add_command(cassettes)
cli.add_command(calibrate)
cli.add_command(check_cache_command)
cli.add_command(simulate)
cli.add_command(compare)
cli.add_command(baseline)
cli.add_command(advise)
cli.add_command(cache)
cli.add_command(strategies_command)


def main() -> None:
    from costsim.api.execution import tune_gc

    tune_gc()  # the command's process is costsim's own
    cli(prog_name="costsim")
