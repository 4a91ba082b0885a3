"""Packed tokenizer vocabularies in the cache: the same ranks back, and anything else refused
(then built again from the shipped file and kept)."""

from __future__ import annotations

from pathlib import Path

import pytest

from costsim.io.store import CacheStore
from costsim.metering import tokenizers
from costsim.metering.vocabulary import pack, unpack


def test_pack_and_unpack_give_the_same_ranks() -> None:
    ranks = {b"a": 0, b"bc": 1, b"": 2, b"\xff\x00": 3}
    packed = pack(ranks)
    assert packed is not None and unpack(packed) == ranks
    assert pack({b"a": 1, b"b": 0}) is None  # not 0, 1, 2, ... in order: not kept


def test_a_damaged_or_foreign_entry_is_refused() -> None:
    packed = pack({b"a": 0, b"bc": 1})
    assert packed is not None
    assert unpack(packed[:-1]) is None  # torn
    assert unpack(packed[:-1] + b"x") is None  # a changed byte
    assert unpack(b"not a vocabulary") is None
    assert unpack(b"") is None
    empty = pack({})
    assert empty is not None and unpack(empty) is None  # a whole entry, but counts nothing


def test_an_encoding_keeps_its_vocabulary_in_the_cache_and_reads_it_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = tokenizers.ENCODINGS["cl100k_base"]
    shipped = tokenizers._shipped_ranks(spec)
    store = CacheStore(tmp_path)
    monkeypatch.setattr(tokenizers, "_KEPT", [store])
    assert tokenizers._ranks(spec) == shipped  # built, and kept
    key = CacheStore.key("vocabulary", spec.name, spec.sha256)
    kept = store.get("vocabulary", key)
    assert kept is not None and unpack(kept) == shipped

    def unused(_: object) -> dict[bytes, int]:
        raise AssertionError("the kept vocabulary should be read")

    monkeypatch.setattr(tokenizers, "_shipped_ranks", unused)
    assert tokenizers._ranks(spec) == shipped  # read back, not built
    store.put("vocabulary", key, kept[:-10])  # damaged: built again from the shipped file
    monkeypatch.undo()
    monkeypatch.setattr(tokenizers, "_KEPT", [store])
    assert tokenizers._ranks(spec) == shipped
    again = store.get("vocabulary", key)
    assert again is not None and unpack(again) == shipped
