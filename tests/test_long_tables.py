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

from costsim.analysis.breakdown import Breakdown, ToolUse
from costsim.cli import cli
from costsim.model.call import Provenance
from costsim.pricing.ledger import Totals, UnpricedCall
from costsim.render.breakdown import breakdown_table
from costsim.render.rows import (
    ROWS_LIMIT,
    ROWS_SHOWN,
    natural_key,
    others_note,
    ranked,
    split_rows,
)
from tests.conftest import EXAMPLES

pytestmark = pytest.mark.usefixtures("columns_100")

CHAT = "openai_chat_streaming.yaml"  # one call: prompt 31, output 9
COPIES = 30


def test_natural_order_reads_numbers_as_numbers() -> None:
    names = ["t[10]", "t[2]", "t[1]", "a10b", "a9b", "a", "t[02]"]
    expected = ["a", "a9b", "a10b", "t[1]", "t[02]", "t[2]", "t[10]"]
    assert [name for name, _ in ranked(((n, 0) for n in names), lambda v: v)] == expected
    # a fixed order whatever order the rows came in (xdist workers answer in any order)
    assert ranked(((n, 0) for n in reversed(names)), lambda v: v) == ranked(
        ((n, 0) for n in names), lambda v: v
    )


def test_natural_key_takes_any_run_of_digits() -> None:
    """Digits are compared as text by length, not converted (Python refuses int() of more
    than 4,300 digits)."""
    long = "test[" + "1" * 5000 + "]"
    assert natural_key("test[9]") < natural_key(long)


def test_ranked_puts_the_biggest_first_and_keeps_names_in_order() -> None:
    rows = [("b", 1), ("a10", 5), ("a9", 5), ("c", 7)]
    assert ranked(rows, lambda v: v) == [("c", 7), ("a9", 5), ("a10", 5), ("b", 1)]


def test_split_rows_caps_long_tables_only() -> None:
    rows = list(range(ROWS_LIMIT))
    assert split_rows(rows, every=False) == (rows, [])  # short enough: every row
    rows = list(range(ROWS_LIMIT + 1))
    assert split_rows(rows, every=False) == (rows[:ROWS_SHOWN], rows[ROWS_SHOWN:])
    assert split_rows(rows, every=True) == (rows, [])
    assert split_rows(rows, every=True, limit=3) == (rows[:3], rows[3:])  # the user's number
    assert split_rows(rows, every=False, limit=0) == ([], rows)
    # rows to keep are listed wherever they rank
    assert split_rows(rows, every=False, keep=lambda r: r == 25) == (
        [*rows[:ROWS_SHOWN], 25],
        rows[ROWS_SHOWN:25],
    )


def test_the_note_agrees_in_number() -> None:
    assert others_note(1, "test", "-v").startswith("The 1 other is the cheapest test: ")
    assert others_note(12, "model", "-v").startswith("The 12 others are the cheapest models, ")


def _totals(cost: str, *, unpriced: int = 0) -> Totals:
    totals = Totals(llm_calls=1, calls_with_usage=1, priced_cost=Decimal(cost))
    totals.unpriced = [
        UnpricedCall(Provenance(Path("x.yaml"), i), "imaginary", "no price")
        for i in range(unpriced)
    ]
    return totals


def test_a_breakdown_lists_a_row_a_variant_makes_costly() -> None:
    """Ranked by its largest cost in any column: a model only a routing variant uses (no
    baseline cost) is listed, not summed away."""
    rows: dict[str, tuple[Totals | ToolUse | None, ...]] = {
        f"model-{n}": (_totals("0.01"), _totals("0.01")) for n in range(30)
    }
    rows["haiku"] = (None, _totals("5.00"))
    out = breakdown_table(Breakdown("model", ("baseline", "route"), rows), width=100)
    assert out.splitlines()[3].split() == ["haiku", "-", "$5.0000"]


def test_a_breakdown_keeps_unpriced_rows_and_the_priced_part() -> None:
    """A row of unknown cost is listed wherever it ranks (never summed away), and a partial
    cost reads as its priced part, starred."""
    rows: dict[str, tuple[Totals | ToolUse | None, ...]] = {
        f"c{n}.yaml": (_totals("0.01"),) for n in range(30)
    }
    rows["unpriced.yaml"] = (_totals("0", unpriced=1),)
    rows["partial.yaml"] = (_totals("0.005", unpriced=1),)
    out = breakdown_table(Breakdown("cassette", ("baseline",), rows), width=100)
    lines = out.splitlines()
    assert [line.split()[0] for line in lines[23:25]] == ["partial.yaml", "unpriced.yaml"]
    # the priced part is an amount shown: the column's precision gives it 3 figures
    assert lines[23].split()[1] == "≥$0.00500*" and lines[24].split()[1] == "unpriced*"
    assert lines[25].split() == ["10", "others", "$0.10000"]  # 10 of $0.01, by hand


