"""How wide costsim's output may be: stdout fits the terminal (or ``COLUMNS``, else 100
columns); messages on stderr wrap to it at a terminal and stay one line in pipes and logs."""

from __future__ import annotations

import os
import shutil
import sys
import textwrap

from costsim.render.visible import visible_lines

__all__ = ["DEFAULT_WIDTH", "stderr_text", "terminal_width"]

DEFAULT_WIDTH = 100


def _columns() -> int | None:
    """``COLUMNS`` when it is set to a width."""
    columns = os.environ.get("COLUMNS", "")
    return int(columns) if columns.isdigit() and int(columns) > 0 else None


def terminal_width() -> int:
    """``COLUMNS`` when set, else the terminal's width, else 100."""
    columns = _columns()
    if columns is not None:
        return columns
    if sys.stdout.isatty():
        return shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns
    return DEFAULT_WIDTH


def stderr_text(text: str) -> str:
    """Messages for stderr: each line as it is for logs and pipes (one line per error, to
    grep), wrapped to the width at a terminal (``COLUMNS`` when set, else the terminal's);
    control characters (a file or model name's) as escapes, never acted on."""
    text = visible_lines(text)
    if not sys.stderr.isatty():
        return text
    width = _columns()
    if width is None:
        try:
            width = os.get_terminal_size(sys.stderr.fileno()).columns
        except (OSError, ValueError):
            width = DEFAULT_WIDTH
    lines: list[str] = []
    for line in text.splitlines() or [""]:
        wrapped = textwrap.wrap(  # a path longer than the width stays whole, to copy
            line,
            width=max(width, 40),
            subsequent_indent="  ",
            break_on_hyphens=False,
            break_long_words=False,
        )
        lines += wrapped or [line]
    return "\n".join(lines)
