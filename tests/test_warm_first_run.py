"""Steady state or first run: what a changed request finds of a cache the recording found warm.

tests/data/warm_then_single.yaml opens with a call that reads a 2,000-token prefix written
before the recording began. ``steady`` (the default) prices each run once a change ships: the
earlier sessions sent the changed requests too, so the changed prefix is warm at the same
place. ``first`` prices the first run after it ships: the cache holds what the recorded
requests wrote. Per million tokens, Sonnet 4.5: $3 input, $3.75 5m write, $0.30 read, $15 out;
Opus 4.1: $15, $18.75, $1.50, $75.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
from decimal import Decimal
from pathlib import Path

import pytest

from costsim.api.testing import TestMeter
from costsim.cache.rules import default_rules
from costsim.engine import Engine, Variant
from costsim.engine.warm import FIRST_RUN_COLD
from costsim.errors import ConfigError
from costsim.io.config import SettingsError, tool_table
from costsim.pricing.ledger import meter
from costsim.providers.normalise import load_trace
from tests.test_caching_auto_warm import CASSETTE, _realistic
from tests.test_hostile_input import run_cli


def _edited_first_call(tmp_path: Path, mode: str) -> tuple[Decimal, list[str]]:
    trace = load_trace(_realistic(tmp_path))
    first = trace.calls[0]
    system = (dataclasses.replace(first.system[0], text=first.system[0].text + " Be brief."),)
    sent = {trace.path: [dataclasses.replace(first, system=system), *trace.calls[1:]]}
    engine = Engine([trace], rules=default_rules().with_warm(mode))
    result = engine.run(Variant("as sent"), requests=sent)
    call = result.traces[0].calls[0]
    assert call.usage is not None
    price = meter(call.call, usage=call.usage).price
    assert price is not None and price.amount is not None
    return price.amount, [event.message for event in result.events if event.kind == "note"]


def test_steady_state_reads_the_edited_prefix_warm(tmp_path: Path) -> None:
    cost, notes = _edited_first_call(tmp_path, "steady")
    assert cost == Decimal("0.0014109")  # (20 x 3 + 2,003 x 0.30 + 50 x 15) / 1e6
    assert notes == []


def test_the_first_run_writes_the_edited_prefix_cold_and_says_so(tmp_path: Path) -> None:
    cost, notes = _edited_first_call(tmp_path, "first")
    assert cost == Decimal("0.00832125")  # (20 x 3 + 2,003 x 3.75 + 50 x 15) / 1e6
    assert notes == [FIRST_RUN_COLD]


def test_an_unknown_mode_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="steady or first, not 'cold'"):
        default_rules().with_warm("cold")


SCENARIO = """\
name: warm
cassettes: [warm_then_single.yaml]
{warm}variants:
  routed:
    - routing: {{tiers: {{light: claude-opus-4-1-20250805}}, default: light}}
"""
# every call routed to Opus 4.1: #2 writes its 1,200 tokens (20 x 15 + 1,200 x 18.75 + 50 x 75
# = $0.02655); #1 reads the 2,000-token prefix (20 x 15 + 2,000 x 1.50 + 50 x 75 = $0.00705)
STEADY = Decimal("0.00705") * 2 + Decimal("0.02655")  # #0 reads it warm in Opus's cache
FIRST = Decimal("0.04155") + Decimal("0.00705") + Decimal("0.02655")  # #0 writes it: 2,000 x 18.75


def _scenario(tmp_path: Path, warm: str) -> Path:
    shutil.copy(CASSETTE, tmp_path / CASSETTE.name)
    path = tmp_path / "warm.yaml"
    path.write_text(SCENARIO.format(warm=f"warm: {warm}\n" if warm else ""))
    return path


@pytest.mark.parametrize(
    ("in_file", "option", "mode", "cost"),
    [
        pytest.param("", (), "steady", STEADY, id="default"),
        pytest.param("first", (), "first", FIRST, id="scenario-first"),
        pytest.param("first", ("--warm", "steady"), "steady", STEADY, id="option-overrides"),
        pytest.param("", ("--warm", "first"), "first", FIRST, id="option-first"),
    ],
)
def test_compare_takes_the_mode_from_the_scenario_or_the_option(
    tmp_path: Path, in_file: str, option: tuple[str, ...], mode: str, cost: Decimal
) -> None:
    path = _scenario(tmp_path, in_file)
    result = run_cli("compare", path, "--no-cache", "--format", "json", *option)
    assert result.exit_code == 0, result.output
    (scenario,) = json.loads(result.stdout)["scenarios"]
    assert scenario["warm_starts"] == mode
    assert Decimal(scenario["variants"][0]["totals"]["cost_usd"]) == cost
    text = run_cli("compare", path, "--no-cache", *option).output
    assert ("first run after each change ships" in " ".join(text.split())) is (mode == "first")


def test_simulate_takes_the_option_too(tmp_path: Path) -> None:
    _scenario(tmp_path, "")
    cassette = tmp_path / CASSETTE.name
    strategy = "routing:default=light,tiers.light=claude-opus-4-1-20250805"
    for mode, cost in (("steady", STEADY), ("first", FIRST)):
        result = run_cli(
            "simulate", cassette, "-s", strategy, "--warm", mode, "--no-cache", "--format", "json"
        )
        assert result.exit_code == 0, result.output
        document = json.loads(result.stdout)
        assert document["warm_starts"] == mode
        assert Decimal(document["variant"]["cost_usd"]) == cost


def test_the_plugins_meter_takes_the_mode(tmp_path: Path) -> None:
    """``pytest --costsim-warm`` (or ``warm`` under ``[tool.costsim]``) reaches the meter of
    drifted calls: the code now sends #0 with a sentence added to its system prompt."""
    trace = load_trace(_realistic(tmp_path))
    first = trace.calls[0]
    system = (dataclasses.replace(first.system[0], text=first.system[0].text + " Be brief."),)
    sent = [dataclasses.replace(first, system=system), *trace.calls[1:]]
    for mode, cost in (("steady", "0.0014109"), ("first", "0.00832125")):
        metered = TestMeter(warm=mode).as_sent(list(trace.calls), sent)
        price = metered[0].price
        assert price is not None and price.amount == Decimal(cost), mode


def test_the_setting_is_checked_when_read(tmp_path: Path) -> None:
    project = tmp_path / "pyproject.toml"
    project.write_text('[tool.costsim]\nwarm = "first"\n')
    assert tool_table(project)["warm"] == "first"
    project.write_text('[tool.costsim]\nwarm = "cold"\n')
    with pytest.raises(SettingsError, match="warm must be steady or first"):
        tool_table(project)