def test_a_tool_breakdown_says_smallest_and_fits_in_bytes() -> None:
    rows: dict[str, tuple[Totals | ToolUse | None, ...]] = {
        f"tool_{n}": (ToolUse(5, 3000 - n, 100),) * 3 for n in range(25)
    }
    rows["plan_and_apply_recipe_modifications"] = (ToolUse(6, 2999, 736),) * 3
    rows["cheap"] = (ToolUse(778, 27, 2),) * 3
    for n in range(10):
        rows[f"z{n}"] = (ToolUse(1, 2_700, 210),) * 3
    out = breakdown_table(Breakdown("tool", ("baseline", "cache", "route"), rows), width=100)
    assert max(len(line.encode()) for line in out.splitlines()) <= 100
    assert "The 17 others are the smallest tools" in " ".join(out.split())
    # summed over tools, the requests sending any of them are not known: "-"; by hand, the
    # 17 smallest are tool_19..tool_24 (3,000 - n; 100), z0..z9 (2,700; 210), cheap (27; 2)
    summed = next(line for line in out.splitlines() if line.startswith("17 others"))
    assert summed.split()[2:7] == ["-", "/", "44,898", "/", "2,702"]


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
    others = next(line for line in out.splitlines() if line.startswith(f"{hidden} others"))
    # by hand: each copy is one call of 31 prompt and 9 output tokens
    assert others.split()[2:5] == [str(hidden), f"{31 * hidden:,}", f"{9 * hidden:,}"]
    total = next(line for line in out.splitlines() if line.startswith("TOTAL"))
    assert total.split()[1] == str(3 + COPIES)  # the rows still add up to the TOTAL
    assert f"The {hidden} others are the cheapest cassettes, summed in one row" in out
    assert max(map(len, out.splitlines())) <= 100


def test_report_lists_every_row_with_verbose_and_in_files(many: Path) -> None:
    assert len(_first_cells(_run("report", str(many), "-v"))) == COPIES + 1
    document = json.loads(_run("report", str(many), "--format", "json"))
    assert len(document["cassettes"]) == COPIES + 1
    markdown = _run("report", str(many), "--format", "markdown")
    assert sum(1 for line in markdown.splitlines() if ".yaml |" in line) == COPIES + 1
    assert "others" not in markdown


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
    summed = next(line for line in table.splitlines() if line.startswith(f"{hidden} others"))
    # by hand: gpt-4o-mini at $0.15 / $0.60 per million input / output tokens, per copy
    each = (31 * Decimal("0.15") + 9 * Decimal("0.60")) / 1_000_000
    assert summed.split()[2] == f"${each * hidden:.6f}"
    verbose = _run("compare", str(scenario), "--by", "cassette", "-v")
    assert len(_first_cells(verbose[verbose.index("By cassette") :])) == COPIES + 1


def test_report_lists_an_unpriced_cassette_wherever_it_ranks(many: Path) -> None:
    """A cassette of 900,000 prompt tokens on a model with no price ranks last by its priced
    part ($0) but is listed, never summed away; the answer gives the priced part."""
    text = (EXAMPLES / CHAT).read_text().replace("gpt-4o-mini", "gpt-imaginary-9")
    text = text.replace('\\"prompt_tokens\\":31', '\\"prompt_tokens\\":900000')
    text = text.replace('\\"total_tokens\\":40', '\\"total_tokens\\":900009')
    assert "900000" in text and "900009" in text
    (many / "unpriced_big.yaml").write_text(text)
    out = _run("report", str(many))
    row = next(line for line in out.splitlines() if "unpriced_big.yaml " in line)
    assert row.split()[1:3] == ["1", "900,000"] and row.endswith("unpriced*")
    assert out.startswith(f"{3 + COPIES + 1} LLM calls in {COPIES + 2} cassettes: ≥$")


def test_the_others_label_is_never_cut(many: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for path in many.glob("chat_*.yaml"):
        path.rename(many / f"a_rather_long_cassette_name_for_the_test_{path.name}")
    monkeypatch.setenv("COLUMNS", "44")
    out = _run("report", str(many))
    assert any(line.startswith("11 others ") for line in out.splitlines()), out


def test_a_path_in_a_sentence_is_cut_at_a_folder() -> None:
    from costsim.render.paths import shorten_path

    path = "scenarios/cassettes/side_calls/assistant_with_side_calls.yaml"
    assert shorten_path(path, 61) == path
    assert shorten_path(path, 60) == "…/cassettes/side_calls/assistant_with_side_calls.yaml"
    assert shorten_path(path, 40) == "…/assistant_with_side_calls.yaml"
    assert shorten_path(path, 20) == "…ith_side_calls.yaml"  # the name alone is too long
    assert len(shorten_path(path, 20)) == 20
