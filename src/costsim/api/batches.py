"""How the cassettes of a run are cut into batches, each one piece of work for a process.

Cassettes are independent, so any cut gives the same result (results merge in cassette order);
a cut only decides how evenly the work spreads and what a cached result can be kept under.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import TypeVar

__all__ = ["MAX_BATCH", "MAX_BATCH_BYTES", "SPREAD", "batches", "stable_batches"]

T = TypeVar("T")

MAX_BATCH = 48
"""Most cassettes in one batch: a batch's results travel and wait to be merged together, so
this bounds memory however many cassettes a run has."""
MAX_BATCH_BYTES = 4_000_000


def batches(items: Sequence[T], sizes: Sequence[int], parts: int) -> list[list[T]]:
    """Consecutive runs of ``items`` of about equal total ``sizes``, at least ``parts`` of
    them and none larger than :data:`MAX_BATCH` items or :data:`MAX_BATCH_BYTES` (order
    kept: results merge in the order of the items)."""
    if not items:
        return []
    budget = max(1, min(sum(sizes) // max(parts, 1), MAX_BATCH_BYTES))
    runs: list[list[T]] = [[]]
    filled = 0
    for item, size in zip(items, sizes, strict=True):
        if runs[-1] and (filled + size > budget or len(runs[-1]) >= MAX_BATCH):
            runs.append([])
            filled = 0
        runs[-1].append(item)
        filled += size
    return runs


SPREAD = 16
"""About how many cassettes a :func:`stable_batches` run holds: a cut follows one name in
this many."""


def _cut_after(name: str) -> bool:
    digest = hashlib.blake2b(name.encode("utf-8", "surrogateescape"), digest_size=8).digest()
    return int.from_bytes(digest, "big") % SPREAD == 0


def stable_batches(items: Sequence[T], names: Sequence[str], sizes: Sequence[int]) -> list[list[T]]:
    """Consecutive runs of ``items`` (order kept) cut where an item's name says so, as
    content-defined chunking cuts a stream: after each item whose ``names`` entry hashes to a
    cut (one in :data:`SPREAD`), and where a run reaches :data:`MAX_BATCH` items or
    :data:`MAX_BATCH_BYTES`. A file changed, added or removed moves no other file's cut by
    name, so every other run is the same run as last time (and its result can be kept), but
    for two: removing the file a run was cut after joins that run to the next, and past a run
    that reached a cap the runs up to the next cut by name may shift."""
    runs: list[list[T]] = [[]]
    filled = 0
    for item, name, size in zip(items, names, sizes, strict=True):
        if runs[-1] and (filled + size > MAX_BATCH_BYTES or len(runs[-1]) >= MAX_BATCH):
            runs.append([])
            filled = 0
        runs[-1].append(item)
        filled += size
        if _cut_after(name):
            runs.append([])
            filled = 0
    return [run for run in runs if run]
