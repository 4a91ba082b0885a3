"""A cold run's pool starts at once, each worker setting up its tokenizers while the run
still hashes its cassettes (:mod:`costsim.api.prestart`); a warm or small run starts none."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from costsim.api import prestart as module
from costsim.api.execution import Settings
from costsim.io.store import CacheStore


class _Pool:
    def __init__(self) -> None:
        self.submitted: list[tuple[Any, ...]] = []

    def submit(self, function: Any, *args: Any) -> None:
        self.submitted.append((function, *args))


@pytest.fixture
def pool(monkeypatch: pytest.MonkeyPatch) -> _Pool:
    made = _Pool()
    monkeypatch.setattr(module, "session_pool", lambda: made)
    return made


def _files(folder: Path, count: int, size: int) -> list[Path]:
    folder.mkdir(exist_ok=True)
    paths = [folder / f"c{i}.yaml" for i in range(count)]
    for path in paths:
        path.write_bytes(b"x" * size)
    return paths


def test_a_cold_run_sets_up_each_worker(tmp_path: Path, pool: _Pool) -> None:
    paths = _files(tmp_path / "c", 3, 1_000)
    store = CacheStore(tmp_path / "cache")
    module.prestart(Settings(jobs=2), store, paths, least=2_000)
    assert pool.submitted == [(module._set_up, store.root)] * 2


@pytest.mark.parametrize("case", ["one worker", "small", "warm", "cluster", "one file"])
def test_no_pool_is_started_where_it_would_not_pay(tmp_path: Path, pool: _Pool, case: str) -> None:
    paths = _files(tmp_path / "c", 1 if case == "one file" else 3, 10 if case == "small" else 1_000)
    store = CacheStore(tmp_path / "cache")
    if case == "warm":
        for i in range(3):
            store.put("trace", f"k{i}", b"{}")
    settings = Settings(jobs=1 if case == "one worker" else 2)
    if case == "cluster":
        settings = Settings(jobs=2, scheduler="tcp://127.0.0.1:1")
    module.prestart(settings, store, paths, least=2_000)
    assert pool.submitted == []


def test_setting_up_builds_the_encodings_and_keeps_the_vocabularies(tmp_path: Path) -> None:
    from costsim.metering import tokenizers

    tokenizers.encoding.cache_clear()
    module._set_up(tmp_path / "cache")
    assert tokenizers.encoding.cache_info().currsize == len(tokenizers.ENCODINGS)
    assert CacheStore(tmp_path / "cache").size()[0] >= len(tokenizers.ENCODINGS)
    tokenizers.keep_vocabularies_in(None)
