"""What a ``pytest --costsim`` run is asked and how it ended, as plain data.

Read before any test runs and handed to whatever meters the calls (this process, or the
metering process of :mod:`costsim.plugin.helper`), so it holds values, never pytest objects.
Light on purpose: importing it imports nothing heavy.
"""

from __future__ import annotations

import re
import shutil
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from costsim.errors import ConfigError
from costsim.render.cuts import display_width, narrowed
from costsim.render.visible import visible

if TYPE_CHECKING:
    from costsim.api.gates import Budget
    from costsim.plugin.settings import PluginSettings

__all__ = [
    "FIRST_RUN_NOTE",
    "OPTIONS",
    "REPORT_SUFFIXES",
    "MeteringError",
    "Run",
    "Setup",
    "SummaryOptions",
    "baseline_path",
    "read_settings",
    "verbosity",
    "wrap",
]

REPORT_SUFFIXES = (".json", ".md", ".markdown", ".html", ".htm")
"""What ``--costsim-report`` can write, by the file's extension (as ``costsim -o``)."""
FIRST_RUN_NOTE = (
    "warm starts: the first run after each change ships (--costsim-warm first): a cache a "
    "cassette found warm is read by a changed request only as far as its prompt is unchanged"
)
"""Said by a run that meters drifted calls and what-if columns as a first run."""

OPTIONS = ("save", "compare", "fail", "report", "strategies", "lenient")
"""The ``--costsim-*`` options the end of a run reads (``costsim_save``, ...)."""
_NAME = re.compile(r"[A-Za-z0-9][\w.-]*")


class MeteringError(Exception):
    """What the metering process could not do, in its words (``summary: ValueError: ...``)."""


def baseline_path(root: Path, name: str) -> Path:
    """``.costsim/NAME.json`` under the rootdir; a name is a plain file name, never a path."""
    if not _NAME.fullmatch(name) or name.endswith(".json"):
        raise ConfigError(
            f"baseline name {name!r} must be a plain name (letters, digits, '.', '-', '_'), "
            "saved as .costsim/NAME.json"
        )
    return root / ".costsim" / f"{name}.json"


def read_settings(path: Path) -> PluginSettings | None:
    """``[tool.costsim]`` of the pyproject.toml at ``path``, checked; None when there is no
    such table (the defaults: nothing more is imported)."""
    from costsim.api.gates import SettingsError, checked_table

    table, problems = checked_table(path)
    if not table:
        if problems:
            raise SettingsError(path, problems)
        return None
    from costsim.plugin.settings import validated

    return validated(path, table, problems)


@dataclass(frozen=True, slots=True)
class Setup:
    """How calls are metered, from the settings: known before any test runs."""

    drift: str = "warn"
    warm: str = "steady"
    """What a request the code changed finds of a cache its cassette found warm."""
    calibration: Path | None = None
    pattern_budgets: tuple[tuple[str, Budget], ...] = ()
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Run:
    """What the finishing code needs to know of the pytest run."""

    root: Path
    settings: PluginSettings | None
    exitstatus: int
    collect_only: bool
    stopped: bool = False
    """-x / --maxfail ended the run early."""
    options: dict[str, Any] = field(default_factory=dict)
    """The ``--costsim-*`` options of :data:`OPTIONS`, by name without the prefix."""
    selected: frozenset[str] = frozenset()
    """Node ids of the tests this run collected (after deselection)."""
    order: tuple[str, ...] = ()
    """Node ids of the tests as collected, in collection order."""
    deselected: frozenset[str] = frozenset()
    """Node ids of the tests left out and announced so (-k, -m, --deselect)."""
    whole_files: frozenset[str] = frozenset()
    """Test files (as in node ids) this run collected whole: a test of a saved baseline
    that is in one of them, neither selected nor deselected, no longer exists."""
    budgets: dict[str, Budget] = field(default_factory=dict)
    tolerances: dict[str, dict[str, float]] = field(default_factory=dict)
    usage_errors: tuple[str, ...] = ()
    unserved: tuple[str, ...] = ()
    """Tests that failed on a request vcrpy had no recorded response for (the controller's)."""
    failed: tuple[str, ...] = ()
    """Tests that failed or errored before their end (the controller's): a baseline does not
    keep their calls."""
    internal_errors: tuple[str, ...] = ()
    """costsim's own errors in the test process, for a metering process elsewhere (the
    report it writes lists them)."""

    def option(self, name: str) -> Any:
        return self.options.get(name)


