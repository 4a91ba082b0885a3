"""What a folder of recordings holds (a listing), and what is wrong in it (a check)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from costsim.analysis.secrets import find_secrets
from costsim.errors import ConfigError, CostsimError
from costsim.io.cassette import iter_cassette_paths, load_cassette
from costsim.providers.normalise import normalise

__all__ = [
    "SORT_KEYS",
    "CassetteCheck",
    "CassetteListing",
    "Finding",
    "check_cassettes",
    "list_cassettes",
]


@dataclass(frozen=True, slots=True)
class CassetteListing:
    path: Path
    first: datetime | None
    last: datetime | None
    calls: int
    providers: tuple[str, ...]
    models: tuple[str, ...]
    size: int
    error: str | None = None
    """Why the file could not be read (then it has no calls)."""


def _listing(path: Path) -> CassetteListing:
    try:
        trace = normalise(load_cassette(path))
    except CostsimError as exc:
        size = path.stat().st_size
        return CassetteListing(path, None, None, 0, (), (), size, error=exc.args[0])
    dates = [c.recorded_at for c in trace.calls if c.recorded_at is not None]
    return CassetteListing(
        path=path,
        first=min(dates, default=None),
        last=max(dates, default=None),
        calls=len(trace.calls),
        providers=tuple(sorted({c.provider for c in trace.calls})),
        models=tuple(sorted({c.priced_model for c in trace.calls if c.priced_model})),
        size=trace.size_bytes,
    )


SORT_KEYS: dict[str, Callable[[CassetteListing], tuple[object, ...]]] = {
    "name": lambda item: (str(item.path),),
    "date": lambda item: (
        item.first is None,
        item.first.isoformat() if item.first else "",
        str(item.path),
    ),
    "calls": lambda item: (-item.calls, str(item.path)),
    "size": lambda item: (-item.size, str(item.path)),
}


def list_cassettes(paths: Iterable[Path], *, sort: str = "name") -> list[CassetteListing]:
    if sort not in SORT_KEYS:
        raise ConfigError(f"cannot sort by {sort!r}; valid: {', '.join(SORT_KEYS)}")
    return sorted((_listing(p) for p in iter_cassette_paths(list(paths))), key=SORT_KEYS[sort])


@dataclass(frozen=True, slots=True)
class Finding:
    """One thing wrong in a cassette."""

    path: Path
    kind: str
    """unreadable, no-calls, no-usage or secret."""
    message: str
    interaction: int | None = None


@dataclass(frozen=True, slots=True)
class CassetteCheck:
    checked: int
    findings: tuple[Finding, ...]


def _problems(path: Path) -> Iterator[Finding]:
    try:
        cassette = load_cassette(path)
        trace = normalise(cassette)
    except CostsimError as exc:
        yield Finding(path, "unreadable", "unreadable: " + exc.args[0].removeprefix(f"{path}: "))
        return
    if not trace.calls:
        yield Finding(path, "no-calls", "no LLM calls")
    for call in trace.calls:
        if call.usage is None and not call.errored:
            index = call.provenance.index
            yield Finding(
                path, "no-usage", f"interaction {index}: {call.flavour} call without usage", index
            )
    for secret in find_secrets(cassette):
        yield Finding(path, "secret", f"secret: {secret}")


def check_cassettes(paths: Iterable[Path]) -> CassetteCheck:
    """Unreadable cassettes, cassettes without LLM calls, calls without usage, credentials."""
    checked = 0
    findings: list[Finding] = []
    for path in iter_cassette_paths(list(paths)):
        checked += 1
        findings.extend(_problems(path))
    return CassetteCheck(checked, tuple(findings))
