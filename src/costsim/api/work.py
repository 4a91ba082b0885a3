"""The work a batch of cassettes is, wherever it runs: this process, a pool process or a Dask
worker. Each function takes a job (what every batch shares) and a run of items (one per
cassette, in order) and returns the run's results (a comparison: the run's merged share);
nothing here prints or raises for a bad cassette (its error comes back as text, and the
caller decides).

Every cassette's normalised trace is kept in the cache, keyed by the hash of its bytes; so is
what ``cassettes check`` found in it, keyed by its bytes and its path, and each run's merged
share of a comparison, keyed by the bytes and path of each of its cassettes, the estimator and
everything the comparison was asked (variants, rules, agents, date).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from costsim.analysis.cassettes import CassetteListing, listing
from costsim.analysis.checks import ALL_RULES, Finding, check_bytes, check_cassette
from costsim.analysis.groups import AgentMatcher
from costsim.analysis.merging import merge
from costsim.analysis.outcomes import Share, fits, outcome
from costsim.analysis.packing import Packed, pack, unpack
from costsim.cache.rules import CacheRules
from costsim.engine import Engine
from costsim.errors import CostsimError
from costsim.io.store import CACHE_DIR_NAME, CacheStore, content_digest, writable
from costsim.io.trace_codec import decode_trace, encode_trace
from costsim.metering.meter import Meter
from costsim.metering.tokenizers import keep_vocabularies_in, trim_counters
from costsim.metering.validation import CalibrationReport
from costsim.model import CassetteTrace
from costsim.providers.normalise import left_out, load_trace, trace_from_bytes
from costsim.strategies.registry import AgentSpec, Variant

__all__ = [
    "OWN_CACHE",
    "BatchShare",
    "CheckJob",
    "Item",
    "LoadJob",
    "SimulateJob",
    "cached_findings",
    "cached_listing",
    "cached_trace",
    "cached_work",
    "check_run",
    "list_run",
    "load_run",
    "simulate_run",
]

Item = tuple[Path, str | None, bytes | None]
"""A cassette: its path, the hash of its bytes (None: unreadable here) and the bytes
themselves when the worker may not see the file (a Dask worker on another machine)."""

_TEXTS = 200_000
"""Distinct texts a worker's token counters remember before starting afresh."""


@cache
def _share_adapter() -> TypeAdapter[Packed]:
    return TypeAdapter(Packed)


OWN_CACHE = Path("<the worker's own cache>")
"""A job's cache folder on a Dask cluster: each worker's default one, where it runs."""


def _store(root: Path | None) -> CacheStore | None:
    if root == OWN_CACHE:
        folder = os.environ.get("COSTSIM_CACHE_DIR") or CACHE_DIR_NAME
        return CacheStore(Path(folder).absolute())
    return CacheStore(root) if root is not None else None


def _trace_key(path: Path, digest: str) -> str:
    """A trace's key: its file's bytes, and how they are parsed (a ``.json`` file as JSON
    only, anything else as YAML)."""
    return CacheStore.key("trace", digest, "json" if path.suffix.lower() == ".json" else "yaml")


def cached_trace(store: CacheStore | None, item: Item) -> CassetteTrace | None:
    """The cassette's trace from the cache; None when it is not there (or is corrupt)."""
    path, digest, _ = item
    if store is None or not digest:
        return None
    hit = store.get("trace", _trace_key(path, digest))
    return decode_trace(hit, path) if hit is not None else None


def trace_of(store: CacheStore | None, item: Item, lenient: bool = False) -> CassetteTrace:
    """The normalised trace of a cassette: from the cache, else parsed (and cached)."""
    return _read_trace(store, item, lenient)[0]


def _read_trace(
    store: CacheStore | None, item: Item, lenient: bool = False
) -> tuple[CassetteTrace, bool]:
    """The trace, and whether it is the one of the bytes the item's hash names: a file
    written again since it was hashed is read as it is now, and its trace is kept under the
    hash of the bytes read (never under the other's). ``lenient``: a call that cannot be read
    is left out, noted (such a trace is not kept: a strict run of the same bytes raises)."""
    path, digest, data = item
    trace = cached_trace(store, item)
    if trace is not None:
        return trace, True
    if data is None:
        try:
            data = path.read_bytes()
        except OSError:
            return load_trace(path), True  # raises the error a serial run raises
    trace = trace_from_bytes(path, data, lenient=lenient)
    read = content_digest(data) if store is not None and digest else None
    if store is not None and read is not None and not left_out(trace):
        store.put_made("trace", _trace_key(path, read), lambda: encode_trace(trace))
    return trace, read == digest


@dataclass(frozen=True, slots=True)
class LoadJob:
    cache: Path | None
    lenient: bool = False
    """A call that cannot be read is left out, noted, not its whole cassette."""


