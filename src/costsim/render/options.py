"""How text output is laid out: one options object every text renderer takes."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import PurePath

from costsim.errors import ConfigError

__all__ = ["EXTENSIONS", "FORMATS", "RenderOptions", "format_for"]

FORMATS = ("table", "json", "markdown", "html")
"""Every format, in the order ``--format`` lists them."""
EXTENSIONS = {
    ".json": "json",
    ".md": "markdown",
    ".markdown": "markdown",
    ".txt": "table",
    ".html": "html",
    ".htm": "html",
}
"""The format ``-o FILE`` writes when ``--format`` does not say."""


@dataclass(frozen=True, slots=True)
class RenderOptions:
    """How text output is laid out (JSON carries every figure whatever these say).

    ``width``: the terminal's columns (tables are cut to fit it); ``verbose``: list every
    event, note and unpriced call instead of the first few and ``and N more (use -v)``;
    ``wide``: the full token split, not cut to ``width``.
    """

    width: int = 100
    verbose: bool = False
    wide: bool = False

    @property
    def fit(self) -> int:
        """The width tables are cut to (none with ``wide``)."""
        return 10**6 if self.wide else self.width


def format_for(output: str | None, fmt: str | None) -> str:
    """The format to write: ``fmt`` when given, else the one ``output``'s extension names
    (``.json``, ``.md``, ``.txt``), else ``table`` (on stdout, or to a device or pipe named
    by ``-o``: ``/dev/null``, ``/dev/stdout``)."""
    if fmt is not None:
        return fmt
    if output is None:
        return "table"
    suffix = PurePath(output).suffix.lower()
    if suffix in EXTENSIONS:
        return EXTENSIONS[suffix]
    if _stream(output):  # /dev/null, /dev/stdout, a FIFO: what stdout would get
        return "table"
    known = ", ".join(EXTENSIONS)
    raise ConfigError(
        f"cannot tell which format to write to {output!r} from its extension (known: {known}); "
        f"say it with --format ({', '.join(FORMATS)})"
    )


def _stream(output: str) -> bool:
    """``output`` names a device or pipe (not a file, a folder, or nothing yet)."""
    try:
        mode = os.stat(output).st_mode
    except (OSError, ValueError):
        return False
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)
