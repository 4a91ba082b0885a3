"""``costsim cache``: the cache of loaded cassettes and results (``.costsim_cache``)."""

from __future__ import annotations

from pathlib import Path

import click

from costsim.cli._common import handle_errors

CACHE_DIR = click.option(
    "--cache-dir",
    type=click.Path(path_type=Path, file_okay=False),
    help="The cache folder (default: .costsim_cache here, or $COSTSIM_CACHE_DIR).",
)


@click.group()
def cache() -> None:
    """costsim's cache: loaded cassettes and per-cassette results, keyed by content.

    Always safe to delete; --no-cache on a command bypasses it."""


@cache.command("clear")
@CACHE_DIR
@handle_errors
def clear(cache_dir: Path | None) -> None:
    """Delete the cache folder."""
    from costsim import api

    root, entries = api.clear_cache(cache_dir)
    click.echo(f"removed {entries} cache entr{'y' if entries == 1 else 'ies'} ({root})")


@cache.command("info")
@CACHE_DIR
@handle_errors
def info(cache_dir: Path | None) -> None:
    """Where the cache is, and how big."""
    from costsim import api

    root, entries, size = api.cache_info(cache_dir)
    click.echo(f"{root}: {entries} entr{'y' if entries == 1 else 'ies'}, {size / 1e6:.1f} MB")
