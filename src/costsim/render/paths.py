"""Paths as reports show them: relative to the working folder. The standard library only, so
the pytest plugin's test process can name files without importing the table renderers."""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

__all__ = ["display_path", "printable", "shorten_path"]


def printable(text: str) -> str:
    """``text`` as it can be written out: a byte of a file name that is not UTF-8 (which Python
    reads as a lone surrogate) as ``\\xNN``, any other lone surrogate as ``\\udNNN``."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        try:
            raw = text.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:
            return text.encode("utf-8", "backslashreplace").decode("utf-8")
        return raw.decode("utf-8", "backslashreplace")
    return text


def display_path(path: Path) -> str:
    """A path relative to the working directory: below it, or up to two folders above it
    (``../.costsim/main.json``) when that is shorter than the absolute path given
    (``/tmp/run/a.yaml``, not ``../../tmp/run/a.yaml``); else as given. Printable (see
    :func:`printable`)."""
    return printable(_display(path, os.getcwd()))


@lru_cache(maxsize=65536)
def _display(path: Path, cwd: str) -> str:
    """Once per file and working folder: a report names each cassette many times."""
    here = Path(cwd).resolve()
    resolved = path.resolve()
    try:
        return str(resolved.relative_to(here))
    except ValueError:
        pass
    if path.is_absolute():
        relative = Path(os.path.relpath(resolved, here))
        near = relative.parts[:3].count("..") <= 2 and ".." not in relative.parts[2:]
        if near and len(str(relative)) < len(str(path)):
            return str(relative)
    return str(path)


def shorten_path(text: str, width: int) -> str:
    """``text`` (a path) in at most ``width`` characters, cut from the left at a folder
    boundary (``…/side_calls/chat.yaml``), never inside a folder's name; inside the file
    name only when that alone is too long."""
    if len(text) <= width:
        return text
    parts = text.split("/")
    for start in range(1, len(parts)):
        kept = "…/" + "/".join(parts[start:])
        if len(kept) <= width:
            return kept
    name = parts[-1]
    return "…" + name[len(name) - max(width - 1, 1) :]
