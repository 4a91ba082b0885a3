"""The cut-short rule (:mod:`costsim.analysis.cut_short`) on small hand-made cases."""

from __future__ import annotations

from pathlib import Path

import pytest

from costsim.analysis.cut_short import cut_short, cut_short_warnings


def test_a_file_without_version_is_cut_short_only_beside_files_with_it() -> None:
    a, b, c = Path("x/a.yaml"), Path("x/b.yaml"), Path("x/c.yaml")
    other = Path("y/d.yaml")
    assert cut_short([a, b, c, other], [a]) == {a: 2}
    assert cut_short([a, b, other], [a, b]) == {}  # none of its folder has one: a hint
    assert cut_short([a, other], [a]) == {}  # another folder's file does not count
    assert cut_short([a], [a]) == {}
    assert cut_short([a, b], []) == {}


def test_a_file_named_twice_is_one_file() -> None:
    a, b = Path("x/a.yaml"), Path("x/b.yaml")
    assert cut_short([a, a, b], [a]) == {a: 1}
    assert cut_short([a, b, b], [a]) == {a: 1}
    (warning,) = cut_short_warnings([a, a, b], [a])
    assert warning.startswith("x/a.yaml: no 'version' key")
    assert "where the other cassette of its folder ends with one" in warning
    (warning,) = cut_short_warnings([a, b, Path("x/c.yaml")], [a])
    assert "where the 2 other cassettes of its folder end with one" in warning


def test_json_cassettes_are_neither_cut_short_nor_siblings() -> None:
    """A trial: a folder of one JSON cassette (vcrpy writes its version key first) and one
    cut YAML file; the warning said the JSON file "ends with" the key."""
    cut, recorded = Path("x/cut.yaml"), Path("x/recorded.json")
    assert cut_short([cut, recorded], [cut]) == {}
    assert cut_short([cut, recorded, Path("x/b.YML")], [cut]) == {cut: 1}
    assert cut_short([recorded, Path("x/b.yaml")], [recorded]) == {}


def test_a_folder_named_relatively_and_absolutely_is_one_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``costsim report c/x.yaml /abs/c/y.yaml``: one folder, however each file is written
    (the relative one used to be a folder of its own, compared with nothing)."""
    (tmp_path / "c").mkdir()
    monkeypatch.chdir(tmp_path)
    relative, absolute = Path("c/x.yaml"), tmp_path / "c" / "y.yaml"
    assert cut_short([relative, absolute], [relative]) == {relative: 1}


def test_the_cut_files_of_a_folder_are_one_warning() -> None:
    """A trial on the corpus three times over: 18 warnings, one per file, 400 characters
    each, three per folder. One per folder names them all (or the first five)."""
    whole = [Path(f"x/w{i}.yaml") for i in range(3)]
    cut = [Path(f"x/c{i}.yaml") for i in range(7)]
    alone = Path("y/a.yaml")
    warnings = cut_short_warnings([*whole, *cut, alone, Path("y/b.yaml")], [*cut, alone])
    assert len(warnings) == 2
    grouped, single = warnings
    assert grouped.startswith("x: 7 cassettes have no 'version' key (c0.yaml, c1.yaml, c2.yaml")
    assert "c4.yaml and 2 more ('costsim cassettes check' lists each)" in grouped
    assert "c5.yaml" not in grouped
    assert "where the 3 other cassettes of their folder end with one" in grouped
    assert single.startswith("y/a.yaml: no 'version' key")
    two = cut_short_warnings([cut[0], cut[1], whole[0]], cut[:2])
    assert two == [
        "x: 2 cassettes have no 'version' key (c0.yaml, c1.yaml), which vcrpy writes after "
        "the last interaction, where the other cassette of their folder ends with one: "
        "probably cut short between two interactions, their later calls missing from every "
        "total (re-record them; if one is whole, add 'version: 1' at its end)"
    ]
