"""Loading and comparing many cassettes: cached, in parallel, streamed, in a fixed order.

``load_all`` gives every trace (what the commands that look at traces need), ``check_all``
what ``cassettes check`` finds in every cassette; ``compare_all``
never holds more than a few cassettes' traces: each worker reads, simulates and summarises
its cassettes in one pass and sends back their share of the comparison, merged here in
cassette order as they arrive (memory: the summaries). The token estimator is fixed for the
run (shipped, or a saved calibration: :meth:`Settings.estimator`), so a cassette's share
depends on nothing but the cassette and what the comparison asks: it is cached under those,
and a run over a folder where a few cassettes changed computes only theirs.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

from pydantic import TypeAdapter, ValidationError

from costsim.analysis.cassettes import CassetteListing, unreadable
from costsim.analysis.checks import Finding
from costsim.analysis.cut_short import cut_short_warnings
from costsim.analysis.groups import AgentMatcher, ToolUse
from costsim.analysis.merging import merge
from costsim.analysis.outcomes import Share, VariantPart, fits
from costsim.analysis.packing import Packed, Sparse, pack, unpack
from costsim.analysis.report import Skipped
from costsim.analysis.spread import Spread
from costsim.analysis.turns import Turns
from costsim.api.batches import batches, stable_batches
from costsim.api.execution import Settings, pool_session, run_batches
from costsim.api.prestart import prestart
from costsim.api.price_day import prices_day, rule_days
from costsim.api.work import (
    OWN_CACHE,
    CheckJob,
    Item,
    LoadJob,
    SimulateJob,
    cached_findings,
    cached_listing,
    cached_trace,
    cached_work,
    check_run,
    list_run,
    load_run,
    simulate_run,
)
from costsim.cache.rules import CacheRules
from costsim.errors import CostsimError
from costsim.io.store import CacheStore, file_digest
from costsim.model import CassetteTrace
from costsim.pricing.ledger import Totals
from costsim.providers.normalise import CALL_LEFT_OUT, load_trace
from costsim.strategies.registry import AgentSpec, Variant, get_strategy

__all__ = ["check_all", "compare_all", "cut_short_in", "list_all", "load_all"]

R = TypeVar("R")

_POOL_BYTES = 2_000_000  # below this much to parse, a pool costs more than it saves
_PARTS = 8  # batches per worker: small enough to balance, large enough to amortise


def _read(path: Path, *, hashed: bool) -> tuple[str | None, int]:
    """(the hash of the file's bytes, its size); without the cache (``hashed`` False) the
    hash is never used: the size alone, the hash None. (None, 0) when it cannot be read here
    (the worker that reads it reports why)."""
    if not hashed:
        try:
            return None, path.stat().st_size
        except OSError:
            return None, 0
    found = file_digest(path)
    return (None, 0) if found is None else found


def _fail(path: Path, message: str, lenient: bool, skipped: list[Skipped]) -> None:
    """A cassette that could not be read: raise its error (as a serial run does) or skip it."""
    if not lenient:
        load_trace(path)  # raises the genuine error
        raise CostsimError(message)
    skipped.append(Skipped(path, message))


def _settings_for(settings: Settings, size: int) -> Settings:
    if size < _POOL_BYTES and not settings.scheduler:
        return replace(settings, jobs=1)
    return settings


def _job_cache(store: CacheStore | None, settings: Settings) -> Path | None:
    """The cache folder a job's workers use: this run's, or for a Dask cluster each worker's
    own (its ``.costsim_cache``, or ``$COSTSIM_CACHE_DIR`` where it runs)."""
    if store is None:
        return None
    return OWN_CACHE if settings.scheduler else store.root


def _with_bytes(run: list[Item]) -> list[Item]:
    """The run with each cassette's bytes, for workers that may not see this machine's files."""
    return [(path, digest, _bytes(path)) for path, digest, _ in run]


def _bytes(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


def load_all(
    paths: Sequence[Path], *, lenient: bool, settings: Settings
) -> tuple[list[CassetteTrace], list[Skipped]]:
    """Every cassette's trace, in order: from the cache, else parsed by the pool."""
    results = _per_file(
        paths, settings, cached_trace, load_run, lambda root: LoadJob(root, lenient)
    )
    traces: list[CassetteTrace] = []
    skipped: list[Skipped] = []
    for path, result in zip(paths, results, strict=True):
        if isinstance(result, str):
            _fail(path, result, lenient, skipped)
        else:
            traces.append(result)
    return traces, skipped


def list_all(paths: Sequence[Path], *, settings: Settings) -> list[CassetteListing]:
    """What every cassette holds (an unreadable one: why), in order, its trace from the
    cache or parsed by the pool; only the listings are held, never every trace."""
    results = _per_file(paths, settings, cached_listing, list_run, LoadJob)
    return [
        unreadable(path, result) if isinstance(result, str) else result
        for path, result in zip(paths, results, strict=True)
    ]


def check_all(paths: Sequence[Path], *, settings: Settings) -> list[list[Finding]]:
    """What ``cassettes check`` finds in every cassette, in order: from the cache, else
    found by the pool."""
    return _per_file(paths, settings, cached_findings, check_run, CheckJob)


def _per_file(
    paths: Sequence[Path],
    settings: Settings,
    cached: Callable[[CacheStore | None, Item], R | None],
    work: Callable[[Any, list[Item]], list[R]],
    job_type: Callable[[Path | None], Any],
) -> list[R]:
    """``work`` done on every file the cache does not answer for (``cached``), by the pool
    (always on this machine), and each file's result in the order of ``paths``."""
    store = settings.store()
    found: dict[int, R] = {}
    misses: list[Item] = []
    where: list[int] = []
    sizes: list[int] = []
    for index, path in enumerate(paths):
        digest, size = _read(path, hashed=store is not None)
        item: Item = (path, digest, None)
        hit = cached(store, item)
        if hit is not None:
            found[index] = hit
            continue
        misses.append(item)
        where.append(index)
        sizes.append(size)
    runs = batches(misses, sizes, settings.workers * _PARTS)
    job = job_type(store.root if store is not None else None)
    local = _settings_for(settings, sum(sizes))
    places = iter(where)
    done = len(paths) - len(misses)
    for run, results in zip(runs, run_batches(local, work, job, runs, local=True), strict=True):
        for result in results:
            found[next(places)] = result
        done += len(run)
        if settings.progress is not None:
            settings.progress(done, len(paths))
    return [found[index] for index in range(len(paths))]


@dataclass(slots=True)
class _Run:
    """A whole comparison as the cache keeps it: the merged share and the cassettes skipped."""

    share: Share
    skipped: list[Skipped]
    sparse: list[Sparse] = field(default_factory=list)
    """How ``share`` is packed (see :mod:`costsim.analysis.packing`)."""


@cache
def _run_adapter() -> TypeAdapter[_Run]:
    return TypeAdapter(_Run)


@cache
def _adapter(kind: Any) -> TypeAdapter[Any]:
    return TypeAdapter(kind)


def _run_chunks(share: Share, skipped: list[Skipped]) -> Iterator[bytes]:
    """The JSON of ``_Run(share, skipped)`` a piece at a time (one variant's sums at most):
    a large run's entry is never all in memory), the share packed."""
    packed = pack(share)
    share = packed.share
    yield b'{"share":{"baseline":' + _adapter(Totals).dump_json(share.baseline)
    yield b',"baseline_per_cassette":'
    yield _adapter(dict[Path, Totals]).dump_json(share.baseline_per_cassette)
    yield b',"variants":['
    for index, item in enumerate(share.variants):
        yield (b"," if index else b"") + _adapter(VariantPart).dump_json(item)
    yield b'],"groups":{'
    for number, (key, columns) in enumerate(share.groups.items()):
        yield (b"," if number else b"") + json.dumps(key).encode() + b":["
        for index, table in enumerate(columns):  # one column's table at a time
            yield (b"," if index else b"") + _adapter(dict[str, Totals]).dump_json(table)
        yield b"]"
    yield b"}"
    yield b',"spreads":' + _adapter(dict[str, list[dict[str, Spread]]]).dump_json(share.spreads)
    yield b',"tools":' + _adapter(list[dict[str, ToolUse]]).dump_json(share.tools)
    yield b',"turns":' + _adapter(Turns | None).dump_json(share.turns)
    yield b',"unversioned":' + _adapter(list[Path]).dump_json(share.unversioned)
    yield b'},"skipped":' + _adapter(list[Skipped]).dump_json(skipped)
    yield b',"sparse":' + _adapter(list[Sparse]).dump_json(packed.sparse) + b"}"


def _cached_run(
    store: CacheStore | None, key: str | None, variants: Sequence[Variant]
) -> _Run | None:
    """The whole comparison from the cache, when it validates and fits ``variants``."""
    if store is None or key is None:
        return None
    hit = store.get("comparison", key)
    if hit is None:
        return None
    try:
        run = _run_adapter().validate_json(hit)
        run.share = unpack(Packed(run.share, run.sparse))
    except (ValidationError, ValueError, RecursionError):
        return None  # corrupt: computed again, and replaced
    return run if fits(run.share, variants) else None


def _fingerprint(
    variants: Sequence[Variant],
    rules: CacheRules,
    agents: dict[str, AgentSpec],
    matcher: AgentMatcher,
    as_of: datetime | None,
    estimator: str,
    store: CacheStore | None,
    lenient: bool = False,
) -> str | None:
    """What a cassette's share depends on besides its bytes and path; None when a strategy
    comes from another package (its code is not part of costsim's fingerprint). A lenient
    run's shares are kept apart: one may leave an unreadable call out, which a strict run
    must refuse."""
    for variant in variants:
        for step in variant.steps:
            if not type(get_strategy(step.strategy)).__module__.startswith("costsim."):
                return None
    parts = [
        repr(list(variants)),
        repr(rules),
        repr(sorted(agents.items())),
        repr([(name, pattern.pattern) for name, pattern in matcher.patterns]),
        repr([(name, sorted(map(str, files))) for name, files in matcher.files]),
        # undated calls are priced (but for --as-of) and cached (even so) as today: a share of
        repr(as_of),  # another day is alike while no price nor caching rule changed since
        prices_day(store, rule_days(rules)),
        estimator,
        *(["lenient"] if lenient else []),
    ]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def compare_all(
    paths: Sequence[Path],
    variants: Sequence[Variant],
    *,
    rules: CacheRules,
    agents: dict[str, AgentSpec],
    matcher: AgentMatcher,
    as_of: datetime | None,
    lenient: bool,
    settings: Settings,
) -> tuple[Share, list[Skipped]]:
    """Every cassette's share of the comparison of ``variants``, merged in cassette order."""
    store = settings.store()
    with pool_session(settings):
        prestart(settings, store, paths, _POOL_BYTES)  # tokenizers set up while this reads
        items: list[Item] = []
        sizes: list[int] = []
        for path in paths:
            digest, size = _read(path, hashed=store is not None)
            items.append((path, digest, None))
            sizes.append(size)
        settings = _settings_for(settings, sum(sizes))
        report, estimator_key = settings.keyed_estimator()
        fingerprint = (
            _fingerprint(variants, rules, agents, matcher, as_of, estimator_key, store, lenient)
            if settings.cache
            else None
        )
        run_key = None
        if fingerprint is not None and all(digest for _, digest, _ in items):
            run_key = CacheStore.key(
                "comparison", fingerprint, *(f"{digest}:{path}" for path, digest, _ in items)
            )
        cached = _cached_run(store, run_key, variants)
        if cached is not None:
            if settings.progress is not None:
                settings.progress(len(items), len(items))
            _check(cached.skipped, lenient)
            return cached.share, cached.skipped
        job = SimulateJob(
            cache=_job_cache(store, settings),
            report=report,
            rules=rules,
            agents=agents,
            variants=tuple(variants),
            as_of=as_of,
            matcher=matcher.for_paths(path for path, _, _ in items),
            fingerprint=fingerprint,
            lenient=lenient,
        )
        skipped: list[Skipped] = []
        cut = stable_batches(
            list(zip(items, sizes, strict=True)), [str(path) for path, _, _ in items], sizes
        )
        runs = [[item for item, _ in run] for run in cut]
        kept = [False] * len(runs)
        if job.fingerprint is not None and not settings.scheduler:
            # what the cache holds is read here while a pool, if it pays, does the rest
            kept = [cached_work(job, run) for run in runs]
            left = sum(
                size for pairs, hit in zip(cut, kept, strict=True) if not hit for _, size in pairs
            )
            settings = _settings_for(settings, left)
        share = merge(_shares(settings, job, runs, kept, lenient, skipped, len(items)), variants)
        if store is not None and run_key is not None and _as_hashed(items):
            store.put_chunks("comparison", run_key, _run_chunks(share, skipped))
        return share, skipped


def cut_short_in(paths: Sequence[Path], share: Share, skipped: Sequence[Skipped]) -> list[str]:
    """A warning for each cassette of the comparison probably cut short (see
    :mod:`costsim.analysis.cut_short`), among the files it read."""
    unread = {item.path for item in skipped if not item.error.endswith(CALL_LEFT_OUT)}
    return cut_short_warnings([p for p in paths if p not in unread], share.unversioned)


def _as_hashed(items: list[Item]) -> bool:
    """Every cassette still holds the bytes it was hashed as (a file re-recorded while the run
    read it may have been read either way: the result is not kept under the old hash)."""
    return all(_read(path, hashed=True)[0] == digest for path, digest, _ in items)


def _check(skipped: list[Skipped], lenient: bool) -> None:
    """A cached run that skipped cassettes: strict mode raises the first one's error."""
    if skipped and not lenient:
        _fail(skipped[0].path, skipped[0].error, lenient, [])


def _shares(
    settings: Settings,
    job: SimulateJob,
    runs: list[list[Item]],
    kept: list[bool],
    lenient: bool,
    skipped: list[Skipped],
    total: int,
) -> Iterator[Share]:
    """Each batch's share, in order: a batch whose share the cache holds (``kept``) read here,
    the others computed by ``run_batches`` meanwhile; the cassettes that could not be read
    raise their error (in cassette order) or, in lenient mode, are listed in ``skipped``."""
    done = 0
    left = [run for run, hit in zip(runs, kept, strict=True) if not hit]
    results_of = run_batches(
        settings, simulate_run, job, left, prepare=_with_bytes, beside=len(left) < len(runs)
    )
    try:
        for run, hit in zip(runs, kept, strict=True):
            result = simulate_run(job, run) if hit else next(results_of)
            for index, error in result.errors:
                _fail(run[index][0], error, lenient, skipped)
            yield result.share
            done += len(run)
            if settings.progress is not None:
                settings.progress(done, total)
    finally:  # a failure ends the workers' part now (a Dask client waits to be closed)
        results_of.close()
