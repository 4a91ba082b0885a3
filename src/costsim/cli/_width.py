"""How wide costsim's output may be: stdout fits the terminal (or ``COLUMNS``, else 100
columns); messages on stderr wrap to it at a terminal and stay one line in pipes and logs."""

from __future__ import annotations

import os
import shutil
import sys
import textwrap

__all__ = ["DEFAULT_WIDTH", "stderr_text", "terminal_width"]

DEFAULT_WIDTH = 100


def terminal_width() -> int:
    """``COLUMNS`` when set, else the terminal's width, else 100."""
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    if sys.stdout.isatty():
        return shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns
    return DEFAULT_WIDTH


def stderr_text(text: str) -> str:
    """Messages for stderr: each line as it is for logs and pipes (one line per error, to
    grep), wrapped to the width at a terminal (``COLUMNS`` when set, else the terminal's)."""
    if not sys.stderr.isatty():
        return text
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        width = int(columns)
    else:
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
