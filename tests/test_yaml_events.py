"""The one-pass YAML loader (:mod:`costsim.io.yaml_events`) builds exactly what the safe
loader builds, value for value and type for type, or hands the document over to it."""

from __future__ import annotations

import datetime as dt
import math
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from costsim.errors import CassetteError
from costsim.io.cassette_yaml import parse_document
from costsim.io.limits import MAX_DEPTH, TooDeepError
from costsim.io.safe_yaml import load_yaml
from costsim.io.yaml_events import NotPlain, load_plain

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"


def same(a: Any, b: Any) -> bool:
    """Equal and of the same types all the way down (``1 == True == 1.0`` is not enough)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(
            same(x, y) and same(a[x], b[y]) for x, y in zip(a, b, strict=True)
        )
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return bool(a == b)


SCALARS = [
    "plain", "'quoted'", '"double \\u00e9 \\n"', "~", "null", "Null", "", "true", "False",
    "yes", "No", "on", "OFF", "y", "n", "0", "-12", "+7", "0x1F", "0o17", "017", "0b101",
    "1_000", "190:20:30", "1.5", "-.5e3", ".inf", "-.Inf", ".nan", "6.8523015e+5",
    "1:30.5", "2001-12-14", "2001-12-14t21:59:43.10-05:00", "2001-12-14 21:59:43.10",
    "!!binary aGVsbG8=", "!!str 12", "!!int '42'", "!!float '3'", "!!python/str x",
    "!!python/unicode y", "'200'", "application/json", "h3=\":443\"; ma=86400", "- x",
    "12:30", "1e3", "0.", "=",
]  # fmt: skip


@pytest.mark.parametrize("scalar", SCALARS)
def test_every_kind_of_scalar_is_read_as_the_safe_loader_reads_it(scalar: str) -> None:
    for text in (f"key: {scalar}\n", f"- {scalar}\n- [{scalar}]\n", f"{{a: [{scalar}]}}\n"):
        try:
            expected = load_yaml(text)
        except yaml.YAMLError:
            with pytest.raises((yaml.YAMLError, NotPlain)):
                load_plain(text)
            continue
        try:
            found = load_plain(text)
        except NotPlain:
            continue  # handed over: the safe loader reads it
        assert same(found, expected), text


def test_a_plain_scalar_read_again_is_read_as_the_first_time() -> None:
    """Plain scalars are resolved once and remembered: the same text as a key, a value, in a
    list and as the whole document, in one document and the next, reads alike each time."""
    for scalar in ("yes", "2001-12-14", "0x1F", "12:30", "~", ".nan", "application/json"):
        texts = [
            f"{scalar}: {scalar}\nk: [{scalar}, {scalar}]\n",
            f"{scalar}\n",
            f"- {{{scalar}: {scalar}}}\n",
        ]
        for text in texts * 2:
            assert same(load_plain(text), load_yaml(text)), text


def test_scalars_of_every_type_are_read_in_one_pass() -> None:
    text = (
        "a: 1\nb: 1.5\nc: true\nd: ~\ne: 2001-12-14\nf: 2001-12-14 21:59:43\n"
        "g: !!binary aGVsbG8=\nh: '1'\ni: [x, {j: k}]\n"
    )
    found = load_plain(text)
    assert same(found, load_yaml(text))
    assert found["e"] == dt.date(2001, 12, 14) and found["g"] == b"hello"


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("a: &x 1\nb: *x\n", "anchor"),
        ("- *x\n", "alias"),
        ("base: {a: 1}\nc:\n  <<: {b: 2}\n", "merge"),
        ("a: !!python/object/new:builtins.object {}\n", "tag"),
        ("a: !custom 1\n", "tag"),
        ("a: !!set {x: null}\n", "tag"),
        ("? [a, b]\n: 1\n", "key"),
        ("a: 1\n---\nb: 2\n", "document"),
        ("a: =\n", "tag"),
    ],
)
def test_anything_else_goes_to_the_full_loader(text: str, why: str) -> None:
    with pytest.raises(NotPlain, match=why):
        load_plain(text)


def test_depth_is_bounded_as_it_grows() -> None:
    text = "a: " + "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1) + "\n"
    with pytest.raises(TooDeepError) as info:
        load_plain(text)
    assert info.value.line == 1
    depth = MAX_DEPTH - 1  # under the top-level mapping
    assert load_plain("a: " + "[" * depth + "]" * depth) is not None
    block = "".join(f"{' ' * (2 * level)}k{level}:\n" for level in range(MAX_DEPTH + 5)) + "x\n"
    with pytest.raises(TooDeepError):
        load_plain(block)


def test_documents_handed_over_are_read_and_errors_told_as_before(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    aliased = "interactions:\n- &one {request: {}}\n- *one\n"
    assert parse_document(path, aliased, len(aliased)) == load_yaml(aliased)
    # a scalar no constructor can hold, and a broken line further on: the broken line is
    # reported (the whole stream is checked before anything is built, as always)
    broken = "a: 2001-13-14\nb: [\n"
    with pytest.raises(CassetteError, match="not valid YAML"):
        parse_document(path, broken, len(broken))
    with pytest.raises(CassetteError, match="unreadable YAML"):
        parse_document(path, "a: 2001-13-14\n", 14)


def _documents() -> st.SearchStrategy[Any]:
    keys = st.one_of(st.text(max_size=8), st.integers(), st.booleans(), st.none())
    leaves = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.floats(allow_nan=False),
        st.text(),
        st.binary(max_size=20),
        st.dates(),
        st.datetimes(timezones=st.just(dt.UTC)),
    )
    return st.recursive(
        leaves,
        lambda inner: st.one_of(
            st.lists(inner, max_size=4), st.dictionaries(keys, inner, max_size=4)
        ),
        max_leaves=30,
    )


@settings(max_examples=300, deadline=None)
@given(_documents(), st.sampled_from([None, True, False]))
def test_any_document_pyyaml_writes_is_read_alike(document: Any, flow: bool | None) -> None:
    text = yaml.safe_dump({"interactions": document}, default_flow_style=flow)
    assert same(load_plain(text), load_yaml(text))


@pytest.mark.skipif(
    not CORPUS.is_dir(), reason="the real-cassette corpus (../shared/corpus) is absent"
)
def test_every_corpus_cassette_is_read_in_one_pass_alike() -> None:
    files = sorted(p for p in CORPUS.rglob("*") if p.suffix in (".yaml", ".yml"))
    assert files
    for path in files:
        text = path.read_text()
        assert same(load_plain(text), load_yaml(text)), path


@pytest.mark.parametrize("scalar", ["!!bool maybe", "!!int ''", "!!timestamp foo", "!!float x"])
def test_a_value_that_does_not_fit_its_tag_is_one_sentence(tmp_path: Path, scalar: str) -> None:
    path = tmp_path / "c.yaml"
    text = f"interactions:\n- request: {{body: {scalar}}}\n"
    with pytest.raises(CassetteError, match="unreadable YAML"):
        parse_document(path, text, len(text))
