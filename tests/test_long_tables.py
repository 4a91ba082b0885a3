"""Long tables on a terminal: the costliest rows, the others summed in one row that keeps the
TOTAL, every row with -v and in the file formats; rows that cost the same in natural order."""

from __future__ import annotations

import json
import re
import shutil
from decimal import Decimal
from pathlib import Path

import pytest
from click.testing import CliRunner

from costsim.cli import cli
from costsim.render.rows import ROWS_LIMIT, ROWS_SHOWN, natural_key, others_note, split_rows
from tests.conftest import EXAMPLES

pytestmark = pytest.mark.usefixtures("columns_100")

CHAT = "openai_chat_streaming.yaml"  # one call: prompt 31, output 9
COPIES = 30


def test_natural_order_reads_numbers_as_numbers() -> None:
    names = ["t[10]", "t[2]", "t[1]", "a10b", "a9b", "a", "t[02]"]
    assert sorted(names, key=natural_key) == ["a", "a9b", "a10b", "t[1]", "t[2]", "t[02]", "t[10]"]


def test_split_rows_caps_long_tables_only() -> None:
    rows = list(range(ROWS_LIMIT))
    assert split_rows(rows, every=False) == (rows, [])  # short enough: every row
    rows = list(range(ROWS_LIMIT + 1))
    assert split_rows(rows, every=False) == (rows[:ROWS_SHOWN], rows[ROWS_SHOWN:])
    assert split_rows(rows, every=True) == (rows, [])
    assert split_rows(rows, every=True, limit=3) == (rows[:3], rows[3:])  # the user's number
    assert split_rows(rows, every=False, limit=0) == ([], rows)


def test_the_note_agrees_in_number() -> None:
    assert others_note(1, "test").startswith("1 other test, no costlier than those listed, is ")
    assert others_note(12, "model").startswith("12 other models, none costlier than those")


@pytest.fixture
def many(tmp_path: Path) -> Path:
    """The costly Anthropic example and 30 copies of a one-call OpenAI cassette."""
    folder = tmp_path / "cassettes"
    folder.mkdir()
    shutil.copy(EXAMPLES / "anthropic_support_agent.yaml", folder / "agent.yaml")
    for number in range(1, COPIES + 1):
        shutil.copy(EXAMPLES / CHAT, folder / f"chat_{number}.yaml")
    return folder


def _run(*args: str) -> str:
    result = CliRunner().invoke(cli, [*args, "--no-cache", "--jobs", "1"])
    assert result.exit_code == 0, result.output
    return result.stdout


def _first_cells(text: str) -> list[str]:
    return [line.split()[0] for line in text.splitlines() if re.match(r"\S+\.yaml\s", line)]


def test_report_lists_the_costliest_and_sums_the_rest(many: Path) -> None:
    out = _run("report", str(many))
    listed = [Path(cell).name for cell in _first_cells(out)]
    # the costliest first; equal costs in natural order (chat_2 before chat_10)
    assert listed == ["agent.yaml", *(f"chat_{n}.yaml" for n in range(1, ROWS_SHOWN))]
    hidden = COPIES - (ROWS_SHOWN - 1)
    others = next(line for line in out.splitlines() if line.startswith(f"{hidden} other"))
    # by hand: each copy is one call of 31 prompt and 9 output tokens
    assert others.split()[3:6] == [str(hidden), f"{31 * hidden:,}", f"{9 * hidden:,}"]
    total = next(line for line in out.splitlines() if line.startswith("TOTAL"))
    assert total.split()[1] == str(3 + COPIES)  # the rows still add up to the TOTAL
    assert f"{hidden} other cassettes, none costlier than those listed" in out
    assert max(map(len, out.splitlines())) <= 100


def test_report_lists_every_row_with_verbose_and_in_files(many: Path) -> None:
    assert len(_first_cells(_run("report", str(many), "-v"))) == COPIES + 1
    document = json.loads(_run("report", str(many), "--format", "json"))
    assert len(document["cassettes"]) == COPIES + 1
    markdown = _run("report", str(many), "--format", "markdown")
    assert sum(1 for line in markdown.splitlines() if ".yaml |" in line) == COPIES + 1
    assert "other cassettes" not in markdown


def test_compare_breakdown_lists_the_costliest(many: Path, tmp_path: Path) -> None:
    scenario = tmp_path / "many.yaml"
    scenario.write_text(
        "name: many\ncassettes: [cassettes/*.yaml]\nvariants:\n  cache: [caching]\n"
    )
    out = _run("compare", str(scenario), "--by", "cassette")
    table = out[out.index("By cassette") :]
    assert [Path(cell).name for cell in _first_cells(table)][:2] == ["agent.yaml", "chat_1.yaml"]
    assert len(_first_cells(table)) == ROWS_SHOWN
    hidden = COPIES - (ROWS_SHOWN - 1)
    summed = next(line for line in table.splitlines() if line.startswith(f"{hidden} other"))
    # by hand: gpt-4o-mini at $0.15 / $0.60 per million input / output tokens, per copy
    each = (31 * Decimal("0.15") + 9 * Decimal("0.60")) / 1_000_000
    assert summed.split()[3] == f"${each * hidden:.6f}"
    verbose = _run("compare", str(scenario), "--by", "cassette", "-v")
    assert len(_first_cells(verbose[verbose.index("By cassette") :])) == COPIES + 1
