"""A recording with calls that have no price: a variant that bills them as the recording does
has a known change (their unknown cost is the same on both sides); its share of the recorded
cost is not known, and a gate on that share says so instead of passing in silence."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest
from click.testing import CliRunner

from costsim.cli import cli
from costsim.model import Provenance
from costsim.pricing.ledger import Totals, UnpricedCall
from tests.conftest import EXAMPLES

UNKNOWN = "acme-tuned-support-v3"


def _unpriced(index: int, billed: tuple[int, ...], floor: str = "0") -> UnpricedCall:
    return UnpricedCall(
        Provenance(Path("a.yaml"), index), UNKNOWN, "no price", billed, Decimal(floor)
    )


def _totals(priced: str, *unpriced: UnpricedCall) -> Totals:
    totals = Totals(priced_cost=Decimal(priced))
    totals.unpriced.extend(unpriced)
    return totals


def test_the_change_is_known_only_when_the_unpriced_calls_are_billed_alike() -> None:
    before = _totals("1.00", _unpriced(0, (100, 0, 0, 0, 10, 0, 0)))
    alike = _totals("0.75", _unpriced(0, (100, 0, 0, 0, 10, 0, 0)))
    assert alike.change_from(before) == Decimal("-0.25")
    # the unpriced call read from cache in the variant: its unknown price moves the change
    cached = _totals("0.75", _unpriced(0, (20, 80, 0, 0, 10, 0, 0)))
    assert cached.change_from(before) is None
    # another call, or one more of them: not alike either
    assert _totals("0.75", _unpriced(1, (100, 0, 0, 0, 10, 0, 0))).change_from(before) is None
    assert _totals("0.75", *before.unpriced, *before.unpriced).change_from(before) is None
    # a priced part of the unpriced call that differs (a web search priced, say)
    assert (
        _totals("0.75", _unpriced(0, (100, 0, 0, 0, 10, 0, 0), "0.01")).change_from(before) is None
    )
    # priced on both sides: the plain difference; priced on one side only: unknown
    assert _totals("0.5").change_from(_totals("0.75")) == Decimal("-0.25")
    assert _totals("0.5").change_from(before) is None


@pytest.fixture
def partly_priced(tmp_path: Path) -> Path:
    """The bundled examples, and a copy of the streaming chat on a model without a price."""
    folder = tmp_path / "cassettes"
    folder.mkdir()
    for path in EXAMPLES.glob("*.yaml"):
        (folder / path.name).write_text(path.read_text())
    chat = (EXAMPLES / "openai_chat_streaming.yaml").read_text()
    assert "gpt-4o-mini" in chat
    (folder / "gateway.yaml").write_text(chat.replace("gpt-4o-mini", UNKNOWN))
    scenario = tmp_path / "s.yaml"
    scenario.write_text(
        f"name: partly priced\ncassettes: ['{folder}/*.yaml']\n"
        "pricing: {as_of: 2025-11-15}\n"
        "variants:\n  cache-1h: [{caching: {ttl: 1h}}]\n  cache-5m: [caching]\n"
        "budgets:\n  '*': {max_regression_pct: 10}\n"
    )
    return scenario


def test_compare_answers_with_the_known_change(partly_priced: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(cli, ["compare", str(partly_priced), "--no-cache"])
    text = " ".join(result.stdout.split())
    # the same figures as the fully priced examples (the gateway copy is billed alike)
    assert "Saves most: cache-5m, $0.000716 of ≥$0." in text
    assert "(its 1 call without a price billed as recorded)" in text
    assert (
        "unpriced: the recording's 1 call without a price, billed alike (its cost cancels" in text
    )
    # cache-1h adds +34.2% of the priced examples: at most that much of the whole, over 10%
    assert result.exit_code == 1
    assert "variant 'cache-1h': Δ cost is +$0.004117, up to +" in " ".join(result.stderr.split())
    document = json.loads(
        runner.invoke(cli, ["compare", str(partly_priced), "--no-cache", "--format", "json"]).stdout
    )["scenarios"][0]
    assert document["cheapest"] == {
        "variant": "cache-5m",
        "saving_usd": "0.00071580",
        "saving_pct": None,
    }
    cache_5m = document["variants"][1]
    assert Decimal(cache_5m["delta"]["cost_usd"]) == Decimal("-0.00071580")
    assert cache_5m["delta"]["cost_pct"] is None


def test_a_gate_that_cannot_be_checked_fails(tmp_path: Path, partly_priced: Path) -> None:
    """A variant that routes the unpriced call elsewhere changes what it costs: its change is
    unknown, and a limit on it is said not to be checked (exit 1), never passed in silence."""
    scenario = tmp_path / "route.yaml"
    scenario.write_text(
        partly_priced.read_text().replace(
            "variants:\n", f"variants:\n  route: ['routing:models.{UNKNOWN}=gpt-4o-mini']\n"
        )
    )
    result = CliRunner().invoke(cli, ["compare", str(scenario), "--no-cache"])
    assert result.exit_code == 1
    assert "variant 'route': Δ cost is unknown" in " ".join(result.stderr.split())


def test_an_unpriced_call_at_an_unknown_host_names_the_host(partly_priced: Path) -> None:
    folder = partly_priced.parent / "cassettes"
    gateway = folder / "gateway.yaml"
    gateway.write_text(gateway.read_text().replace("api.openai.com", "llm-gateway.acme.dev"))
    result = CliRunner().invoke(cli, ["report", str(gateway), "--no-cache"])
    assert (
        f"genai-prices has no price for openai model '{UNKNOWN}-2024-07-18' at llm-gateway.acme.dev, a host "
        "genai-prices does not know" in " ".join(result.stdout.split())
    )


def test_advise_caching_gives_placements_their_known_change(partly_priced: Path) -> None:
    folder = partly_priced.parent / "cassettes"
    result = CliRunner().invoke(cli, ["advise", "caching", str(folder), "--no-cache"])
    assert result.exit_code == 0, result.output
    text = " ".join(result.stdout.split())
    assert "Caching advice on 7 recorded calls (≥$0." in text and "*)." in text
    assert "Recommended: -s caching:ttl=5m: Δ cost -$0.000716" in text
    assert "static 5m ≥$0." in text and "unknown" not in text
    assert "* the priced part, a lower bound: 1 call without a price" in text


def test_a_rise_from_a_recording_that_cost_nothing_fails_the_gate() -> None:
    from costsim.analysis.comparison import VariantSummary
    from costsim.engine import Variant
    from costsim.scenario.budgets import _regression

    free = Totals(llm_calls=2, priced_cost=Decimal(0))
    paid = Totals(llm_calls=2, priced_cost=Decimal("0.01"))
    summary = VariantSummary(Variant("route"), paid, {}, [], baseline=free)
    (failure,) = _regression(summary, 10, Decimal(0))
    assert failure == (
        "variant 'route': Δ cost is +$0.010000 against a recording that cost $0, over any "
        "limit (+10%)"
    )
    assert _regression(VariantSummary(Variant("same"), free, {}, [], baseline=free), 10, None) == []


def test_compare_takes_include_and_exclude_as_every_walking_command(tmp_path: Path) -> None:
    """``compare --exclude GLOB`` narrows every scenario's cassettes (a trial met 'No such
    option' where the README promised the walk's globs); leaving none is said."""
    scenario = tmp_path / "s.yaml"
    scenario.write_text(f"name: s\ncassettes: ['{EXAMPLES}/*.yaml']\nvariants: {{c: [caching]}}\n")
    runner = CliRunner()
    every = runner.invoke(cli, ["compare", str(scenario), "--no-cache", "--format", "json"])
    narrowed = runner.invoke(
        cli,
        ["compare", str(scenario), "--no-cache", "--format", "json", "--exclude", "openai_*"],
    )
    calls = [
        json.loads(r.stdout)["scenarios"][0]["baseline"]["llm_calls"] for r in (every, narrowed)
    ]
    assert calls == [6, 3]  # the support agent's 3 calls are left
    none = runner.invoke(cli, ["compare", str(scenario), "--no-cache", "--include", "nothing*"])
    assert "--include / --exclude leave none of its 3 cassettes" in none.stderr
