"""What a stacked variant's leave-one-out marginals leave of its saving (the interaction)
carries a band, as every other saving does: hand-computed terms, and real runs."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

from click.testing import CliRunner

from costsim.analysis.comparison import compare_variants
from costsim.analysis.report import load_traces
from costsim.analysis.spread import Spread, interaction_band, marginal_band
from costsim.cli import cli
from costsim.engine import Engine, Variant, make_step
from tests.conftest import EXAMPLES, ROOT


def _even(text: str) -> Spread:
    return Spread.even(Decimal(text))


ONE, TWO = ("prompt", 1), ("prompt", 2)


def test_the_interaction_is_banded_by_each_term_s_weighted_movement() -> None:
    """Two steps: the interaction is the full delta minus both rests' deltas. Term one moves
    the deltas by 0.008 (full), 0.008 (without A) and 0.004 (without B): 0.008 - 0.008 -
    0.004 = -0.004; term two by 0.004, 0.001 and 0: 0.003. The band is 0.004 + 0.003."""
    full = [({ONE: _even("0.010"), TWO: _even("0.004")}, {ONE: _even("0.002")})]
    without_a = [({ONE: _even("0.011"), TWO: _even("0.001")}, {ONE: _even("0.003")})]
    without_b = [({ONE: _even("0.006")}, {ONE: _even("0.002")})]
    band = interaction_band(Decimal("0.2"), full, [without_a, without_b])
    assert (band.spread, band.estimated) == (_even("0.007"), True)
    # narrower than the marginals' bands added up (0.003 + 0.008): what the runs share cancels
    assert marginal_band(None, full, without_a).spread == _even("0.003")
    assert marginal_band(None, full, without_b).spread == _even("0.008")


def test_a_lopsided_term_keeps_its_sides_in_the_interaction() -> None:
    """Three steps, a term only the full run has (may lie 0.009 below, 0.0025 above): the
    interaction is twice the full delta minus the rests', so it moves 0.005 up and 0.018
    down."""
    hidden = ("hidden", 1)
    full = [({hidden: Spread(Decimal("0.009"), Decimal("0.0025"))}, {})]
    rests = [[({}, {})] for _ in range(3)]
    band = interaction_band(Decimal("0.1"), full, rests)
    assert band.spread == Spread(Decimal("0.018"), Decimal("0.005"))


def test_a_step_that_changes_nothing_leaves_an_exact_nothing() -> None:
    """A no-op step: the variant without it is the other step alone (the full run's delta),
    the variant without the other step changes nothing; the interaction is exactly 0."""
    traces, _ = load_traces([EXAMPLES / "anthropic_support_agent.yaml"])
    nothing = make_step("truncation", {"max_chars": 10**9})
    stack = Variant("stack", (nothing, make_step("caching", {"ttl": "1h"})))
    summary = compare_variants(Engine(traces), [stack]).variants[0]
    assert not summary.delta.exact
    band = summary.interaction_band
    assert band is not None
    assert (band.value, band.half, band.exact) == (Decimal(0), Decimal(0), True)


def test_every_format_gives_the_interaction_its_band(tmp_path: Path) -> None:
    scenario = ROOT / "scenarios" / "coding_agent.yaml"
    runner = CliRunner()
    data = json.loads(
        runner.invoke(cli, ["compare", str(scenario), "--no-cache", "--format", "json"]).stdout
    )
    stacked = [v for v in data["scenarios"][0]["variants"] if v["attribution"]]
    assert stacked
    for variant in stacked:
        band = variant["attribution_interaction_band"]
        assert band["saving_usd"] == variant["attribution_interaction"]
        low, high = Decimal(band["saving_usd_low"]), Decimal(band["saving_usd_high"])
        assert low < Decimal(band["saving_usd"]) < high and not band["saving_usd_exact"]
    text = " ".join(runner.invoke(cli, ["compare", str(scenario), "--no-cache"]).stdout.split())
    assert "interaction saves $0.560 (-$0.125/+$0.123)" in text
    page = tmp_path / "page.html"
    runner.invoke(
        cli, ["compare", str(scenario), "--no-cache", "--format", "html", "-o", str(page)]
    )
    html = page.read_text()
    waterfall = html[html.index("What each strategy adds to") :]
    row = waterfall[waterfall.index(">interaction<") :][:600]
    assert "to" in row and "exact" not in row
