"""Cassette paths in cached traces and shares: read back as the same paths, each distinct text
made into one ``Path`` object, and anything but a string refused (the entry is rebuilt)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import TypeAdapter, ValidationError

from costsim.analysis.outcomes import outcome
from costsim.api.work import _dump_share, _load_share
from costsim.engine import Engine
from costsim.io.trace_codec import decode_trace, encode_trace
from costsim.metering.meter import Meter
from costsim.model import CassettePath, Provenance
from costsim.providers.normalise import load_trace
from costsim.strategies.syntax import parse_variant

CASSETTE = Path(__file__).resolve().parents[1] / "cassettes" / "anthropic_support_agent.yaml"


def test_a_cached_trace_reads_back_equal_with_one_path_object() -> None:
    trace = load_trace(CASSETTE)
    decoded = decode_trace(encode_trace(trace), trace.path)
    assert decoded == trace
    assert decoded is not None and len(decoded.calls) > 1
    first, second = (call.provenance.path for call in decoded.calls[:2])
    assert first == trace.path and first is second


@pytest.mark.parametrize("value", [7, None, ["a"], {"a": 1}])
def test_a_cached_trace_whose_path_is_not_a_string_is_not_an_entry(value: object) -> None:
    trace = load_trace(CASSETTE)
    document = json.loads(encode_trace(trace))
    document["calls"][0]["provenance"]["path"] = value
    assert decode_trace(json.dumps(document).encode(), trace.path) is None


def test_a_cached_share_reads_back_equal_with_path_keys() -> None:
    trace = load_trace(CASSETTE)
    engine = Engine([trace], meter=Meter())
    variants = [parse_variant("caching"), parse_variant("truncation & caching")]
    share = outcome(engine, variants)
    back = _load_share(_dump_share(share))
    assert back == share
    assert [type(key) for key in back.baseline_per_cassette] == [type(trace.path)]
    assert list(back.variants[0].per_cassette) == [trace.path]


def test_python_values_pass_as_paths_and_serialise_as_text() -> None:
    adapter = TypeAdapter(Provenance)
    assert adapter.validate_python({"path": Path("a/b.yaml"), "index": 3}) == Provenance(
        Path("a/b.yaml"), 3
    )
    assert adapter.dump_python(Provenance(Path("a.yaml"), 0)) == {
        "path": Path("a.yaml"),
        "index": 0,
    }
    assert json.loads(adapter.dump_json(Provenance(Path("a.yaml"), 0))) == {
        "path": "a.yaml",
        "index": 0,
    }
    with pytest.raises(ValidationError, match="a path is a string, not int"):
        TypeAdapter(CassettePath).validate_json("5")
