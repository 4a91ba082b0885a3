"""How the public API runs its work: the cache, a local process pool, or a Dask cluster.

Cassettes are independent, so they are loaded, normalised and simulated in batches by a pool
of processes (``jobs``, default: the processors usable, :mod:`costsim.api.cpus`) or by the
workers of a Dask cluster (``scheduler``, ``costsim[dask]``); batches come back in cassette
order, so the result is the same as a serial run's, byte for byte.

Settings come from the keyword arguments of the API functions, else from the innermost
:func:`configured` block (the CLI's ``--jobs``, ``--no-cache``, ``--scheduler`` and
``--calibration`` set one), else from ``[tool.costsim]`` in the nearest ``pyproject.toml``
(``jobs``, ``cache``, ``scheduler``, ``calibration``, ``warm``), else the defaults.

The token estimator is the same for every command and every cassette of a run: the shipped
coefficients, or a calibration saved by ``costsim calibrate --save``.
"""

from __future__ import annotations

import contextlib
import gc
import itertools
import multiprocessing
import os
import platform
import sys
import threading
from collections.abc import Callable, Generator, Iterable, Iterator
from concurrent.futures import Executor, ProcessPoolExecutor
from contextvars import ContextVar
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from costsim.api.cpus import usable_cpus
from costsim.api.orphans import die_with_parent
from costsim.errors import ConfigError
from costsim.io.config import calibration_path, tool_config
from costsim.io.store import CACHE_DIR_NAME, CacheStore

if TYPE_CHECKING:
    from costsim.metering.validation import CalibrationReport

__all__ = [
    "Progress",
    "Settings",
    "cache_damage",
    "cache_info",
    "check_scheduler",
    "clear_cache",
    "configured",
    "current",
    "pool_session",
    "resolve",
    "run_batches",
    "tune_gc",
]

T = TypeVar("T")
R = TypeVar("R")
Progress = Callable[[int, int], None]
"""Called with (cassettes done, cassettes in all) as a run goes."""


@dataclass(frozen=True, slots=True)
class Settings:
    jobs: int | None = None
    """Worker processes; None: one per processor usable (:mod:`costsim.api.cpus`); 1: no pool."""
    cache: bool = True
    """Read and write the cache of loaded cassettes (``--no-cache``: neither)."""
    cache_dir: Path | None = None
    """Where the cache lives; None: ``.costsim_cache`` in the working folder (or
    ``$COSTSIM_CACHE_DIR``)."""
    scheduler: str | None = None
    """The address of a Dask distributed scheduler to send batches to."""
    calibration: Path | None = None
    """The token estimator's saved calibration; None: the coefficients shipped with costsim."""
    warm: str | None = None
    """``[tool.costsim] warm``: steady or first warm starts where a command or scenario does
    not choose (see :data:`costsim.cache.rules.WARM_STARTS`); None: steady."""
    progress: Progress | None = None

    @property
    def workers(self) -> int:
        return max(1, self.jobs if self.jobs is not None else usable_cpus())

    def store(self) -> CacheStore | None:
        if not self.cache:
            return None
        root = self.cache_dir or Path(os.environ.get("COSTSIM_CACHE_DIR") or CACHE_DIR_NAME)
        return CacheStore(root.absolute())

    def estimator(self) -> CalibrationReport:
        """The calibration every estimate of the run uses (see the module docstring)."""
        return self.keyed_estimator()[0]

    def estimator_key(self) -> str:
        """What the estimator is, for cache keys: shipped, or the saved file's content (the
        shipped one's key is known without importing the estimator: a recalled run never
        does)."""
        if self.calibration is None:
            return _SHIPPED
        return self.keyed_estimator()[1]

    def keyed_estimator(self) -> tuple[CalibrationReport, str]:
        """The estimator and its key, from one read of a saved calibration (a file that is
        not one is a :class:`ConfigError` naming it)."""
        from costsim.metering.saved import read_calibration_keyed
        from costsim.metering.validation import CalibrationReport

        if self.calibration is None:
            return CalibrationReport([], [], [], mode="shipped"), _SHIPPED
        report, digest = read_calibration_keyed(self.calibration)
        return report, f"estimator {digest}"


_SHIPPED = "estimator shipped"

_CURRENT: ContextVar[Settings | None] = ContextVar("costsim_execution", default=None)


def _from_config() -> Settings:
    path, table = tool_config()  # every setting of its kind (see tool_table)
    jobs, cache, scheduler = table.get("jobs"), table.get("cache", True), table.get("scheduler")
    saved = calibration_path(path, table.get("calibration"))
    warm = table.get("warm")
    return Settings(
        jobs=jobs, cache=cache, scheduler=scheduler or None, calibration=saved, warm=warm
    )


def current() -> Settings:
    """The settings in force: the innermost :func:`configured` block's, else the config's."""
    return _CURRENT.get() or _from_config()


