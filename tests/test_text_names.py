"""A name from a recording quoted in a note or a message: whole up to 120 characters, else
its start and end around an ellipsis, and how long it was."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from costsim.cli import cli
from tests.conftest import recorded_as, said

pytestmark = pytest.mark.usefixtures("columns_100")


def test_a_long_model_name_is_quoted_cut_in_notes(tmp_path: Path) -> None:
    """A model name of 10,000 characters filled 113 lines of notes, quoted whole twice."""
    recorded_as(tmp_path, "claude-" + "x" * 10_000)
    result = CliRunner().invoke(cli, ["report", str(tmp_path), "-v", "--no-cache"])
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert sum("xxxxxxxxxx" in line for line in out.splitlines()) <= 6, out
    assert "…" in out and " (10,007 characters)" in " ".join(out.split())


def test_a_long_test_id_of_a_baseline_is_cut_in_its_regression(tmp_path: Path) -> None:
    """A baseline's test id of 3,000 characters filled 31 lines of baseline compare."""
    test = "t.py::test_" + "z" * 3_000
    for name, cost in (("old", "1.0"), ("new", "2.0")):
        figures = {"calls": 1, "prompt_tokens": 10, "output_tokens": 1}
        figures |= {"priced_cost_usd": cost, "cost_usd": cost}
        document = {"format_version": 2, "kind": "costsim.baseline", "tests": {test: figures}}
        (tmp_path / f"{name}.json").write_text(json.dumps(document))
    args = ["baseline", "compare", str(tmp_path / "old.json"), str(tmp_path / "new.json")]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 1, result.output
    assert sum("zzzzzzzzzz" in line for line in result.stdout.splitlines()) <= 3, result.stdout
    assert said(result.stdout, "*t.py::test_zzz*…*zzz (3,011 characters): cost rose +100.0%*")


def test_a_name_is_quoted_whole_up_to_a_sane_length() -> None:
    from costsim.model.quoting import NAME_LIMIT, quoted, short_name

    assert quoted("claude-sonnet-4-5") == "'claude-sonnet-4-5'"
    assert short_name("claude-sonnet-4-5") == "claude-sonnet-4-5"
    hostile = "x\x1b]0;pwned\x07\r\ny"
    assert quoted(hostile) == repr(hostile)  # escapes, as !r quoted it
    assert short_name("n" * NAME_LIMIT) == "n" * NAME_LIMIT
    long = "a" * 100 + "b" * 9_900
    kept = "a" * 79 + "…" + "b" * 40  # two thirds of the room the start, a third the end
    assert short_name(long) == f"{kept} (10,000 characters)"
    assert quoted(long) == f"'{kept}' (10,000 characters)"


def test_a_note_names_a_snapshot_and_its_alias_alike() -> None:
    """The plugin listed "minimum for claude-haiku-4-5-20251001" and "minimum for
    claude-haiku-4-5" as two notes of one fact."""
    from costsim.model.quoting import model_family

    assert model_family("claude-haiku-4-5-20251001") == "claude-haiku-4-5"
    assert model_family("claude-sonnet-4@20250514") == "claude-sonnet-4"
    assert model_family("gpt-4o-2024-08-06") == "gpt-4o"
    assert model_family("claude-haiku-4-5") == "claude-haiku-4-5"
    assert model_family("20251001") == "20251001"
