"""A comparison's share as it is written (to the cache, and from a worker to its parent):
packed, read back equal; one engine over a batch of cassettes gives exactly the merge of one
share per cassette; the per-cassette breakdown is each column's per-cassette sums."""

from __future__ import annotations

import json
import pickle
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import pytest
import yaml
from pydantic import TypeAdapter

from costsim.analysis.groups import Grouper
from costsim.analysis.merging import merge
from costsim.analysis.outcomes import Share, cassette_tables, outcome
from costsim.analysis.packing import Packed, pack, unpack
from costsim.api import work
from costsim.api.work import BatchShare, _dump_share, _load_share
from costsim.engine import Engine
from costsim.errors import CostsimError
from costsim.metering.meter import Meter
from costsim.model import CassetteTrace
from costsim.providers.normalise import load_trace
from costsim.scenario import load_scenario
from costsim.strategies.registry import Variant

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "cassettes"


@pytest.fixture(scope="module")
def variants(tmp_path_factory: pytest.TempPathFactory) -> list[Variant]:
    """Every strategy, as the benchmark scenario runs them (one stacked, with attribution)."""
    document = yaml.safe_load((ROOT / "benchmarks" / "corpus_scenario.yaml").read_text())
    document["cassettes"] = [str(EXAMPLES / "*.yaml")]
    path = tmp_path_factory.mktemp("scenario") / "every.yaml"
    path.write_text(yaml.safe_dump(document))
    return list(load_scenario(path).variants)


def _traces(corpus: Path | None) -> list[CassetteTrace]:
    paths = sorted(EXAMPLES.glob("*.yaml"))
    if corpus is not None:  # one in 25 of the real recordings, from every source
        paths += sorted(corpus.rglob("*.yaml"))[::25]
    traces = []
    for path in paths:
        try:
            traces.append(load_trace(path))
        except CostsimError:
            continue
    return traces


@pytest.fixture(scope="module")
def traces() -> list[CassetteTrace]:
    from tests.conftest import CORPUS

    return _traces(CORPUS if CORPUS.is_dir() else None)


def _share(traces: Sequence[CassetteTrace], variants: Sequence[Variant]) -> Share:
    return outcome(Engine(list(traces), meter=Meter()), variants)


def _full(share: Share) -> bytes:
    return TypeAdapter(Share).dump_json(share)


def test_a_packed_share_reads_back_equal_and_much_smaller(
    traces: list[CassetteTrace], variants: list[Variant]
) -> None:
    share = _share(traces, variants)
    packed = _dump_share(share)
    assert _load_share(packed) == share  # decimals equal (a zero's exponent is not kept)
    # most variants leave most cassettes as recorded: those are not written again
    assert len(packed) < len(_full(share))
    document = json.loads(packed)
    written = sum(len(part.get("per_cassette", {})) for part in document["share"]["variants"])
    assert written < len(variants) * len(traces) / 2


def test_packing_leaves_the_share_it_packs_unchanged(
    traces: list[CassetteTrace], variants: list[Variant]
) -> None:
    share = _share(traces[:6], variants)
    before = _full(share)
    pack(share)
    assert _full(share) == before


def test_a_table_of_other_cassettes_or_order_is_written_whole(
    traces: list[CassetteTrace], variants: list[Variant]
) -> None:
    share = _share(traces[:3], variants[:2])
    first = share.variants[0]
    share.variants[0] = replace(first, per_cassette=dict(reversed(first.per_cassette.items())))
    packed = pack(share)
    assert not packed.sparse[0].per_cassette and packed.sparse[1].per_cassette
    assert list(_load_share(_dump_share(share)).variants[0].per_cassette) == list(
        reversed(first.per_cassette)
    )


def test_a_packed_share_naming_a_cassette_it_does_not_hold_is_refused(
    traces: list[CassetteTrace], variants: list[Variant]
) -> None:
    share = _share(traces[:2], variants[:1])
    document = json.loads(_dump_share(share))
    recorded = document["share"]["baseline_per_cassette"]
    document["share"]["variants"][0]["per_cassette"] = {
        "elsewhere.yaml": next(iter(recorded.values()))
    }
    data = json.dumps(document).encode()
    with pytest.raises(ValueError, match="names a cassette the share does not"):
        _load_share(data)
    assert work._cached_share(data, _job(variants[:1])) is None  # rebuilt, never an error


def test_a_packed_share_with_another_number_of_variants_is_refused(
    traces: list[CassetteTrace], variants: list[Variant]
) -> None:
    packed = pack(_share(traces[:2], variants[:2]))
    with pytest.raises(ValueError, match="number of variants"):
        unpack(Packed(packed.share, packed.sparse[:1]))