def cached_listing(store: CacheStore | None, item: Item) -> CassetteListing | None:
    """What the cassette holds, from its cached trace; None when that is not cached."""
    trace = cached_trace(store, item)
    return listing(trace) if trace is not None else None


def list_run(job: LoadJob, items: list[Item]) -> list[CassetteListing | str]:
    """What each cassette holds, or the text of its error (its trace cached meanwhile)."""
    store = _store(job.cache)
    results: list[CassetteListing | str] = []
    for item in items:
        try:
            results.append(listing(trace_of(store, item)))
        except CostsimError as exc:
            results.append(str(exc))
    return results


def load_run(job: LoadJob, items: list[Item]) -> list[CassetteTrace | str]:
    """Each cassette's trace, or the text of its error."""
    store = _store(job.cache)
    results: list[CassetteTrace | str] = []
    for item in items:
        try:
            results.append(trace_of(store, item, job.lenient))
        except CostsimError as exc:
            results.append(str(exc))
    return results


@cache
def _findings_adapter() -> TypeAdapter[tuple[Finding, ...]]:
    return TypeAdapter(tuple[Finding, ...])


def _findings_key(path: Path, digest: str) -> str:
    """What ``cassettes check`` found in a file depends on its bytes, how they are parsed
    (the suffix) and its path (messages name it)."""
    return CacheStore.key("findings", _trace_key(path, digest), str(path))


def cached_findings(store: CacheStore | None, item: Item) -> list[Finding] | None:
    """What ``cassettes check`` found in the cassette, from the cache; None when it is not
    there (or is corrupt, or names a rule this build does not know)."""
    path, digest, _ = item
    if store is None or not digest:
        return None
    hit = store.get("findings", _findings_key(path, digest))
    if hit is None:
        return None
    try:
        findings = _findings_adapter().validate_json(hit)
    except (ValidationError, ValueError, RecursionError):
        return None
    if any(f.path != path or f.rule not in ALL_RULES for f in findings):
        return None
    return list(findings)


@dataclass(frozen=True, slots=True)
class CheckJob:
    cache: Path | None


def check_run(job: CheckJob, items: list[Item]) -> list[list[Finding]]:
    """What ``cassettes check`` finds in each cassette (an unreadable one: that finding),
    for cassettes the caller found no entry for."""
    store = _store(job.cache)
    return [_check_item(store, item) for item in items]


def _check_item(store: CacheStore | None, item: Item) -> list[Finding]:
    # read here, and kept under the hash of the bytes read (the caller's hash is of the file
    # as it was then): the findings are never filed under bytes they were not found in
    path, _, data = item
    if data is None:
        try:
            data = path.read_bytes()
        except OSError:
            return check_cassette(path)  # the finding a serial check reports
    findings = check_bytes(path, data)
    if store is not None:  # keyed by the bytes checked, whatever the file holds by now
        key = _findings_key(path, content_digest(data))
        store.put_made("findings", key, lambda: _findings_adapter().dump_json(tuple(findings)))
    return findings


def _trim() -> None:
    trim_counters(_TEXTS)


@dataclass(frozen=True, slots=True)
class SimulateJob:
    cache: Path | None
    report: CalibrationReport
    rules: CacheRules
    agents: dict[str, AgentSpec]
    variants: tuple[Variant, ...]
    as_of: datetime | None
    matcher: AgentMatcher
    attribute: bool = True
    fingerprint: str | None = None
    """What the comparison was asked, hashed: keys each cassette's share in the cache (None:
    shares are not cached, e.g. a strategy from another package, whose code costsim cannot
    fingerprint)."""
    lenient: bool = False
    """A call that cannot be read is left out, noted, not its whole cassette (a batch that
    left one out is not kept: a strict run of it raises)."""


def _cached_share(data: bytes, job: SimulateJob) -> Share | None:
    """A cached share, when it validates and fits the job; else None (computed again, and
    replaced)."""
    try:
        share = _load_share(data)
    except (ValidationError, ValueError, RecursionError):
        return None
    return share if fits(share, job.variants, attribute=job.attribute) else None


@dataclass(frozen=True, slots=True)
class BatchShare:
    """A batch's share of a comparison: its cassettes' shares added up in order (sums are
    exact, so any cut into batches adds up to the same whole), and the error of each cassette
    that could not be read, by its index in the batch. One merged share travels back from a
    worker instead of one per cassette.

    It travels as the share's packed JSON, the form the cache keeps: a worker that kept it
    sends the very bytes it wrote (before shares were packed, pickling their dataclasses and
    decimals cost several times as much as their JSON)."""

    share: Share
    errors: tuple[tuple[int, str], ...]
    data: bytes | None = field(default=None, compare=False, repr=False)
    """The share's JSON, when it was written already (to the cache)."""

    def __reduce__(self) -> tuple[Any, tuple[Any, tuple[tuple[int, str], ...]]]:
        data = self.data if self.data is not None else writable(lambda: _dump_share(self.share))
        if data is None:  # text JSON cannot write (a file name that is not UTF-8): pickled
            return _pickled, (self.share, self.errors)
        return _received, (data, self.errors)


