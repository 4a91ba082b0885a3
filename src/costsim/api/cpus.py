"""How many processors a run may use: the default number of workers.

``os.cpu_count()`` counts the machine's processors, not the ones this process may run on: a
container limited to two CPUs on a 64-core host, or a CI job pinned to a few cores, would
start 64 workers that fight over two, slower than one (each loads the tokenizers and holds
its own memory). The processors usable are the fewest of: those the process may be scheduled
on (its CPU affinity), and a CPU quota of its control group (Linux cgroup v2 ``cpu.max``, v1
``cpu.cfs_quota_us`` over ``cpu.cfs_period_us``, in its own group or any above it), rounded
up. Anything unreadable counts as no limit.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path

__all__ = ["usable_cpus"]

_ROOT = Path("/sys/fs/cgroup")
_SELF = Path("/proc/self/cgroup")


@cache
def usable_cpus() -> int:
    """The processors this process may use (at least 1)."""
    counted = getattr(os, "process_cpu_count", None)  # Python 3.13: the affinity's
    if counted is not None:
        count = counted() or 1
    else:
        try:
            count = len(os.sched_getaffinity(0)) or 1
        except (AttributeError, OSError):
            count = os.cpu_count() or 1
    quota = _quota()
    return max(1, min(count, quota) if quota is not None else count)


def _quota() -> int | None:
    """The tightest CPU quota of this process's control groups, in whole processors."""
    try:
        lines = _SELF.read_text().splitlines()
    except (OSError, ValueError):
        return None
    limits = [limit for line in lines for limit in _limits(line)]
    return math.ceil(min(limits)) if limits else None


def _limits(line: str) -> Iterator[float]:
    """The quotas (in processors) along one ``/proc/self/cgroup`` line's group and those
    above it."""
    _, controllers, group = [*line.split(":", 2), "", ""][:3]
    if controllers == "":  # cgroup v2: one hierarchy
        yield from _walk(_ROOT, group, _v2)
        yield from _walk(_ROOT / "unified", group, _v2)  # v2 mounted beside v1 controllers
    elif "cpu" in controllers.split(","):
        for mount in (_ROOT / "cpu", _ROOT / "cpu,cpuacct", _ROOT / "cpuacct,cpu"):
            yield from _walk(mount, group, _v1)


def _walk(mount: Path, group: str, read: Callable[[Path], float | None]) -> Iterator[float]:
    parts = [part for part in group.strip().split("/") if part]
    if ".." in parts:  # outside this namespace's root: only the group mounted at its top
        parts = []
    for depth in range(len(parts), -1, -1):
        folder = mount.joinpath(*parts[:depth])
        limit = read(folder)
        if limit is not None:
            yield limit


def _v2(folder: Path) -> float | None:
    try:
        quota, period = (folder / "cpu.max").read_text().split()[:2]
        return int(quota) / int(period) if quota != "max" and int(period) > 0 else None
    except (OSError, ValueError):
        return None


def _v1(folder: Path) -> float | None:
    try:
        quota = int((folder / "cpu.cfs_quota_us").read_text())
        period = int((folder / "cpu.cfs_period_us").read_text())
    except (OSError, ValueError):
        return None
    return quota / period if quota > 0 and period > 0 else None
