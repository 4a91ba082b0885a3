"""``costsim strategies [NAME]``: what can be simulated, and how to ask for it."""

from __future__ import annotations

import click

from costsim.cli._common import Output, output_options
from costsim.cli._errors import handle_errors


@click.command("strategies", short_help="The strategies to simulate, and their parameters.")
@click.argument("name", required=False)
@output_options
@handle_errors
def strategies_command(name: str | None, out: Output) -> None:
    """List every registered strategy (built-in, and from installed packages' costsim.strategies
    entry points); with NAME, its parameters with their types, defaults and meanings."""
    from costsim import api

    out.emit(api.list_strategies(name))
