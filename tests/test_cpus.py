"""The default number of workers is the processors this process may use, not the machine's
(:mod:`costsim.api.cpus`): a container's CPU quota or a narrow CPU affinity caps it."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from costsim.api import cpus
from costsim.api.execution import Settings


@pytest.fixture
def machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A fake /sys/fs/cgroup and /proc/self/cgroup; 64 processors by affinity."""
    monkeypatch.setattr(cpus, "_ROOT", tmp_path / "cgroup")
    monkeypatch.setattr(cpus, "_SELF", tmp_path / "self")
    monkeypatch.delattr(os, "process_cpu_count", raising=False)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(64)))
    cpus.usable_cpus.cache_clear()
    yield tmp_path
    cpus.usable_cpus.cache_clear()


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_a_cgroup_v2_quota_caps_the_workers(machine: Path) -> None:
    _write(machine / "self", "0::/\n")
    _write(machine / "cgroup" / "cpu.max", "150000 100000\n")  # 1.5 processors: 2
    assert cpus.usable_cpus() == 2
    assert Settings().workers == 2 and Settings(jobs=5).workers == 5


def test_a_quota_above_the_own_group_counts(machine: Path) -> None:
    _write(machine / "self", "0::/ci/job\n")
    _write(machine / "cgroup" / "ci" / "job" / "cpu.max", "max 100000\n")
    _write(machine / "cgroup" / "ci" / "cpu.max", "300000 100000\n")
    assert cpus.usable_cpus() == 3


def test_a_cgroup_v1_quota_caps_the_workers(machine: Path) -> None:
    _write(machine / "self", "4:memory:/x\n3:cpu,cpuacct:/docker/abc\n")
    # inside the container its own group is mounted at the top
    _write(machine / "cgroup" / "cpu,cpuacct" / "cpu.cfs_quota_us", "50000\n")
    _write(machine / "cgroup" / "cpu,cpuacct" / "cpu.cfs_period_us", "100000\n")
    assert cpus.usable_cpus() == 1


@pytest.mark.parametrize(
    "files",
    [
        {},
        {"cpu.max": "max 100000\n"},
        {"cpu.max": "garbage\n"},
        {"cpu.max": "100 0\n"},
        {"cpu/cpu.cfs_quota_us": "-1\n", "cpu/cpu.cfs_period_us": "100000\n"},
    ],
)
def test_no_quota_or_an_unreadable_one_leaves_the_affinity(
    machine: Path, files: dict[str, str]
) -> None:
    _write(machine / "self", "1:cpu:/\n0::/\n")
    for name, text in files.items():
        _write(machine / "cgroup" / name, text)
    assert cpus.usable_cpus() == 64


def test_the_affinity_caps_the_workers(machine: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2})
    assert cpus.usable_cpus() == 3


def test_a_group_outside_the_namespace_reads_no_sibling(machine: Path) -> None:
    """A review: ``0::/../other`` (a process outside its cgroup namespace's root) stripped of
    ``..`` read the quota of a sibling group ``other``; only the mount's top counts."""
    _write(machine / "self", "0::/../other\n")
    _write(machine / "cgroup" / "other" / "cpu.max", "100000 100000\n")  # not ours
    assert cpus.usable_cpus() == 64
    _write(machine / "cgroup" / "cpu.max", "200000 100000\n")
    cpus.usable_cpus.cache_clear()
    assert cpus.usable_cpus() == 2
