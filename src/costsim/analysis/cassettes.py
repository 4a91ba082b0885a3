"""What a folder of recordings holds (a listing), and what is wrong in it (a check)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from costsim.analysis.checks import Finding, validate_rules
from costsim.analysis.secret_rules import Severity
from costsim.errors import ConfigError
from costsim.model import CassetteTrace
from costsim.model.ordering import natural_key
from costsim.pricing.hosts import host_provider

__all__ = [
    "SORT_KEYS",
    "CassetteCheck",
    "CassetteListing",
    "Finding",
    "check_sort",
    "listing",
    "sorted_listings",
    "tally",
    "unreadable",
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


def unreadable(path: Path, error: str) -> CassetteListing:
    """The listing of a file that could not be read: its size and why."""
    try:
        size = path.stat().st_size
    except OSError:
        size = 0
    return CassetteListing(path, None, None, 0, (), (), size, error=error)


def listing(trace: CassetteTrace) -> CassetteListing:
    """What one cassette holds: its LLM calls, and the dates, providers and models of its
    embeddings requests too (billed, and priced at those dates)."""
    embeddings = trace.embeddings
    dates = [c.recorded_at for c in trace.calls if c.recorded_at is not None]
    dates += [e.recorded_at for e in embeddings if e.recorded_at is not None]
    providers = {c.billed_by for c in trace.calls}  # as report --by provider
    providers |= {host_provider(e.host) or "openai" for e in embeddings}  # as they are priced
    models = {c.priced_model for c in trace.calls if c.priced_model}
    return CassetteListing(
        path=trace.path,
        first=min(dates, default=None),
        last=max(dates, default=None),
        calls=len(trace.calls),
        providers=tuple(sorted(providers)),
        models=tuple(sorted(models | {e.model for e in embeddings})),
        size=trace.size_bytes,
    )


def _name(item: CassetteListing) -> tuple[object, ...]:
    """A path in natural order (``test_2`` before ``test_10``)."""
    return natural_key(str(item.path))


SORT_KEYS: dict[str, Callable[[CassetteListing], tuple[object, ...]]] = {
    "name": lambda item: (_name(item),),
    "date": lambda item: (
        item.first is None,
        item.first.isoformat() if item.first else "",
        _name(item),
    ),
    "calls": lambda item: (-item.calls, _name(item)),
    "size": lambda item: (-item.size, _name(item)),
}


def check_sort(sort: str) -> None:
    if sort not in SORT_KEYS:
        raise ConfigError(f"cannot sort by {sort!r}; valid: {', '.join(SORT_KEYS)}")


def sorted_listings(items: Iterable[CassetteListing], sort: str) -> list[CassetteListing]:
    check_sort(sort)
    return sorted(items, key=SORT_KEYS[sort])


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


def tally(
    per_file: Iterable[list[Finding]],
    *,
    ignore: Iterable[str] = (),
    show_info: bool = False,
    warnings: Iterable[str] = (),
) -> CassetteCheck:
    """The check of cassettes whose findings are ``per_file`` (one list per file, in order):
    the rules in ``ignore`` silenced, informational findings hidden unless ``show_info``."""
    skip = validate_rules(ignore, "--ignore")
    shown: list[Finding] = []
    hidden = ignored = checked = 0
    for findings in per_file:
        checked += 1
        for finding in findings:
            if finding.rule in skip:
                ignored += 1
            elif finding.severity is Severity.INFO and not show_info:
                hidden += 1
            else:
                shown.append(finding)
    return CassetteCheck(checked, tuple(shown), hidden, ignored, tuple(warnings))
