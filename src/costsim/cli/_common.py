"""Options and error handling every command shares, so the same option means the same thing
everywhere: ``--format``, ``-o FILE`` (the format from its extension unless ``--format`` says),
``--wide``, ``-v/--verbose``, ``-q/--quiet``, ``--include/--exclude``, percentages with or
without ``%``.

Exit codes: 0 clean; 1 findings or a failed gate; 2 bad input or usage.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

import click

from costsim.cli._errors import Findings
from costsim.cli._progress import ProgressBar
from costsim.cli._stdout import echo_pieces
from costsim.cli._width import stderr_text, terminal_width

if TYPE_CHECKING:
    from costsim.api import Progress, Result, Transcript

P = ParamSpec("P")
R = TypeVar("R")

FORMATS = ("table", "json", "markdown", "html")
"""``--format`` choices: the format registry's (``costsim.api.FORMATS``; a test keeps them
equal), not imported so that ``costsim --help`` stays fast."""


def parse_as_of(value: str | None) -> datetime | None:
    if value is None:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a date (use YYYY-MM-DD)") from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


class Percent(click.ParamType):  # type: ignore[type-arg]
    """A percentage: ``5``, ``5%`` or ``2.5%``; never negative."""

    name = "percent"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, float):
            return value
        text = str(value).strip().removesuffix("%").strip()
        try:
            number = float(text)
        except ValueError:
            self.fail(f"{value!r} is not a percentage (write 5 or 5%)", param, ctx)
        if not math.isfinite(number) or number < 0:
            self.fail(f"{value!r}: a threshold is 0% or more", param, ctx)
        return number


@dataclass(slots=True)
class Output:
    """Where and how a command writes its result (the shared output options)."""

    fmt: str
    path: Path | None = None
    wide: bool = False
    verbose: bool = False
    quiet: bool = False
    bar: ProgressBar | None = field(default=None, repr=False)

    @contextmanager
    def progress(self) -> Iterator[Progress]:
        """A progress callback for the API; the bar is gone before the result is written."""
        self.bar = ProgressBar(enabled=not self.quiet)
        try:
            yield self.bar
        finally:
            self.bar.close()

    def warn(self, message: str) -> None:
        if not self.quiet:
            click.echo(stderr_text(f"warning: {message}"), err=True)

    def fitted(self, message: str) -> list[str]:
        """``message`` wrapped to the terminal's width (continuation lines indented)."""
        from costsim.render.text import wrap

        return wrap(message, terminal_width())

    def layout(self) -> tuple[str, int, bool, bool]:
        """(format, width, verbose, wide): what the text of a result depends on."""
        return self.fmt, terminal_width(), self.verbose, self.wide

    def transcript(self, result: Result, where: str = "", failures: str = "") -> Transcript:
        """What :meth:`show` prints for ``result``: its warnings, skipped files and text."""
        from costsim.api import CALL_LEFT_OUT, Transcript
        from costsim.render.paths import printable

        fmt, width, verbose, wide = self.layout()
        skipped = (  # a call a lenient read left out is not its whole file skipped
            f"{where}{'' if item.error.endswith(CALL_LEFT_OUT) else 'skipped '}{item.error}"
            for item in result.skipped
        )
        pieces = result.pieces(fmt, width=width, verbose=verbose, wide=wide)
        warnings = tuple(printable(message) for message in (*result.warnings, *skipped))
        made = (printable(piece) for piece in pieces)  # written as made, never whole in memory
        return Transcript.of(warnings, made, printable(failures))

    def show(self, transcript: Transcript) -> None:
        """Warnings and skipped files on stderr, then the text; exit 1 when gates broke. The
        transcript is closed (its text is written once)."""
        for message in transcript.warnings:
            self.warn(message)
        with transcript.body:
            if self.path is not None:
                from costsim.render.formats import write_atomic

                write_atomic(self.path, transcript.body.chunks)
            else:
                echo_pieces(transcript.body.pieces())
        if transcript.failures:
            raise Findings(transcript.failures)

    def emit(self, result: Result, where: str = "") -> None:
        """Warnings and skipped files on stderr, then the result in the chosen format."""
        self.show(self.transcript(result, where))


