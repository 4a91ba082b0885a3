"""Pool workers that set up their tokenizers while the run still reads its inputs.

Each worker builds the two tiktoken encodings before it estimates anything: 0.3-0.9 s of
CPU per worker (the vocabulary read and tiktoken's own set-up), on the critical path of a cold
run, since the first batch reaches the workers only once the main process has read the
scenario and hashed every cassette. A run that will need the pool starts it at once instead
and gives each worker the set-up to do meanwhile. Only when the cache looks cold (it holds
fewer rows than there are cassettes): a warm run reads what it kept, and needs no tokenizer.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from pathlib import Path

from costsim.api.execution import Settings, session_pool
from costsim.io.store import CacheStore
from costsim.metering.tokenizers import ENCODINGS, encoding, keep_vocabularies_in

__all__ = ["prestart"]


def prestart(
    settings: Settings, store: CacheStore | None, paths: Sequence[Path], least: int
) -> None:
    """Start the run's pool and set up each worker's tokenizers, when it will need them: more
    than one worker, no cluster, at least ``least`` bytes to read, and a cache that looks
    cold."""
    if settings.workers <= 1 or settings.scheduler or len(paths) < 2:
        return
    if store is not None and store.rows() >= len(paths):
        return
    size = 0
    for path in paths:
        with contextlib.suppress(OSError):
            size += path.stat().st_size
        if size >= least:
            break
    else:
        return
    pool = session_pool()
    if pool is None:
        return
    root = None if store is None else store.root
    for _ in range(settings.workers):
        pool.submit(_set_up, root)


def _set_up(root: Path | None) -> None:
    """In a worker: read (or make and keep) the vocabularies and build the encodings. A
    failure is left to the work itself to report, where it has a file to name."""
    with contextlib.suppress(Exception):
        keep_vocabularies_in(CacheStore(root) if root is not None else None)
        for name in ENCODINGS:
            encoding(name)
