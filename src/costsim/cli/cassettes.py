"""``costsim cassettes list|check``: what a folder of recordings holds, and what is wrong in it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import click
from tabulate import tabulate

from costsim.analysis.secrets import find_secrets
from costsim.cli._common import Findings, handle_errors, paths_argument
from costsim.errors import CostsimError
from costsim.io.cassette import iter_cassette_paths, load_cassette
from costsim.providers.normalise import normalise
from costsim.render.report import display_path


@click.group()
def cassettes() -> None:
    """Inspect cassette files."""


@dataclass(frozen=True, slots=True)
class _Listing:
    path: Path
    first: datetime | None
    last: datetime | None
    calls: int
    providers: str
    models: str
    size: int
    error: str | None = None


def _listing(path: Path) -> _Listing:
    try:
        trace = normalise(load_cassette(path))
    except CostsimError as exc:
        return _Listing(path, None, None, 0, "", "", path.stat().st_size, error=exc.args[0])
    dates = [c.recorded_at for c in trace.calls if c.recorded_at is not None]
    return _Listing(
        path=path,
        first=min(dates, default=None),
        last=max(dates, default=None),
        calls=len(trace.calls),
        providers=",".join(sorted({c.provider for c in trace.calls})),
        models=",".join(sorted({c.priced_model for c in trace.calls if c.priced_model})),
        size=trace.size_bytes,
    )


_SORT_KEYS: dict[str, Callable[[_Listing], tuple[object, ...]]] = {
    "name": lambda item: (str(item.path),),
    "date": lambda item: (
        item.first is None,
        item.first.isoformat() if item.first else "",
        str(item.path),
    ),
    "calls": lambda item: (-item.calls, str(item.path)),
    "size": lambda item: (-item.size, str(item.path)),
}


def _date_range(item: _Listing) -> str:
    if item.first is None or item.last is None:
        return "-"
    first, last = item.first.date().isoformat(), item.last.date().isoformat()
    return first if first == last else f"{first}..{last}"


@cassettes.command("list")
@paths_argument
@click.option("--sort", type=click.Choice(list(_SORT_KEYS)), default="name", show_default=True)
@handle_errors
def list_cassettes(paths: tuple[Path, ...], sort: str) -> None:
    """One line per cassette: recorded dates, LLM calls, providers, models, size."""
    items = sorted((_listing(p) for p in iter_cassette_paths(list(paths))), key=_SORT_KEYS[sort])
    rows = [
        [
            display_path(item.path),
            _date_range(item),
            item.calls if item.error is None else "unreadable",
            item.providers,
            item.models,
            f"{item.size:,}",
        ]
        for item in items
    ]
    headers = ["cassette", "recorded", "llm calls", "providers", "models", "bytes"]
    click.echo(tabulate(rows, headers=headers, tablefmt="simple"))


def _problems(path: Path) -> Iterator[str]:
    try:
        cassette = load_cassette(path)
        trace = normalise(cassette)
    except CostsimError as exc:
        yield f"unreadable: {exc.args[0].removeprefix(f'{path}: ')}"
        return
    if not trace.calls:
        yield "no LLM calls"
    for call in trace.calls:
        if call.usage is None and not call.errored:
            yield f"interaction {call.provenance.index}: {call.flavour} call without usage"
    for finding in find_secrets(cassette):
        yield f"secret: {finding}"


@cassettes.command("check")
@paths_argument
@handle_errors
def check_cassettes(paths: tuple[Path, ...]) -> None:
    """Report unreadable cassettes, cassettes without LLM calls, calls without usage and
    credentials left in recordings. Exit status 1 when anything is found."""
    found = 0
    checked = 0
    for path in iter_cassette_paths(list(paths)):
        checked += 1
        for problem in _problems(path):
            found += 1
            click.echo(f"{display_path(path)}: {problem}")
    if found:
        raise Findings(f"{found} finding(s) in {checked} cassette(s)")
    click.echo(f"{checked} cassette(s) checked, nothing found")
