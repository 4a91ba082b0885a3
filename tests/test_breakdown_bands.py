"""Every simulated cost in a breakdown carries its p90 band: the band of its calls' costs.

``compare --by model`` used to print each variant's cost per model, agent or cassette with no
band, where the variant's own row carried one: a reader taking the saving per model from it
could not tell how sure it was. A cell's band is the sum of the band terms of the calls it
holds (as the variant's band is the sum over all its calls), so the cells of one column add
up to the variant's band; a cell none of whose calls was estimated is exact.
"""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from costsim.cli import cli
from tests.conftest import ROOT

SCENARIOS = ROOT / "scenarios"
STEP = Decimal("1e-8")
"""The precision a half-width is rounded up to."""


def _json(*args: str) -> dict[str, Any]:
    result = CliRunner().invoke(cli, ["compare", *args, "--format", "json", "--no-cache"])
    assert result.exit_code == 0, result.output
    document: dict[str, Any] = json.loads(result.stdout)
    return document


def _scenario(name: str, by: str, *extra: str) -> dict[str, Any]:
    document = _json(str(SCENARIOS / f"{name}.yaml"), "--by", by, *extra)
    scenario: dict[str, Any] = document["scenarios"][0]
    return scenario


def _reach(band: dict[str, Any]) -> tuple[Decimal, Decimal]:
    """How far below and above its cost a JSON band reaches."""
    cost = Decimal(band["cost_usd"])
    return cost - Decimal(band["cost_usd_low"]), Decimal(band["cost_usd_high"]) - cost


@pytest.mark.parametrize("by", ["model", "agent", "cassette", "provider"])
@pytest.mark.parametrize("name", ["orchestrator", "side_calls", "coding_agent"])
def test_the_cells_of_a_column_add_up_to_the_variants_band(name: str, by: str) -> None:
    scenario = _scenario(name, by)
    rows = scenario["breakdown"]["rows"]
    for variant in scenario["variants"]:
        cells = [row[variant["name"]] for row in rows.values() if row[variant["name"]]]
        above = sum((_reach(cell)[1] for cell in cells), Decimal(0))
        whole = _reach(variant["cost_band"])[1]
        # each cell is rounded up on its own: the sum is at least the whole, a step a cell more
        assert whole <= above <= whole + STEP * len(cells), (variant["name"], above, whole)
        assert (
            all(cell["cost_usd_exact"] for cell in cells) == variant["cost_band"]["cost_usd_exact"]
        )


def test_a_cell_the_variant_leaves_alone_is_exact_and_one_it_changes_is_banded() -> None:
    """The bundled examples by hand: caching changes only the Claude support agent's calls,
    so gpt-5-mini and gpt-4o-mini cost what they were billed, exactly; the Sonnet cell carries
    the whole variant's band (the main table's ±$0.000109); the routed calls to Haiku are
    estimated (a band narrower than a millionth of a dollar, not exact)."""
    scenario = _scenario("bundled_examples", "model")
    rows = scenario["breakdown"]["rows"]
    variants = {variant["name"]: variant for variant in scenario["variants"]}
    for model in ("gpt-5-mini", "gpt-4o-mini"):
        for column in ("baseline", "cache-5m", "cache-1h", "haiku-for-support"):
            cell = rows[model][column]
            assert cell["cost_usd_exact"] is True
            assert cell["cost_usd_low"] == cell["cost_usd"] == cell["cost_usd_high"]
            assert cell["cost_usd"] == rows[model]["baseline"]["cost_usd"]
    sonnet = rows["claude-sonnet-4-5"]["cache-5m"]
    assert not sonnet["cost_usd_exact"]
    assert _reach(sonnet) == _reach(variants["cache-5m"]["cost_band"])
    assert round(_reach(sonnet)[1], 6) == Decimal("0.000109")  # the table's figure
    haiku = rows["claude-haiku-4-5"]["haiku-for-support"]
    assert haiku["cost_usd_exact"] is False
    assert _reach(haiku)[1] < Decimal("0.000001")


def test_the_table_writes_each_band_beside_its_cost() -> None:
    result = CliRunner().invoke(
        cli,
        ["compare", str(SCENARIOS / "bundled_examples.yaml"), "--by", "model", "--no-cache"],
        env={"COLUMNS": "100"},
    )
    assert result.exit_code == 0, result.output
    table = result.stdout.split("By model (cost, ± its p90 band, per variant):", 1)[1]
    sonnet = next(line for line in table.splitlines() if line.startswith("claude-sonnet-4-5"))
    assert sonnet.split()[1:5] == ["$0.010736", "$0.010020", "±$0.000109", "$0.014853"]
    mini = next(line for line in table.splitlines() if line.startswith("gpt-5-mini"))
    assert "±" not in mini  # billed as recorded in every column
    assert max(map(len, result.stdout.splitlines())) <= 100