def _job(variants: Sequence[Variant]) -> work.SimulateJob:
    from costsim.analysis.groups import AgentMatcher
    from costsim.cache.rules import default_rules
    from costsim.metering.validation import CalibrationReport

    return work.SimulateJob(
        cache=None,
        report=CalibrationReport([], [], []),
        rules=default_rules(),
        agents={},
        variants=tuple(variants),
        as_of=None,
        matcher=AgentMatcher(),
    )


def test_one_engine_over_a_batch_is_the_merge_of_one_share_per_cassette(
    traces: list[CassetteTrace], variants: list[Variant]
) -> None:
    whole = _share(traces, variants)
    one_by_one = merge([_share([trace], variants) for trace in traces], variants)
    assert _full(whole) == _full(one_by_one)


def test_the_per_cassette_breakdown_is_each_columns_sums_by_cassette(
    traces: list[CassetteTrace], variants: list[Variant]
) -> None:
    engine = Engine(traces, meter=Meter())
    share = outcome(engine, variants)
    grouper = Grouper()
    columns = [engine.run(Variant("baseline")), *(engine.run(variant) for variant in variants)]
    expected = [grouper.tables(result.metered())["cassette"] for result in columns]
    assert cassette_tables(share) == expected
    assert [list(table) for table in cassette_tables(share)] == [list(t) for t in expected]


def test_a_cassette_without_llm_calls_has_no_row(variants: list[Variant]) -> None:
    trace = load_trace(EXAMPLES / "anthropic_support_agent.yaml")
    empty = CassetteTrace(Path("no-calls.yaml"), (), other_interactions=1, size_bytes=10)
    share = _share([trace, empty], variants[:1])
    assert all("no-calls.yaml" not in table for table in cassette_tables(share))
    assert Path("no-calls.yaml") in share.baseline_per_cassette


def test_a_batch_share_travels_as_its_packed_json(
    traces: list[CassetteTrace], variants: list[Variant]
) -> None:
    share = _share(traces[:3], variants)
    sent = BatchShare(share, ((1, "broken"),))
    back = pickle.loads(pickle.dumps(sent))
    assert back.share == share and back.errors == sent.errors
    kept = _dump_share(share)  # a share the worker wrote to the cache goes as those bytes
    assert BatchShare(share, (), kept).__reduce__()[1][0] is kept


def test_a_cassette_named_twice_is_read_once_and_a_trace_given_twice_counts_twice() -> None:
    """A file named twice (``costsim simulate F F``) is read once (it is one recording); a
    trace given twice to the API is two runs of one engine each, as before batches shared
    one (an engine knows its traces by path)."""
    from tests.conftest import CORPUS

    _counts([EXAMPLES / "anthropic_support_agent.yaml"])
    found = sorted(CORPUS.glob("pydantic__pydantic-ai/*cache_prefix_stable*.yaml"))
    if not found:
        pytest.skip(f"the corpus's warm-cache recordings are not at {CORPUS}")
    _counts(found[:4])  # recordings with warm starts: what went wrong with one engine


def _counts(paths: list[Path]) -> None:
    from costsim import api

    for path in paths:
        once = api.simulate([path], "caching:policy=auto,ttl=1h", jobs=1, cache=False)
        named = api.simulate([path, path], "caching:policy=auto,ttl=1h", jobs=1, cache=False)
        traces = list(api.load([path]))
        given = api.simulate(traces + traces, "caching:policy=auto,ttl=1h")
        item = once.data.variants[0]
        assert named.data.variants[0].delta == item.delta
        doubled = given.data.variants[0]
        assert doubled.delta.value == 2 * item.delta.value  # type: ignore[operator]
        assert doubled.delta.spread.above == 2 * item.delta.spread.above
        assert doubled.resimulated_calls == 2 * item.resimulated_calls


def test_a_file_name_that_is_not_utf8_runs_in_workers_and_is_not_cached(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    from costsim import api
    from costsim.api import pipeline

    folder = tmp_path / "cassettes"
    folder.mkdir()
    for source in sorted(EXAMPLES.glob("*.yaml")):
        (folder / source.name).write_bytes(source.read_bytes())
    odd = os.fsdecode(bytes(folder) + b"/bad_\xffname.yaml")
    Path(odd).write_bytes((EXAMPLES / "anthropic_support_agent.yaml").read_bytes())
    monkeypatch.setattr(pipeline, "_POOL_BYTES", 0)  # workers, whatever the size
    monkeypatch.setenv("COSTSIM_CACHE_DIR", str(tmp_path / "cache"))
    reference = api.simulate(folder, "caching", jobs=1, cache=False)
    for cache in (False, True, True):
        run = api.simulate(folder, "caching", jobs=2, cache=cache)
        assert run.data.variants[0].totals == reference.data.variants[0].totals
        assert Path(odd) in run.data.baseline_per_cassette
