"""``costsim cache``: the cache of loaded cassettes and results (``.costsim_cache``)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from costsim.cli._errors import handle_errors
from costsim.cli._width import terminal_width
from costsim.render.text import shorten_left

CACHE_DIR = click.option(
    "--cache-dir",
    type=click.Path(path_type=Path, file_okay=False),
    help="The cache folder (default: .costsim_cache here, or $COSTSIM_CACHE_DIR).",
)


@click.group()
def cache() -> None:
    """The cache of loaded cassettes and results (info, clear).

    Always safe to delete; --no-cache on a command bypasses it."""


FORMAT = click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "json"]),
    default="table",
    show_default=True,
    help="A line of text, or a JSON document.",
)


def _entries(count: int) -> str:
    return f"{count:,} entr{'y' if count == 1 else 'ies'}"


def _emit(fmt: str, kind: str, root: Path, line: str, **figures: int) -> None:
    if fmt == "json":
        document = {"format_version": 1, "kind": kind, "path": str(root), **figures}
        click.echo(json.dumps(document, indent=2))
        return
    width = terminal_width()
    click.echo(line.replace("{path}", shorten_left(str(root), max(width - len(line) + 6, 20))))


@cache.command("clear")
@CACHE_DIR
@FORMAT
@handle_errors
def clear(cache_dir: Path | None, fmt: str) -> None:
    """Delete the cache's entries (a folder without costsim's CACHEDIR.TAG is refused)."""
    from costsim import api

    root, entries = api.clear_cache(cache_dir)
    line = f"removed {_entries(entries)} from the cache ({{path}})"
    _emit(fmt, "costsim.cache_clear", root, line, entries=entries)


@cache.command("info")
@CACHE_DIR
@FORMAT
@handle_errors
def info(cache_dir: Path | None, fmt: str) -> None:
    """Where the cache is, and how big."""
    from costsim import api

    root, entries, size = api.cache_info(cache_dir)
    line = f"{{path}}: {_entries(entries)}, {size / 1e6:.1f} MB"
    _emit(fmt, "costsim.cache_info", root, line, entries=entries, bytes=size)