def _format(fmt: str | None, path: Path | None) -> str:
    from costsim.api import format_for
    from costsim.errors import ConfigError

    try:
        chosen = format_for(None if path is None else str(path), fmt)
        named = format_for(str(path), None) if fmt is not None and path is not None else chosen
    except ConfigError as exc:
        if fmt is None:
            raise click.UsageError(str(exc)) from None
        named = chosen  # an extension that names no format: --format says which
    if named != chosen:  # -o r.json --format markdown: written as asked, said once
        click.echo(
            stderr_text(
                f"warning: writing {chosen} to {path}, whose extension names {named} "
                f"(--format {chosen} was given)"
            ),
            err=True,
        )
    return chosen


def output_options(command: Callable[..., R]) -> Callable[..., R]:
    """``--format``, ``-o``, ``--wide``, ``-v``, ``-q``, passed to the command as ``out``."""
    return _output_options(command, details=True)


def brief_output_options(command: Callable[..., R]) -> Callable[..., R]:
    """:func:`output_options` of a command whose output is one line (``cache info``): no
    html, and ``-v`` accepted (a script passes it to every command) but not listed, since
    there are no details to list."""
    return _output_options(command, details=False)


def _output_options(command: Callable[..., R], *, details: bool) -> Callable[..., R]:

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> R:
        path = kwargs.pop("output")
        out = Output(
            fmt=_format(kwargs.pop("fmt"), path),
            path=path,
            wide=kwargs.pop("wide"),
            verbose=kwargs.pop("verbose"),
            quiet=kwargs.pop("quiet"),
        )
        return command(*args, out=out, **kwargs)

    options = [
        click.option(
            "--format",
            "fmt",
            type=click.Choice(FORMATS if details else tuple(f for f in FORMATS if f != "html")),
            default=None,
            help="Output format [default: table, or the one -o FILE's extension names]"
            + ("; html: report, simulate and compare." if details else "."),
        ),
        click.option(
            "-o",
            "--output",
            type=click.Path(path_type=Path, dir_okay=False),
            help="Write to FILE (a regular file atomically; a device or FIFO as it is) instead "
            "of standard output; "
            + (".json, .md, .html and .txt" if details else ".json, .md and .txt")
            + " choose the format (another extension needs --format).",
        ),
        click.option(
            "--wide",
            is_flag=True,
            help="Every column (the full token split); not cut to fit."
            if details
            else "Not cut to fit the terminal.",
        ),
        click.option(
            "-v",
            "--verbose",
            is_flag=True,
            hidden=not details,
            help="List every event, note and unpriced call, with file and interaction.",
        ),
        click.option("-q", "--quiet", is_flag=True, help="No warnings or progress bar on stderr."),
    ]
    decorated: Callable[..., R] = wrapper
    for option in reversed(options):
        decorated = option(decorated)
    return decorated


def walk_options(command: Callable[..., R]) -> Callable[..., R]:
    """``--include`` and ``--exclude`` globs for the folders a command walks."""
    command = click.option(
        "--exclude",
        multiple=True,
        metavar="GLOB",
        help="Skip cassettes or folders matching GLOB (repeatable). Hidden folders, virtual "
        "environments, site-packages and node_modules are always skipped.",
    )(command)
    return click.option(
        "--include",
        multiple=True,
        metavar="GLOB",
        help="Only cassettes matching GLOB, against the path under PATH or the file name "
        "(repeatable).",
    )(command)


paths_argument = click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
lenient_option = click.option(
    "--lenient",
    is_flag=True,
    help="Leave out what cannot be read, with a warning, instead of stopping: a call (the "
    "rest of its cassette is read), a cassette, a folder, a FIFO or device named.",
)
as_of_option = click.option(
    "--as-of",
    "as_of",
    metavar="DATE",
    help="Price every call as of this date instead of its recorded date.",
)


gap_option = click.option(
    "--gap",
    type=click.FloatRange(min=0),
    default=None,
    help="Seconds between calls of traces without recorded dates.",
)


warm_option = click.option(
    "--warm",
    type=click.Choice(["steady", "first"]),
    default=None,
    help="A cache the recording found warm (written before it began), for requests a "
    "variant changed: steady, each run once the change ships (read at the same place of the "
    "changed prompt; the default); first, the first run after it ships (read only as far as "
    "the prompt is unchanged).",
)


