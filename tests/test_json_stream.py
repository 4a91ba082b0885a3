"""JSON written piece by piece: the same bytes as the whole document, never whole in memory."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pydantic_core
from hypothesis import given, settings
from hypothesis import strategies as st

from costsim import api
from costsim.render.json_stream import Deferred, json_chunks, json_text, materialized
from costsim.render.visible import json_escaped

ROOT = Path(__file__).resolve().parents[1]

_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(10**12), 10**12)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)  # every code point: line separators, C1 controls, DEL
)


def _documents(depth: int = 3) -> st.SearchStrategy[Any]:
    """Documents whose lists may be deferred, and whose deferred items are plain."""
    plain = st.recursive(
        _SCALARS,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner),
        max_leaves=8,
    )
    if depth == 0:
        return plain
    inner = _documents(depth - 1)
    deferred = st.lists(plain, max_size=4).map(lambda items: Deferred(lambda: iter(items)))
    return (
        plain
        | deferred
        | st.lists(inner, max_size=3)
        | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    )


def _whole(doc: Any) -> str:
    """The text of the whole document, as costsim wrote it before it wrote in pieces."""
    return json_escaped(pydantic_core.to_json(doc, indent=2).decode()) + "\n"


@settings(max_examples=300, deadline=None)
@given(_documents())
def test_the_pieces_are_the_whole_documents_bytes(doc: Any) -> None:
    plain = materialized(doc)
    assert json_text(doc) == _whole(plain)
    assert json.loads(json_text(doc)) == json.loads(pydantic_core.to_json(plain))


def test_a_deferred_list_is_made_only_as_it_is_written() -> None:
    made: list[int] = []

    def entries() -> Any:
        for index in range(3):
            made.append(index)
            yield {"index": index, "name": f"cassette {index}"}

    pieces = json_chunks({"kind": "x", "cassettes": Deferred(entries), "after": [1]})
    assert made == []
    written = []
    for piece in pieces:
        written.append(piece)
        if '"index": 0' in piece:  # the first entry is written before the second is made
            assert made == [0]
    assert made == [0, 1, 2]
    assert "".join(written) == _whole(
        {
            "kind": "x",
            "cassettes": [{"index": i, "name": f"cassette {i}"} for i in range(3)],
            "after": [1],
        }
    )


def test_an_empty_deferred_list_and_text_that_is_not_unicode() -> None:
    doc = {"none": Deferred(lambda: iter(())), "path": "caf\udce9.yaml\x85"}
    assert json_text(doc) == '{\n  "none": [],\n  "path": "caf\\\\xe9.yaml\\u0085"\n}\n'


def test_a_large_comparison_is_written_in_pieces_as_the_api_renders_it(tmp_path: Path) -> None:
    scenario = tmp_path / "s.yaml"
    scenario.write_text(
        f"name: pieces\ncassettes: [{ROOT / 'cassettes'}/*.yaml]\n"
        "variants:\n  cached: [caching]\n  cut: [{truncation: {max_chars: 200}}]\n"
    )
    result = api.compare_scenarios([scenario])
    pieces = list(result.pieces("json"))
    assert len(pieces) > 10  # each cassette's entry of each variant on its own
    assert "".join(pieces) == result.render("json")
    assert json.loads("".join(pieces)) == json.loads(json.dumps(result.to_json()))
    entries = result.to_json()["scenarios"][0]["variants"][0]["cassettes"]
    assert isinstance(entries, list) and len(entries) == 3  # to_json() is plain JSON


def test_del_is_escaped_in_a_document_of_ascii_alone() -> None:
    """A piece of ASCII alone skipped the escaping, and DEL is ASCII: the pieces wrote it raw
    where the whole document (holding other text) escaped it (hypothesis found it)."""
    doc = [{"\x80": None}, [{"\x7f": None}], Deferred(lambda: iter([]))]
    assert json_text(doc) == _whole(materialized(doc))
    assert json_text({"key": "a\x7fb"}) == '{\n  "key": "a\\u007fb"\n}\n'
