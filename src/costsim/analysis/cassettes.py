"""What a folder of recordings holds (a listing), and what is wrong in it (a check)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from costsim.analysis.checks import Finding, check_cassette, validate_rules
from costsim.analysis.secret_rules import Severity
from costsim.errors import ConfigError, CostsimError
from costsim.io.cassette import load_cassette
from costsim.io.walk import Found, Progress, Selection, find_cassettes
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


def _tick(progress: Progress | None, what: str, done: int, total: int) -> None:
    if progress is not None:
        progress(what, done, total)


def list_cassettes(
    paths: Iterable[Path],
    *,
    sort: str = "name",
    selection: Selection | None = None,
    progress: Progress | None = None,
) -> tuple[list[CassetteListing], Found]:
    """One listing per cassette under ``paths``, sorted; and what the walk found."""
    if sort not in SORT_KEYS:
        raise ConfigError(f"cannot sort by {sort!r}; valid: {', '.join(SORT_KEYS)}")
    found = find_cassettes(list(paths), selection)
    items = []
    for done, path in enumerate(found.files, start=1):
        items.append(_listing(path))
        _tick(progress, "reading", done, len(found.files))
    return sorted(items, key=SORT_KEYS[sort]), found


@dataclass(frozen=True, slots=True)
class CassetteCheck:
    """What ``cassettes check`` found: the findings shown, and how many were hidden."""

    checked: int
    findings: tuple[Finding, ...]
    hidden_info: int = 0
    """Informational findings left out (bot-management cookies, usage-only calls)."""
    ignored: int = 0
    """Findings of rules the user silenced."""
    warnings: tuple[str, ...] = ()
    """Folders that hold no cassette."""

    @property
    def failing(self) -> int:
        """Findings that fail the check (errors and warnings)."""
        return sum(f.severity is not Severity.INFO for f in self.findings)


def check_cassettes(
    paths: Iterable[Path],
    *,
    ignore: Iterable[str] = (),
    show_info: bool = False,
    selection: Selection | None = None,
    progress: Progress | None = None,
) -> CassetteCheck:
    """Unreadable cassettes, calls without (valid) usage, calls costsim cannot meter and
    credentials left in recordings; ``ignore`` silences rules by id."""
    skip = validate_rules(ignore, "--ignore")
    shown: list[Finding] = []
    hidden = ignored = checked = 0
    found = find_cassettes(list(paths), selection)
    for path in found.files:
        checked += 1
        _tick(progress, "checking", checked, len(found.files))
        for finding in check_cassette(path):
            if finding.rule in skip:
                ignored += 1
            elif finding.severity is Severity.INFO and not show_info:
                hidden += 1
            else:
                shown.append(finding)
    return CassetteCheck(checked, tuple(shown), hidden, ignored, tuple(found.warnings()))