REPORT_GROUPINGS = ("cassette", "model", "provider", "flavour")
"""``report --by`` (the same as ``costsim.api.REPORT_GROUPINGS``; a test keeps them equal)."""
BREAKDOWNS = (*REPORT_GROUPINGS, "agent", "tool")
"""``compare --by``: the report's groupings, and what only a scenario knows."""
SIMULATE_BREAKDOWNS = (*REPORT_GROUPINGS, "tool")
"""``simulate --by``: compare's but agent roles (a scenario's)."""
BY_HELP = {
    "cassette": "one row per cassette file",
    "model": "per model billed",
    "provider": "per provider billing the call (its host: azure, groq, aws-bedrock, ...)",
    "flavour": "per API flavour",
    "agent": "per agent role of the scenario",
    "tool": "per tool, its definition and result tokens",
}
"""One ``--by`` vocabulary: what each grouping means, whichever command offers it."""


def by_help(keys: tuple[str, ...]) -> str:
    """The help of a ``--by`` option: the same words for the same grouping everywhere."""
    return "Group the figures: " + "; ".join(f"{key}: {BY_HELP[key]}" for key in keys) + "."


def execution_options(command: Callable[P, R]) -> Callable[P, R]:
    """``--jobs``, ``--no-cache``, ``--scheduler`` and ``--calibration``: how the command runs
    its work (the same result whichever) and which estimator it uses; the command runs inside
    :func:`costsim.api.configured`."""
    return _execution(command, scheduler=True, estimates=True)


def local_execution_options(command: Callable[P, R]) -> Callable[P, R]:
    """``--jobs``, ``--no-cache`` and ``--calibration``, for commands that load cassettes on
    this machine and estimate what was not recorded."""
    return _execution(command, scheduler=False, estimates=True)


def loading_options(command: Callable[P, R]) -> Callable[P, R]:
    """``--jobs`` and ``--no-cache``, for commands that load cassettes and estimate nothing
    (``calibrate`` fits the estimator itself)."""
    return _execution(command, scheduler=False, estimates=False)


def _warn_cache(out: object, problem: str | None) -> None:
    """Say once, after a run, that its cache could not be written (it would be cold again)."""
    if problem is not None and isinstance(out, Output):
        out.warn(problem)


def _execution(command: Callable[P, R], *, scheduler: bool, estimates: bool) -> Callable[P, R]:
    @functools.wraps(command)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        from costsim import api

        jobs = kwargs.pop("jobs", None)
        no_cache = kwargs.pop("no_cache", False)
        address = kwargs.pop("scheduler", None)
        calibration = kwargs.pop("calibration", None)
        with api.configured(
            jobs=jobs,
            cache=False if no_cache else None,
            scheduler=address,
            calibration=calibration,
        ):
            try:
                result = command(*args, **kwargs)
            except (Findings, click.exceptions.Exit):  # a gate broke: the run itself went through
                _warn_cache(kwargs.get("out"), api.cache_problem())
                raise
            _warn_cache(kwargs.get("out"), api.cache_problem())
            return result

    options = [
        click.option(
            "--no-cache",
            is_flag=True,
            help="Neither read nor write the cache of loaded cassettes (.costsim_cache).",
        ),
        click.option(
            "-j",
            "--jobs",
            type=click.IntRange(min=1),
            metavar="N",
            help="Worker processes (default: one per processor usable: CPU affinity, a container's "
            "CPU quota; 1: none). The output is the same.",
        ),
    ]
    if estimates:
        options.insert(
            0,
            click.option(
                "--calibration",
                type=click.Path(dir_okay=False, path_type=Path),
                metavar="FILE",
                help="Estimate with the calibration 'costsim calibrate --save FILE' fitted on "
                "your recordings. Default: [tool.costsim] calibration, else the coefficients "
                "shipped with costsim.",
            ),
        )
    if scheduler:
        options.insert(
            0,
            click.option(
                "--scheduler",
                metavar="ADDRESS",
                help="Send cassette batches to the Dask cluster whose scheduler is at ADDRESS "
                "(tcp://host:8786; needs costsim[dask]). Default: [tool.costsim] scheduler.",
            ),
        )
    decorated: Callable[..., Any] = wrapper
    for option in options:
        decorated = option(decorated)
    return decorated
