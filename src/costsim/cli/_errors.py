"""How the CLI ends on bad input (exit 2, one sentence) and on findings (exit 1)."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

import click

from costsim.cli._width import stderr_text
from costsim.errors import CassetteError, CostsimError, DataError, InputError, WalkError
from costsim.render.paths import printable

__all__ = ["EXIT_FINDINGS", "EXIT_INPUT", "Findings", "InputProblem", "handle_errors"]

P = ParamSpec("P")
R = TypeVar("R")

EXIT_FINDINGS = 1
EXIT_INPUT = 2


class InputProblem(click.ClickException):
    """Bad input: one sentence, exit code 2."""

    exit_code = EXIT_INPUT

    def show(self, file: Any = None) -> None:
        click.echo(stderr_text(f"Error: {self.format_message()}"), err=True)


class Findings(click.ClickException):
    """Something was found (a check failed, a gate tripped): exit code 1."""

    exit_code = EXIT_FINDINGS

    def show(self, file: Any = None) -> None:
        click.echo(stderr_text(self.format_message()), err=True)


_LENIENT_HINT = "; --lenient leaves out what cannot be read, and costsim cassettes check lists all"
"""Said after an unreadable cassette (or call) by a command that could have left it out."""
_WALK_HINT = "; --lenient leaves it out with a warning"
"""Said after a folder that cannot be read, or a FIFO or device named, by such a command."""


def _named(path: Path) -> str:
    """A cassette's path as given, but one reached through ``..`` (a scenario's pattern,
    ``scenarios/../tests/x.yaml``) as the file it is: below the working folder, relative."""
    if ".." not in path.parts:
        return printable(str(path))
    resolved = path.resolve()
    try:
        return printable(str(resolved.relative_to(Path.cwd().resolve())))
    except ValueError:
        return printable(str(resolved))


def handle_errors(command: Callable[P, R]) -> Callable[P, R]:
    """Turn costsim errors into one-line CLI errors instead of tracebacks."""

    @functools.wraps(command)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return command(*args, **kwargs)
        except CassetteError as exc:
            lenient = kwargs.get("lenient") is False and not isinstance(exc, FileNotFoundError)
            hint = _WALK_HINT if isinstance(exc, WalkError) else _LENIENT_HINT
            named = f"{_named(exc.path)}: {exc.reason}"
            raise InputProblem(f"{named}{hint if lenient else ''}") from None
        except InputError as exc:
            raise InputProblem(str(exc)) from None
        except DataError as exc:
            raise InputProblem(f"costsim data problem: {exc}") from None
        except CostsimError as exc:
            raise InputProblem(str(exc)) from None
        except KeyboardInterrupt:  # Ctrl-C: what a shell reports for SIGINT, not a gate's 1
            click.echo("\nAborted!", err=True)
            sys.exit(INTERRUPTED)

    return wrapper


INTERRUPTED = 130
"""The exit code of a run stopped by Ctrl-C (128 + SIGINT), as shells report it."""
