"""Batches cut by name, and each batch's share kept whole: a run in which one cassette changed
simulates that cassette and reads one merged share per other batch, not one per cassette."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from costsim import api
from costsim.api import batches, execution, work
from costsim.api.batches import MAX_BATCH, SPREAD, _cut_after, stable_batches

EXAMPLES = Path(__file__).resolve().parents[1] / "cassettes"

names = st.lists(st.text(min_size=1, max_size=12), min_size=1, max_size=200, unique=True)


def _cut(names: list[str], sizes: list[int]) -> list[list[str]]:
    return stable_batches(names, names, sizes)


@given(names, st.data())
def test_runs_keep_every_item_in_order_and_stay_within_bounds(
    items: list[str], data: st.DataObject
) -> None:
    sizes = data.draw(st.lists(st.integers(0, 3_000_000), min_size=len(items), max_size=len(items)))
    runs = _cut(items, sizes)
    assert [name for run in runs for name in run] == items
    assert all(run and len(run) <= MAX_BATCH for run in runs)


def _stretches(items: list[str]) -> list[list[str]]:
    """The items between two cuts by name (the caps cut only inside one of these)."""
    stretches: list[list[str]] = [[]]
    for item in items:
        stretches[-1].append(item)
        if _cut_after(item):
            stretches.append([])
    return [stretch for stretch in stretches if stretch]


@given(names, st.data())
def test_a_file_removed_or_resized_moves_no_run_outside_its_own_stretch(
    items: list[str], data: st.DataObject
) -> None:
    sizes = data.draw(st.lists(st.integers(0, 400_000), min_size=len(items), max_size=len(items)))
    which = data.draw(st.integers(0, len(items) - 1))
    before = _cut(items, sizes)
    stretches = _stretches(items)
    at = next(i for i, stretch in enumerate(stretches) if items[which] in stretch)
    resized = list(sizes)
    resized[which] = data.draw(st.integers(0, 5_000_000))
    after = _cut(items, resized)
    assert all(run in after for run in before if not set(run) & set(stretches[at]))
    # removed, the item a cut followed joins its stretch to the next one
    joined = set(stretches[at]) | (set(stretches[at + 1]) if at + 1 < len(stretches) else set())
    touched = joined if _cut_after(items[which]) else set(stretches[at])
    after = _cut(
        [item for i, item in enumerate(items) if i != which],
        [size for i, size in enumerate(sizes) if i != which],
    )
    assert all(run in after for run in before if not set(run) & touched)


def test_cuts_follow_names_about_once_in_spread() -> None:
    items = [f"tests/cassettes/test_{i}.yaml" for i in range(4000)]
    runs = _cut(items, [10] * len(items))
    assert 4000 / SPREAD / 2 < len(runs) < 4000 / SPREAD * 2


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("COSTSIM_CACHE_DIR", str(tmp_path / "cache"))
    # a cut in four names: 45 cassettes make several runs wherever the test folder is
    monkeypatch.setattr(batches, "SPREAD", 4)
    folder = tmp_path / "project" / "cassettes"
    folder.mkdir(parents=True)
    sources = sorted(EXAMPLES.glob("*.yaml"))
    for i in range(45):  # distinct bytes: nothing is shared through the cache by content
        source = sources[i % len(sources)]
        (folder / f"{i:02d}_{source.name}").write_bytes(
            source.read_bytes() + f"\n# copy {i}\n".encode()
        )
    scenario = tmp_path / "project" / "s.yaml"
    scenario.write_text(
        "name: batches\ncassettes: [cassettes/*.yaml]\nvariants:\n  cache: [caching]\n"
        "  both: [truncation, caching]\n"
    )
    return scenario


def _runs(project: Path) -> list[list[Path]]:
    files = sorted((project.parent / "cassettes").glob("*.yaml"))
    return stable_batches(files, [str(p) for p in files], [p.stat().st_size for p in files])


def test_one_changed_cassette_simulates_its_run_and_reads_each_other_run_whole(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    api.compare(project, jobs=1)  # fills the cache
    runs = _runs(project)
    assert len(runs) >= 2 and max(len(run) for run in runs) >= 2
    changed = runs[-1][-1]
    changed.write_bytes(changed.read_bytes() + b"# changed\n")

    simulated: list[Path] = []
    shares_read: list[int] = []
    real_outcome, real_get = work.outcome, work.CacheStore.get

    def outcome(engine: Any, *args: Any, **kwargs: Any) -> Any:
        simulated.extend(trace.path for trace in engine.traces)
        return real_outcome(engine, *args, **kwargs)

    def get(self: Any, kind: str, key: str) -> bytes | None:
        found = real_get(self, kind, key)
        if kind == "share" and found is not None:
            shares_read.append(1)
        return found

    monkeypatch.setattr(work, "outcome", outcome)
    monkeypatch.setattr(work.CacheStore, "get", get)
    second = api.compare(project, jobs=1)
    assert simulated == runs[-1]  # the changed cassette's run, every cassette of it
    assert len(shares_read) == len(runs) - 1  # one merged share for every other run
    monkeypatch.setattr(work, "outcome", real_outcome)
    monkeypatch.setattr(work.CacheStore, "get", real_get)
    assert second.to_json() == api.compare(project, jobs=1, cache=False).to_json()
    again = api.compare(project, jobs=1, cache=False).to_json()
    assert api.compare(project).to_json() == again  # the pool, reading the same entries


def test_a_batch_is_not_kept_when_a_cassette_in_it_cannot_be_read(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = sorted((project.parent / "cassettes").glob("*.yaml"))[3]
    broken.write_text("interactions: [")
    kept: list[str] = []
    real_put = work.CacheStore.put

    def put(self: Any, kind: str, key: str, data: bytes) -> None:
        kept.append(kind)
        real_put(self, kind, key, data)

    monkeypatch.setattr(work.CacheStore, "put", put)
    with execution.configured(jobs=1):
        result = api.compare(project, lenient=True)
    assert [s.path.name for s in result.skipped] == [broken.name]
    whole = [run for run in _runs(project) if broken not in run]
    assert kept.count("share") == len(whole)


_SEEN_HERE: list[int] = []
"""Batch sizes :func:`_counted` saw in this process (a forked worker counts in its own copy)."""


def _counted(job: Any, items: list[Any]) -> Any:
    from costsim.api import work

    _SEEN_HERE.append(len(items))
    return work.simulate_run(job, items)


def test_kept_shares_are_read_here_while_the_pool_simulates_the_changed_batch(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from costsim.api import pipeline

    api.compare(project, jobs=1)  # fills the cache
    runs = _runs(project)
    changed = runs[0][0]
    changed.write_bytes(changed.read_bytes() + b"# changed\n")
    _SEEN_HERE.clear()
    monkeypatch.setattr(pipeline, "simulate_run", _counted)
    monkeypatch.setattr(pipeline, "_POOL_BYTES", 0)  # the pool, however small the change
    result = api.compare(project, jobs=2)
    seen = list(_SEEN_HERE)
    assert seen == [len(run) for run in runs[1:]]  # the kept batches, read in this process
    monkeypatch.setattr(pipeline, "simulate_run", work.simulate_run)
    assert result.to_json() == api.compare(project, jobs=1, cache=False).to_json()


def test_a_cassette_written_again_while_it_is_read_leaves_no_stale_entry(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Hashed as one thing, read as another: neither its trace nor its batch's share is kept
    under the first hash, so the file put back as it was hashed is computed afresh."""
    from costsim.api import pipeline

    victim = next(p for p in sorted((project.parent / "cassettes").glob("*agent*.yaml")))
    hashed = victim.read_bytes()
    real = pipeline.stable_batches

    def rewrite_then_cut(*args: Any) -> Any:  # after every file was hashed, before any is read
        victim.write_bytes(hashed.replace(b'input_tokens":412', b'input_tokens":9412'))
        return real(*args)

    monkeypatch.setattr(pipeline, "stable_batches", rewrite_then_cut)
    raced = api.compare(project, jobs=1).to_json()
    monkeypatch.setattr(pipeline, "stable_batches", real)
    victim.write_bytes(hashed)
    assert raced != api.compare(project, jobs=1, cache=False).to_json()  # it read 9412
    assert (
        api.compare(project, jobs=1).to_json()
        == api.compare(project, jobs=1, cache=False).to_json()
    )