def _dump_share(share: Share) -> bytes:
    """A share's JSON, packed (see :mod:`costsim.analysis.packing`)."""
    return _share_adapter().dump_json(pack(share), exclude_defaults=True)


def _load_share(data: bytes) -> Share:
    """The share of JSON :func:`_dump_share` wrote (raises ``ValidationError`` or
    ``ValueError`` when it does not hold one)."""
    return unpack(_share_adapter().validate_json(data))


def _received(data: bytes, errors: tuple[tuple[int, str], ...]) -> BatchShare:
    """A batch's share as a worker sent it (see :meth:`BatchShare.__reduce__`)."""
    return BatchShare(_load_share(data), errors)


def _pickled(share: Share, errors: tuple[tuple[int, str], ...]) -> BatchShare:
    return BatchShare(share, errors)


def _run_key(job: SimulateJob, items: list[Item]) -> str | None:
    """A run's share is kept under the hash and path of each of its cassettes, in order (paths:
    its messages name them), and what the comparison was asked; None: not kept (a strategy
    whose code costsim cannot fingerprint, a cassette it could not hash)."""
    if not job.fingerprint or not all(digest for _, digest, _ in items):
        return None
    return CacheStore.key("share", job.fingerprint, *(f"{d}:{p}" for p, d, _ in items))


def cached_work(job: SimulateJob, items: list[Item]) -> bool:
    """Whether the cache holds this run's share: a hint for choosing where to run it (an entry
    can still fail to validate, and is then rebuilt)."""
    store = _store(job.cache)
    key = _run_key(job, items) if store is not None else None
    return store is not None and key is not None and store.has("share", key)


def simulate_run(job: SimulateJob, items: list[Item]) -> BatchShare:
    """The run's share of the comparison, and the errors of the cassettes it could not read.

    A run whose cassettes all read is kept whole, merged: runs are cut by name (see
    :func:`costsim.api.batches.stable_batches`), so a later run in which a few cassettes
    changed simulates the runs that hold them and reads one share for each other run."""
    store = _store(job.cache)
    keep_vocabularies_in(store)
    key = _run_key(job, items) if store is not None else None
    if store is not None and key is not None:
        hit = store.get("share", key)
        cached = _cached_share(hit, job) if hit is not None else None
        if cached is not None:
            return BatchShare(cached, (), hit)
    traces, errors, as_hashed = _read_traces(items, store, job.lenient)
    merged = _batch_share(job, traces)
    whole = not errors and as_hashed  # a call left out is among the errors
    if store is not None and key is not None and whole:
        return BatchShare(merged, errors, store.put_made("share", key, lambda: _dump_share(merged)))
    return BatchShare(merged, errors)


def _read_traces(
    items: list[Item], store: CacheStore | None, lenient: bool = False
) -> tuple[list[CassetteTrace], tuple[tuple[int, str], ...], bool]:
    """The traces of the cassettes that read (from and kept in ``store``), the error of each
    that did not, by its index, and whether every trace is the one of the bytes its item's
    hash names (else the batch's share is not kept under that hash)."""
    traces: list[CassetteTrace] = []
    errors: list[tuple[int, str]] = []
    as_hashed = True
    for index, item in enumerate(items):
        try:
            trace, same = _read_trace(store, item, lenient)
        except CostsimError as exc:
            errors.append((index, str(exc)))
            continue
        # a call a lenient read left out is said as a skipped file is (the rest is read)
        errors += [(index, message) for message in left_out(trace)]
        traces.append(trace)
        as_hashed = as_hashed and same
    return traces, tuple(errors), as_hashed


def _batch_share(job: SimulateJob, traces: list[CassetteTrace]) -> Share:
    """The batch's share of the comparison: one engine runs each variant over all its traces
    at once (a share is sums per cassette and lists in cassette order, so this is exactly the
    merge of one share per cassette, without each variant's fixed cost once per cassette)."""
    engine = Engine(traces, meter=Meter(job.report), rules=job.rules, agents=job.agents)
    shares = [
        outcome(piece, job.variants, as_of=job.as_of, attribute=job.attribute, agents=job.matcher)
        for piece in engine.by_distinct_paths()  # ``costsim simulate F F``: F counted twice
    ]
    _trim()
    return shares[0] if len(shares) == 1 else merge(shares, job.variants, attribute=job.attribute)