@contextlib.contextmanager
def configured(**changes: Any) -> Iterator[Settings]:
    """Run the API calls inside with these settings (unset ones: the config's)."""
    if changes.get("calibration") is not None:
        changes["calibration"] = Path(changes["calibration"])
    settings = replace(current(), **{k: v for k, v in changes.items() if v is not None})
    if settings.jobs is not None and settings.jobs < 1:
        raise ConfigError("--jobs must be at least 1")
    token = _CURRENT.set(settings)
    try:
        yield settings
    finally:
        _CURRENT.reset(token)


def resolve(
    jobs: int | None = None,
    cache: bool | None = None,
    scheduler: str | None = None,
    calibration: str | os.PathLike[str] | None = None,
) -> Settings:
    """The settings in force, with the API call's own keywords on top."""
    settings = current()
    if calibration is not None:
        settings = replace(settings, calibration=Path(calibration))
    if jobs is not None:
        if jobs < 1:
            raise ConfigError("jobs must be at least 1")
        settings = replace(settings, jobs=jobs)
    if cache is not None:
        settings = replace(settings, cache=cache)
    if scheduler is not None:
        settings = replace(settings, scheduler=scheduler or None)
    check_scheduler(settings.scheduler)
    return settings


_SCHEMES = ("tcp", "tls", "ws", "wss", "inproc", "ucx")


def check_scheduler(address: str | None) -> None:
    """A Dask scheduler address (``tcp://host:8786``, or ``host:8786``), or one sentence."""
    if address is None:
        return
    scheme, found, rest = address.partition("://")
    if not found:
        scheme, rest = "tcp", address
    host, colon, port = rest.rpartition(":")
    if scheme not in _SCHEMES or not rest or any(c.isspace() for c in address):
        raise ConfigError(
            f"{address!r} is not a Dask scheduler address: write tcp://HOST:PORT "
            f"(schemes: {', '.join(_SCHEMES)})"
        )
    if scheme in ("tcp", "tls", "ws", "wss") and colon and not (host and port.isdigit()):
        raise ConfigError(f"{address!r} is not a Dask scheduler address: write tcp://HOST:PORT")


def _context() -> multiprocessing.context.BaseContext:
    """fork where it is safe (Linux, no other thread yet): workers start at once with
    costsim already imported; else forkserver (POSIX) or spawn."""
    methods = multiprocessing.get_all_start_methods()
    if sys.platform.startswith("linux") and threading.active_count() == 1 and "fork" in methods:
        return multiprocessing.get_context("fork")
    if "forkserver" in methods:
        return multiprocessing.get_context("forkserver")
    return multiprocessing.get_context("spawn")


def _worker_start() -> None:
    """A pool worker moves what it inherited from the process that forked it (modules, price
    lists, the run's settings) out of the garbage collector's sight: those objects live as
    long as the worker, and each full collection would walk them again (about 4% of a cold
    compare). What the worker makes itself is collected, less often (:func:`tune_gc`). On
    Linux it ends with that process: killed (SIGTERM, SIGKILL), the process cannot shut its
    pool down, and idle workers kept CI's output pipe open for minutes."""
    gc.freeze()
    tune_gc()
    die_with_parent()


GC_THRESHOLDS = (200_000, 30, 30)


def tune_gc() -> None:
    """Collect cyclic garbage less often than by default, in a process costsim owns (the
    command's, its pool's workers; never the pytest plugin's): a run allocates millions of
    small objects that live until it ends, and with the default threshold of 700 the
    collector took 7% of a comparison walking them again. mypy tunes its build the same
    way."""
    if platform.python_implementation() == "CPython":
        gc.set_threshold(*GC_THRESHOLDS)


def run_batches(
    settings: Settings,
    function: Callable[[Any, list[T]], R],
    job: Any,
    runs: list[list[T]],
    *,
    local: bool = False,
    prepare: Callable[[list[T]], list[T]] | None = None,
    beside: bool = False,
) -> Generator[R, None, None]:
    """``function(job, run)`` for every run, results yielded in the order of ``runs``.

    One run (or ``jobs`` 1) is done here; otherwise by a process pool, or by the Dask cluster
    at ``settings.scheduler`` (``local``: never); ``prepare`` readies a run for a worker on
    another machine (attaching the files' bytes, say). ``beside``: the caller has work of its
    own meanwhile, so even one run goes to the pool. In a :func:`pool_session` the first
    runs are submitted at once, not when the first result is asked for.
    """
    if settings.scheduler and not local:
        from costsim.api.cluster import on_dask  # asyncio and all: only with a scheduler

        return on_dask(settings.scheduler, function, job, runs, prepare or (lambda run: run))
    if settings.workers <= 1 or not runs or (len(runs) == 1 and not beside):
        return (function(job, run) for run in runs)
    shared = _SESSION.get()
    if shared is not None:
        return _ordered(shared.pool(), function, job, runs, window=2 * settings.workers)
    return _own_pool(settings, function, job, runs)


