"""What a YAML or JSON file says it is, from its first bytes: a vcrpy cassette, a costsim
scenario, or something else (a configuration file, costsim's own JSON output)."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from costsim.io.encoding import decode_head

__all__ = ["CASSETTE_SUFFIXES", "is_scenario_file", "sniff_kind"]

CASSETTE_SUFFIXES = (".yaml", ".yml", ".json")

_TOP_KEY = re.compile(r"""^["']?([A-Za-z_]+)["']?[ \t]*:""", re.MULTILINE)
_SNIFF_BYTES = 16_384


_JSON_INTERACTIONS = re.compile(r'"interactions"\s*:')


def sniff_kind(path: Path) -> str | None:
    """What a file's first bytes (in its encoding) say it is: ``cassette`` (a vcrpy
    cassette: a top-level ``interactions`` key, which vcrpy writes first), ``scenario`` (a
    costsim scenario: top-level ``variants`` and ``cassettes``) or ``other`` (a YAML mapping
    with other top-level keys, a JSON object without ``"interactions"``: a configuration
    file, costsim's own JSON output); None when they do not say (a bare list, vcrpy's format
    before 1.0; YAML in flow style). A cassette's content is indented under its keys, so no
    line of it can read as a top-level key."""
    suffix = path.suffix.lower()
    if suffix not in CASSETTE_SUFFIXES:
        return None
    data = _read(path, _SNIFF_BYTES)
    if data is None:
        return None  # the load says why
    head = decode_head(data)
    if suffix == ".json":
        if _JSON_INTERACTIONS.search(head):
            return "cassette"
        other = head.lstrip("\ufeff \t\r\n").startswith("{")
        return "other" if other and not _anywhere(path, _JSON_INTERACTIONS) else None
    keys = set(_TOP_KEY.findall(head))
    if {"variants", "cassettes"} <= keys:
        return "scenario"
    if "interactions" in keys:
        return "cassette"
    return "other" if keys and not _anywhere(path, _YAML_INTERACTIONS) else None


_YAML_INTERACTIONS = re.compile(r"""^["']?interactions["']?[ \t]*:""", re.MULTILINE)


def _anywhere(path: Path, key: re.Pattern[str]) -> bool:
    """Whether ``key`` is anywhere in the file (read whole only when its first bytes, where
    vcrpy writes it, do not show it: a file that is not a cassette, or one from a recorder
    that writes it late)."""
    data = _read(path, None)
    return data is None or key.search(decode_head(data)) is not None  # None: the load says why


def _read(path: Path, limit: int | None) -> bytes | None:
    """The first ``limit`` bytes of a regular file (all of them: None); None when it cannot be
    read or is not a regular file (a FIFO would wait for a writer, a device may never end)."""
    try:
        handle = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except (OSError, ValueError):
        return None
    try:
        if not stat.S_ISREG(os.fstat(handle).st_mode):
            return None
        with os.fdopen(handle, "rb", closefd=False) as file:
            return file.read() if limit is None else file.read(limit)
    except OSError:
        return None
    finally:
        os.close(handle)


def is_scenario_file(path: Path) -> bool:
    return sniff_kind(path) == "scenario"
