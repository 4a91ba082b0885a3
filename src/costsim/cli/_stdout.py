"""Text on stdout, written piece by piece (a large JSON document is never whole in memory)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable

import click

__all__ = ["PIPE_CLOSED", "echo_pieces"]

PIPE_CLOSED = 141
"""The exit code when the reader of stdout went away (``costsim ... | head``): 128 + SIGPIPE,
as a shell reports a command the closed pipe ended (click's 1 would read as a broken gate)."""


def echo_pieces(pieces: Iterable[str]) -> None:
    """``pieces`` on stdout; exit :data:`PIPE_CLOSED` when its reader goes away first."""
    try:
        for piece in pieces:
            click.echo(piece, nl=False)
        sys.stdout.flush()
    except BrokenPipeError:
        # what is still buffered would fail again at exit: stdout goes nowhere from here
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(PIPE_CLOSED)
