"""Baseline files as a hostile review and a Windows editor write them: each refused in one
sentence naming the file (exit 2, never a traceback, never exit 1, which reads as a
regression), or read as the text it is; and ``baseline list`` listing the good beside the bad."""

from __future__ import annotations

import codecs
import json
import re
from decimal import Decimal
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from click.testing import CliRunner

from costsim.analysis.baseline import TestCost, load_baseline, save_baseline
from costsim.cli import cli
from costsim.errors import InputError

ENTRY = {
    "calls": 1,
    "prompt_tokens": 1000,
    "uncached_input_tokens": 1000,
    "output_tokens": 100,
    "cost_usd": "0.0045",
    "priced_cost_usd": "0.0045",
    "unpriced_calls": 0,
}


def _text(tests: str = json.dumps({"t::a": ENTRY}), version: str = "2") -> str:
    return f'{{"format_version": {version}, "kind": "costsim.baseline", "tests": {tests}}}'


def _entry(**changed: Any) -> str:
    return json.dumps({"t::a": {**ENTRY, **changed}})


HOSTILE = {
    "integer of 5,000 digits": (
        _text(json.dumps({"t::a": {"calls": 1}}).replace("1", "9" * 5000)),
        "not usable JSON (an integer of 5,000 digits",
    ),
    "100,000 nested arrays": (
        _text("[" * 100_000 + "]" * 100_000),
        "nested more than 200 levels deep",
    ),
    "cost 1e999999999": (
        _text(_entry(cost_usd="1e999999999", priced_cost_usd="1e999999999")),
        "cost_usd '1e999999999' is not an amount a test can cost",
    ),
    "cost 1e-999999999": (
        _text(_entry(cost_usd="1e-999999999", priced_cost_usd="1e-999999999")),
        "cost_usd '1e-999999999' is not an amount a test can cost",
    ),
    "cost true": (_text(_entry(cost_usd=True)), "cost_usd must be a decimal string"),
    "format_version true": (_text(version="true"), "format_version true is not one"),
    "format_version 1.0": (_text(version="1.0"), "format_version 1.0 is not one"),
    "NaN": (_text('{"t::a": {"calls": NaN}}'), "not valid JSON (NaN is not a JSON number)"),
    "a test given twice": (
        _text('{"t::a": {"calls": 1}, "t::a": {"calls": 2}}'),
        "the key 't::a' is given twice in one object",
    ),
    "a terminal escape in a test id": (
        _text(json.dumps({"t::a\x1b]0;pwned\x07": ENTRY})),
        "holds a control character (U+001B)",
    ),
    "not UTF-8": (_text().replace("t::a", "t::\udcff"), "not UTF-8 text (byte"),
}


@pytest.mark.parametrize(("content", "message"), HOSTILE.values(), ids=HOSTILE.keys())
def test_a_hostile_baseline_is_one_sentence_and_exit_2(
    tmp_path: Path, content: str, message: str
) -> None:
    path = tmp_path / "bad.json"
    path.write_bytes(content.encode("utf-8", "surrogateescape"))
    with pytest.raises(InputError, match=re.escape(message)) as error:
        load_baseline(path)
    assert str(path) in str(error.value)
    save_baseline(tmp_path / "good.json", {"t::a": TestCost(calls=1)})
    result = CliRunner().invoke(
        cli, ["baseline", "compare", str(tmp_path / "good.json"), str(path)]
    )
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0] and "Traceback" not in result.output


@pytest.mark.parametrize(
    ("mark", "encoding"),
    [
        (codecs.BOM_UTF8, "utf-8"),
        (codecs.BOM_UTF16_LE, "utf-16-le"),
        (codecs.BOM_UTF16_BE, "utf-16-be"),
        (codecs.BOM_UTF32_LE, "utf-32-le"),
        (b"", "utf-16-le"),  # no mark: the null bytes tell, as YAML and JSON allow
    ],
    ids=["utf-8 bom", "utf-16 le", "utf-16 be", "utf-32 le", "utf-16 le no bom"],
)
def test_a_baseline_an_editor_saved_with_a_byte_order_mark_reads(
    tmp_path: Path, mark: bytes, encoding: str
) -> None:
    """PowerShell's ``>`` and Notepad write UTF-16 or UTF-8 with a mark: it read as
    "Unexpected UTF-8 BOM (decode using utf-8-sig)" or a raw codec message."""
    path = tmp_path / "main.json"
    path.write_bytes(mark + _text().encode(encoding))
    assert load_baseline(path)["t::a"].cost_usd == Decimal("0.0045")


def _folder(tmp_path: Path) -> Path:
    folder = tmp_path / ".costsim"
    priced = TestCost(calls=1, prompt_tokens=100, priced_cost_usd=Decimal("0.0045"))
    save_baseline(folder / "main.json", {"t::a": priced})
    (folder / "aaa.json").write_text(_text(version="true"))
    (folder / "zzz.json").write_text("{")
    save_baseline(folder / "pr.json", {"t::a": priced, "t::b": priced})
    return folder


def test_baseline_list_lists_the_good_beside_the_bad(tmp_path: Path) -> None:
    """It stopped at the first bad file (exit 2) and listed none of the others; now each
    bad file is a row marked unreadable with why under the table, and a warning, as
    ``cassettes list`` and ``--lenient`` treat one bad file among many."""
    folder = _folder(tmp_path)
    result = CliRunner().invoke(cli, ["baseline", "list", "--dir", str(folder)])
    assert result.exit_code == 0, result.output
    text = "".join(result.stdout.split())  # a long temporary path is wrapped anywhere
    assert text.startswith("4baselinesin") and ".costsim,2unreadable.name" in text
    names = ("aaa", "main", "pr", "zzz")
    rows = {
        cells[0]: cells[1:3]
        for line in result.stdout.splitlines()
        if (cells := line.split()) and cells[0] in names
    }
    assert rows["main"] == ["1", "1"] and rows["pr"] == ["2", "2"]
    assert rows["aaa"][0] == rows["zzz"][0] == "unreadable"
    assert "unreadable:baseline" in text and "aaa.json:format_versiontrueisnotone" in text
    assert "zzz.json:notvalidJSON(Expectingpropertyname" in text
    assert result.stderr.count("warning: skipped baseline ") == 2
    document = json.loads(
        CliRunner()
        .invoke(cli, ["baseline", "list", "--dir", str(folder), "--format", "json"])
        .stdout
    )
    assert [item["name"] for item in document["baselines"]] == ["main", "pr"]
    assert [item["name"] for item in document["unreadable"]] == ["aaa", "zzz"]
    assert "format_version true" in document["unreadable"][0]["error"]
    assert len(document["warnings"]) == 2
    schema = Path(__file__).parents[1] / "src/costsim/schemas/baseline-list.schema.json"
    jsonschema.validate(document, json.loads(schema.read_text()))
