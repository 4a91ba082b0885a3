"""The progress bar a long run shows on stderr."""

from __future__ import annotations

import sys
import time
from typing import Any

import click

__all__ = ["PROGRESS_AFTER", "ProgressBar"]

PROGRESS_AFTER = 1.0
"""Seconds a run goes on before its progress bar appears."""


class ProgressBar:
    """click's progress bar on stderr, for runs that last: it appears once a run has gone on
    for :data:`PROGRESS_AFTER` seconds, and never when stderr is not a terminal or with
    ``-q``."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled and sys.stderr.isatty()
        self.started = time.monotonic()
        self.bar: Any = None
        self.label = ""

    def __call__(self, what: str, done: int, total: int) -> None:
        if not self.enabled or time.monotonic() - self.started < PROGRESS_AFTER:
            return
        if self.bar is not None and (what != self.label or total != self.bar.length):
            self.close()
        if self.bar is None:
            self.label = what
            self.bar = click.progressbar(length=total, label=what, file=sys.stderr)
            self.bar.__enter__()
        self.bar.update(done - self.bar.pos)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.__exit__(None, None, None)
            self.bar = None
