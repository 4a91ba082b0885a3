"""``costsim cache``: the cache of loaded cassettes and results (``.costsim_cache``)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from costsim.cli._common import Output, brief_output_options
from costsim.cli._errors import handle_errors
from costsim.cli._width import terminal_width
from costsim.errors import ConfigError
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


def _entries(count: int) -> str:
    return f"{count:,} entr{'y' if count == 1 else 'ies'}"


def _emit(out: Output, kind: str, root: Path, line: str, **figures: int) -> None:
    """The result as every command writes one (``--format``, ``-o``): a line of text (the
    folder cut to the terminal) or a JSON document; ``-q`` has no warning to silence here."""
    if out.fmt == "json":
        document = {"format_version": 1, "kind": kind, "path": str(root), **figures}
        text = json.dumps(document, indent=2) + "\n"
    elif out.fmt in ("table", "markdown"):
        width = 10**6 if out.wide or out.path is not None else terminal_width()
        text = line.replace("{path}", shorten_left(str(root), max(width - len(line) + 6, 20)))
        text += "\n"
    else:
        raise ConfigError(f"cache output has no {out.fmt!r} format; formats: table, markdown, json")
    if out.path is not None:
        from costsim.render.formats import write_atomic  # not at import: every command's start

        write_atomic(out.path, text)
    else:
        click.echo(text, nl=False)


@cache.command("clear")
@CACHE_DIR
@brief_output_options
@handle_errors
def clear(cache_dir: Path | None, out: Output) -> None:
    """Delete the cache's entries (a folder without costsim's CACHEDIR.TAG is refused, unless
    it is laid out as costsim's cache and holds nothing else: its tag was damaged)."""
    from costsim import api

    damage = api.cache_damage(cache_dir)
    root, entries = api.clear_cache(cache_dir)
    if damage is not None:
        out.warn(f"{root}: {damage}, but the folder is laid out as costsim's cache: cleared")
    line = f"removed {_entries(entries)} from the cache ({{path}})"
    _emit(out, "costsim.cache_clear", root, line, entries=entries)


@cache.command("info")
@CACHE_DIR
@brief_output_options
@handle_errors
def info(cache_dir: Path | None, out: Output) -> None:
    """Where the cache is, and how big."""
    from costsim import api

    root, entries, size = api.cache_info(cache_dir)
    damage = api.cache_damage(cache_dir)
    if damage is not None:
        out.warn(f"{root}: {damage}; costsim cache clear clears the folder all the same")
    line = f"{{path}}: {_entries(entries)}, {size / 1e6:.1f} MB"
    if not root.exists():  # cleared, or no run has cached anything here yet
        line = "{path}: no cache there yet (the first run that reads cassettes makes it)"
    _emit(out, "costsim.cache_info", root, line, entries=entries, bytes=size)
