"""Options and error handling shared by the commands.

Exit codes: 0 clean; 1 findings or a failed gate; 2 bad input or usage.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

import click

from costsim.errors import CostsimError, DataError, InputError

if TYPE_CHECKING:
    from costsim.api import Result

P = ParamSpec("P")
R = TypeVar("R")

EXIT_FINDINGS = 1
EXIT_INPUT = 2


class InputProblem(click.ClickException):
    """Bad input: one sentence, exit code 2."""

    exit_code = EXIT_INPUT


class Findings(click.ClickException):
    """Something was found (a check failed, a gate tripped): exit code 1."""

    exit_code = EXIT_FINDINGS

    def show(self, file: Any = None) -> None:
        click.echo(self.format_message(), err=True)


def handle_errors(command: Callable[P, R]) -> Callable[P, R]:
    """Turn costsim errors into one-line CLI errors instead of tracebacks."""

    @functools.wraps(command)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return command(*args, **kwargs)
        except InputError as exc:
            raise InputProblem(str(exc)) from None
        except DataError as exc:
            raise InputProblem(f"costsim data problem: {exc}") from None
        except CostsimError as exc:
            raise InputProblem(str(exc)) from None

    return wrapper


def parse_as_of(value: str | None) -> datetime | None:
    if value is None:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a date (use YYYY-MM-DD)") from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


paths_argument = click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
format_option = click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "json", "markdown", "html"]),
    default="table",
    show_default=True,
    help="Output format.",
)
lenient_option = click.option(
    "--lenient", is_flag=True, help="Skip unreadable cassettes with a warning instead of stopping."
)
as_of_option = click.option(
    "--as-of",
    "as_of",
    metavar="DATE",
    help="Price every call as of this date instead of its recorded date.",
)
output_option = click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Write the output to this file (atomically) instead of standard output.",
)


def warn_skipped(result: Result, where: str = "") -> None:
    """In lenient mode: one warning on stderr per skipped cassette."""
    for item in result.skipped:
        click.echo(f"warning: {where}skipped {item.error}", err=True)


def emit(text: str, output: Path | None) -> None:
    """Print ``text``, or write it atomically to ``output``."""
    from costsim.render.formats import write_atomic

    if output is not None:
        write_atomic(output, text)
    else:
        click.echo(text, nl=False)