def test_the_parallel_and_cached_runs_give_the_same_bands(tmp_path: Path) -> None:
    """Each cassette's spreads are kept unrounded, so merged shares (a pool's batches, the
    cache's) add up to exactly what one pass gives."""
    scenario = str(SCENARIOS / "orchestrator.yaml")
    serial = CliRunner().invoke(
        cli, ["compare", scenario, "--by", "agent", "--format", "json", "--jobs", "1", "--no-cache"]
    )
    runs = []
    for _ in range(2):  # cold, then from the cache
        runs.append(
            CliRunner().invoke(
                cli,
                ["compare", scenario, "--by", "agent", "--format", "json", "--jobs", "2"],
                env={"COSTSIM_CACHE_DIR": str(tmp_path / "cache")},
            )
        )
    assert serial.exit_code == 0, serial.output
    assert [run.stdout for run in runs] == [serial.stdout, serial.stdout]


def test_the_html_page_bands_the_costliest_cassettes_and_models(tmp_path: Path) -> None:
    page = tmp_path / "page.html"
    scenario = str(SCENARIOS / "bundled_examples.yaml")
    result = CliRunner().invoke(
        cli, ["compare", scenario, "--no-cache", "--format", "html", "-o", str(page)]
    )
    assert result.exit_code == 0, result.output
    text = page.read_text()
    models = text.split("Cost per model", 1)[1].split("</table>", 1)[0]
    assert "$0.010020 ±$0.0001" in models  # Sonnet under cache-5m, the variant's band
    assert "$0.001305 ±" not in models  # gpt-5-mini: billed as recorded
    cassettes = text.split("Costliest cassettes", 1)[1].split("</table>", 1)[0]
    assert cassettes.count("±") >= 2


def test_a_lower_bound_cell_carries_the_band_of_its_priced_part(tmp_path: Path) -> None:
    """The review: a breakdown cell whose cost is a lower bound (a call of a model without a
    price) showed no band at all, though its priced part was simulated like any other."""
    text = (ROOT / "cassettes" / "anthropic_support_agent.yaml").read_text()
    starts = [i for i in range(len(text)) if text.startswith('body: \'{"model"', i)]
    second, third = starts[1], starts[2]  # the second call (the third errored: unbilled)
    renamed = (
        text[:second]
        + text[second:third].replace("claude-sonnet-4-5", "claude-unreleased")
        + text[third:]
    )
    (tmp_path / "support.yaml").write_text(renamed)
    (tmp_path / "s.yaml").write_text(
        "name: s\ncassettes: [support.yaml]\nvariants:\n  cache: [caching]\n"
    )
    scenario = _json(str(tmp_path / "s.yaml"), "--by", "cassette")["scenarios"][0]
    (row,) = scenario["breakdown"]["rows"].values()
    cell = row["cache"]
    assert cell["cost_usd"] is None and cell["unpriced_calls"] == 1
    low, priced, high = (Decimal(cell[f"priced_cost_usd{end}"]) for end in ("_low", "", "_high"))
    assert low < priced < high and cell["priced_cost_usd_exact"] is False
    result = CliRunner().invoke(
        cli,
        ["compare", str(tmp_path / "s.yaml"), "--by", "cassette", "--no-cache"],
        env={"COLUMNS": "100"},
    )
    line = next(x for x in result.stdout.splitlines() if "support.yaml " in x)
    assert "≥$0.00" in line and "* ±" in line  # its precision, and its band


def _html_cassettes(tmp_path: Path, cassette: str) -> str:
    """The cassette table of the HTML page of a caching variant of ``cassette``."""
    (tmp_path / "s.yaml").write_text(
        f"name: s\ncassettes: [{cassette}]\nvariants:\n  cache: [caching]\n"
    )
    page = tmp_path / "page.html"
    result = CliRunner().invoke(
        cli,
        ["compare", str(tmp_path / "s.yaml"), "--no-cache", "--format", "html", "-o", str(page)],
    )
    assert result.exit_code == 0, result.output
    return page.read_text().split("Costliest cassettes", 1)[1].split("</table>", 1)[0]


def test_the_html_page_says_a_cassette_cost_that_leaves_a_call_out_is_a_lower_bound(
    tmp_path: Path,
) -> None:
    """The HTML page's cassette table wrote the priced sum of a cassette holding a call
    costsim cannot meter (Gemini) as its whole cost, where the text table writes ≥…*."""
    from tests.test_hostile_input import interaction, write_yaml

    gemini = "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.0-flash"
    reply = {
        "candidates": [{"content": {"parts": [{"text": "hi"}]}}],
        "usageMetadata": {"promptTokenCount": 5, "candidatesTokenCount": 2},
    }
    write_yaml(
        tmp_path / "mixed.yaml",
        [interaction(f"{gemini}:generateContent", {"contents": []}, reply), interaction()],
    )
    cassettes = _html_cassettes(tmp_path, "mixed.yaml")
    assert "(1 not metered)" in cassettes and "≥$" in cassettes


def test_the_html_page_bands_the_recorded_cost_of_calls_it_estimated(tmp_path: Path) -> None:
    """The review: the HTML page's recorded-cost column carried no band, though a call
    recorded without usage is billed at an estimate there too (as the text table bands it)."""
    from tests.test_hostile_input import chat_stream, write_yaml

    write_yaml(tmp_path / "unasked.yaml", [chat_stream("Hello there")])
    cassettes = _html_cassettes(tmp_path, "unasked.yaml")
    row = cassettes.split("<tbody", 1)[1].split("</tr>", 1)[0]  # the table's, not the chart's
    assert row.count("/+$") == 2  # the recorded cost, and the variant's: -$a/+$b each