@dataclass(frozen=True, slots=True)
class SummaryOptions:
    top: int | None = None
    strategies: str | None = None
    width: int = 100
    verbose: int = 0
    """pytest's verbosity: 1 lists every drifted call, 2 adds the token split."""
    markdown: bool = False


def verbosity(config: Any) -> int:
    """How many ``-v`` (``-q`` counts down): pytest 8's ``Config.get_verbosity``; pytest 7
    keeps it among the options."""
    get = getattr(config, "get_verbosity", None)
    return int(get()) if callable(get) else int(config.getoption("verbose", 0) or 0)


def wrap(line: str, width: int, indent: str = "  ") -> list[str]:
    """``line`` wrapped to ``width`` columns (continuation lines indented); a word is cut
    only when it is longer than a line (a test id of 105 characters ran past the terminal).
    Control characters are escapes (a recorded name never splits a line or sets the
    terminal's title)."""
    line = visible(line)
    if display_width(line) <= width:
        return [line]
    lead = line[: len(line) - len(line.lstrip())]

    def lines(size: int) -> list[str]:
        return textwrap.wrap(
            line,
            size,
            initial_indent="",
            subsequent_indent=lead + indent,
            break_long_words=True,
            break_on_hyphens=False,
            drop_whitespace=True,
        ) or [line]

    if display_width(line) == len(line):
        return lines(width)
    return narrowed(lines, width, display_width, least=1)


SHOWN_FAILURES = 10
"""Budget and regression failures listed on the terminal without ``-v``."""
RUN_FAILURES = ("costsim: ", "costsim internal error")
"""How the run's own failures begin (a test's begin with its node id)."""


def failure_lines(failures: list[str], width: int, *, every: bool) -> list[str]:
    """``FAILED …`` lines, wrapped: without ``every`` (``-v``), every failure of the run's own
    (costsim's: usage, errors, drift) and the first :data:`SHOWN_FAILURES` of the tests'
    (budgets and regressions, one per test and metric), then how many more."""
    per_test = [i for i, failure in enumerate(failures) if not failure.startswith(RUN_FAILURES)]
    hidden = set() if every else set(per_test[SHOWN_FAILURES:])
    lines = [
        line
        for i, failure in enumerate(failures)
        if i not in hidden
        for line in wrap(f"FAILED {_fitted(failure, width)}", width)
    ]
    if hidden:
        lines.append(f"and {len(hidden)} more (-v lists them; so does --costsim-report)")
    return lines


def _fitted(failure: str, width: int) -> str:
    """A test's failure with its id cut to fit one line beside ``FAILED`` (a long
    parametrised id is one word, which wrapping never cuts: it ran past the terminal)."""
    test, colon, rest = failure.partition(": ")
    room = width - len("FAILED :") - 2  # the ellipsis's extra bytes
    if failure.startswith(RUN_FAILURES) or not colon or len(test) <= room:
        return failure
    from costsim.plugin.ids import cut_test_ids

    return f"{cut_test_ids([test], room)[0]}: {rest}"


def usage_text(config: Any, message: str) -> str:
    """A usage error's text for pytest to print after ``ERROR: ``, wrapped to the terminal
    (its width from the terminal reporter once there is one, else from the environment)."""
    if config.pluginmanager.get_plugin("terminalreporter") is not None:
        width = config.get_terminal_writer().fullwidth
    else:  # configuring, before the terminal reporter is there
        width = shutil.get_terminal_size().columns
    return "\n".join(wrap(f"costsim: {message}", max(width - len("ERROR: "), 40)))