def _own_pool(
    settings: Settings, function: Callable[[Any, list[T]], R], job: Any, runs: list[list[T]]
) -> Generator[R, None, None]:
    with ProcessPoolExecutor(
        max_workers=min(settings.workers, len(runs)),
        mp_context=_context(),
        initializer=_worker_start,
    ) as pool:
        yield from _ordered(pool, function, job, runs, window=2 * settings.workers)


class _Session:
    """One process pool for several steps of a run, started when first needed."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self._pool: ProcessPoolExecutor | None = None

    def pool(self) -> ProcessPoolExecutor:
        if self._pool is None:
            self._pool = ProcessPoolExecutor(
                max_workers=self.workers, mp_context=_context(), initializer=_worker_start
            )
        return self._pool

    def close(self, *, failed: bool = False) -> None:
        """Shut the pool down; after an error (an exception, Ctrl-C) its workers are stopped
        first and nothing waits on them: Python 3.11's shutdown can wait forever on a pool
        whose pending work it cancels (CPython gh-94440, gh-116685)."""
        pool, self._pool = self._pool, None
        if pool is None:
            return
        if not failed:
            pool.shutdown()
            return
        processes = getattr(pool, "_processes", None) or {}  # private, so read with care
        for process in list(processes.values()):
            process.terminate()
        pool.shutdown(wait=False, cancel_futures=True)


_SESSION: ContextVar[_Session | None] = ContextVar("costsim_pool", default=None)


def session_pool() -> ProcessPoolExecutor | None:
    """The pool of the :func:`pool_session` this runs in, started now; None outside one."""
    session = _SESSION.get()
    return None if session is None else session.pool()


@contextlib.contextmanager
def pool_session(settings: Settings) -> Iterator[None]:
    """Every :func:`run_batches` inside shares one pool: its workers keep what they loaded
    (the tokenizer vocabularies, the texts they counted) from one step to the next."""
    session = _Session(settings.workers)
    token = _SESSION.set(session)
    try:
        yield
    except BaseException:
        _SESSION.reset(token)
        session.close(failed=True)
        raise
    _SESSION.reset(token)
    session.close()


def _ordered(
    pool: Executor,
    function: Callable[[Any, list[T]], R],
    job: Any,
    runs: list[list[T]],
    *,
    window: int,
) -> Generator[R, None, None]:
    """Submit ``window`` runs now, and then one more as each result is taken, in order: at
    most ``window`` runs ahead of the one being merged (bounded memory)."""
    upcoming = iter(runs)
    pending = [pool.submit(function, job, run) for run in itertools.islice(upcoming, window)]
    return _in_order(pool, function, job, pending, upcoming)


def _in_order(
    pool: Executor,
    function: Callable[[Any, list[T]], R],
    job: Any,
    pending: list[Any],
    upcoming: Iterator[list[T]],
) -> Generator[R, None, None]:
    while pending:
        result = pending.pop(0).result()
        nxt = next(upcoming, None)
        if nxt is not None:
            pending.append(pool.submit(function, job, nxt))
        yield result


def each(values: Iterable[Iterable[R]]) -> Iterator[R]:
    for value in values:
        yield from value


def clear_cache(cache_dir: str | os.PathLike[str] | None = None) -> tuple[Path, int]:
    """Delete costsim's cache folder (``.costsim_cache`` in the working folder, or
    ``$COSTSIM_CACHE_DIR``, or ``cache_dir``): (the folder, the entries it held)."""
    store = _cache_store(cache_dir)
    return store.root, store.clear()


def cache_damage(cache_dir: str | os.PathLike[str] | None = None) -> str | None:
    """What is damaged in costsim's cache folder that :func:`clear_cache` clears all the same
    (its CACHEDIR.TAG truncated, edited or deleted, the folder laid out as costsim's and holding
    nothing else); None when nothing is."""
    return _cache_store(cache_dir).damaged_tag()


def cache_info(cache_dir: str | os.PathLike[str] | None = None) -> tuple[Path, int, int]:
    """costsim's cache folder, the entries it holds and their size in bytes."""
    store = _cache_store(cache_dir)
    return (store.root, *store.size())


def cache_problem() -> str | None:
    """Why the run's cache cannot be written (a sentence naming the folder), None when it can
    or the run does not use one: each run then reads every cassette again, slowly."""
    store = current().store()
    reason = None if store is None else store.unwritable()
    if store is None or reason is None:
        return None
    return (
        f"the cache folder {store.root} cannot be written ({reason}): what it holds is read, "
        "but nothing this run made is kept, so the next one reads again every cassette it "
        "does not hold; set COSTSIM_CACHE_DIR to a writable folder, or pass --no-cache"
    )


def _cache_store(cache_dir: str | os.PathLike[str] | None) -> CacheStore:
    """The cache folder named, else the default one (the project's other settings are not
    read: a bad ``jobs`` must not stop a cache from being cleared)."""
    settings = Settings(cache=True, cache_dir=Path(cache_dir) if cache_dir is not None else None)
    store = settings.store()
    assert store is not None
    return store
