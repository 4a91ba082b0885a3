"""Recalled output: ``costsim compare`` run again on the same inputs prints what it printed
before, without loading a cassette.

The key of a recalled output covers everything the output depends on: this build of costsim
and the versions of the libraries that count and price (:meth:`CacheStore.key`); the token
estimator (shipped, or the saved calibration's bytes); the working folder (paths are shown
relative to it); the day today's prices and caching rules took effect (calls recorded
without a date are priced and cached as today: :mod:`costsim.api.price_day`);
every option and how the text is laid out; each scenario file's
bytes; the path and bytes of every cassette it reads; the files its agent roles name, and the
folders that hold no cassette (they are warned about). When a strategy comes from another
package (its code is not part of the key), or a scenario does not read cleanly, nothing is
recalled or kept: the full run reports what it reports.

An entry is one line of JSON (the warnings, the broken gates, the text's length) and then the
text itself, as written: recalling 20 MB of output costs a read and a hash, not the decoding
of a 20 MB JSON string, and the text goes from the entry to the terminal or file a block at a
time (never whole in memory). It is written atomically and sealed like every cache entry;
one whose seal, header or length does not check out is ignored (and replaced by the next full
run).
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime
from importlib.metadata import entry_points
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from costsim.api.execution import resolve
from costsim.api.price_day import prices_day
from costsim.errors import CostsimError
from costsim.io.spool import Body
from costsim.io.store import CacheStore, content_digest, file_digest, writable
from costsim.scenario.files import find_scenarios, scenario_files

__all__ = ["Transcript", "comparison_key", "recall_output", "remember_output"]

_KIND = "output"
_STRATEGIES = "costsim.strategies"


@dataclass(frozen=True, slots=True)
class Transcript:
    """What a command printed: warnings on stderr, its text (kept outside memory: see
    :mod:`costsim.io.spool`), the gates it broke. Close it (or use it in ``with``) once its
    text is written."""

    warnings: tuple[str, ...]
    body: Body
    failures: str = ""
    """The broken gates (exit 1), one per line; empty when none."""

    @classmethod
    def of(cls, warnings: tuple[str, ...], pieces: Iterable[str], failures: str = "") -> Transcript:
        """The transcript of text made in ``pieces`` (kept as they come)."""
        return cls(warnings, Body.of(pieces), failures)

    @property
    def text(self) -> str:
        return self.body.text

    def close(self) -> None:
        """Let go of the text's file (a recalled one is the cache's entry, open)."""
        self.body.close()

    def __enter__(self) -> Transcript:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _Header(BaseModel):
    """The first line of an output entry: all of the transcript but its text, and the
    length of the text that follows (the entry's seal checks its bytes)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    warnings: tuple[str, ...]
    failures: str
    length: int


_MAX_HEADER = 1 << 20
"""The longest header line read (its warnings): a longer one is not an entry costsim wrote."""


def _foreign_strategies() -> bool:
    """A strategy comes from another package (an entry point, or one registered by hand in
    this process): its code is not in any key."""
    if any(not entry.module.startswith("costsim.") for entry in entry_points(group=_STRATEGIES)):
        return True
    # registered by hand only once the registry is imported (not imported here: it is slow)
    registry = sys.modules.get("costsim.strategies.registry")
    known = getattr(registry, "STRATEGIES", {})
    return any(not type(strategy).__module__.startswith("costsim.") for strategy in known.values())


def _scenario_parts(path: Path) -> tuple[list[str], tuple[date, ...] | None] | None:
    """What a scenario's output depends on, and the days its caching rules start on (None
    when one cannot be told); None when the output is not to be recalled."""
    found = scenario_files(path)
    if found is None:
        return None
    # paths as written and as resolved: output shows resolved paths, and agent roles match
    # by them (a symbolic link pointed elsewhere changes both)
    parts = [f"scenario {path} {path.resolve()} {content_digest(found.data)}"]
    for cassette in found.cassettes.files:
        digest = file_digest(cassette)
        if digest is None:
            return None
        parts.append(f"{digest[0]}:{cassette}:{cassette.resolve()}")
    parts.extend(found.cassettes.warnings())
    for name, files in found.agents.items():
        parts.append(f"agent {name}: {sorted(f'{p}:{p.resolve()}' for p in files)}")
    return parts, found.rule_days


def comparison_key(
    paths: Iterable[Path],
    *,
    options: Iterable[object],
    layout: Iterable[object],
) -> str | None:
    """The key of ``costsim compare`` over the scenario ``paths`` with ``options`` (the
    command's own) and ``layout`` (format, width, ...); None when it is not to be recalled."""
    settings = resolve()
    if not settings.cache or _foreign_strategies():
        return None
    parts = [
        "compare",
        f"cwd {Path.cwd()}",
        f"options {list(options)!r}",
        f"layout {list(layout)!r}",
        settings.estimator_key(),
        f"warm {settings.warm}",  # [tool.costsim] warm, where neither option nor scenario says
    ]
    try:
        scenarios = find_scenarios(list(paths))
    except CostsimError:
        return None
    days: list[date] | None = []
    for scenario in scenarios:
        found = _scenario_parts(scenario)
        if found is None:
            return None
        parts.extend(found[0])
        days = None if days is None or found[1] is None else [*days, *found[1]]
    # calls recorded without a date are priced and cached as today: by the prices and rules
    # in force, which change on known days only (a scenario's rules: today when unclear)
    if days is None:
        parts.append(f"today {datetime.now(UTC).date()}")
    else:
        parts.append(prices_day(settings.store(), days))
    return CacheStore.key(_KIND, *parts)


def recall_output(key: str | None) -> Transcript | None:
    """The output kept under ``key``; None when there is none (or it does not validate)."""
    store = resolve().store()
    if key is None or store is None:
        return None
    found = store.open_entry(_KIND, key)
    if found is None:
        return None
    file, length = found
    try:
        line = file.readline(_MAX_HEADER)
        header = _Header.model_validate_json(line)
        if len(line) + header.length == length:
            body = Body(file, len(line), header.length)
            return Transcript(header.warnings, body, header.failures)
    except (ValidationError, ValueError, RecursionError, OSError):
        pass
    file.close()
    return None


def remember_output(key: str | None, transcript: Transcript, *, again: str | None) -> None:
    """Keep ``transcript`` under ``key`` (atomically; a failed write only means it is not).

    ``again`` is the key worked out once more after the run: when an input changed while the
    run read it (a cassette re-recorded meanwhile, midnight passed), they differ and nothing
    is kept, since the output may mix old and new inputs."""
    store = resolve().store()
    if key is None or again != key or store is None:
        return
    body = transcript.body
    header = _Header(warnings=transcript.warnings, failures=transcript.failures, length=body.length)
    line = writable(lambda: header.model_dump_json().encode())
    if line is not None and len(line) < _MAX_HEADER:  # a longer one would not be recalled
        store.put_chunks(_KIND, key, itertools.chain((line, b"\n"), body.chunks()))
