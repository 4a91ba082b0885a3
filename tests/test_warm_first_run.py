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
from typing import Any

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
from tests.test_hostile_input import ANTHROPIC_RESPONSE, interaction, run_cli, write_yaml


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


URI = "https://api.anthropic.com/v1/messages"
SONNET = "claude-sonnet-4-5-20250929"
REVIEWER = "You review code line by line and explain every change you would make. " * 500


def _interaction(
    messages: list[dict[str, Any]], usage: dict[str, int], date: str, system: str = REVIEWER
) -> Any:
    request = {
        "model": SONNET,
        "max_tokens": 64,
        "system": [{"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}],
        "messages": messages,
    }
    split = {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0}
    counts = {**usage, "output_tokens": 10, "cache_creation": split}
    reply = {**ANTHROPIC_RESPONSE, "model": SONNET, "usage": counts}
    built = interaction(URI, request, reply)
    built["response"]["headers"]["date"] = [date]
    return built


def _split(tmp_path: Path) -> Path:
    """Two Sonnet calls reading a 7,000-token system prompt warm: "hi", then a long request."""
    read = {"cache_read_input_tokens": 7000, "cache_creation_input_tokens": 0}
    long = (
        "Please analyse the architecture of this large distributed system in depth, compare "
        "the trade-offs of each design decision and evaluate the consequences for scalability."
    )
    return write_yaml(
        tmp_path / "split.yaml",
        [
            _interaction(
                [{"role": "user", "content": "hi"}],
                {**read, "input_tokens": 5},
                "Tue, 04 Nov 2025 10:00:00 GMT",
            ),
            _interaction(
                [{"role": "user", "content": long}],
                {**read, "input_tokens": 40},
                "Tue, 04 Nov 2025 10:00:30 GMT",
            ),
        ],
    )


def _simulated(path: Path, strategy: str, mode: str) -> Decimal:
    result = run_cli(
        "simulate", path, "-s", strategy, "--warm", mode, "--no-cache", "--format", "json"
    )
    assert result.exit_code == 0, result.output
    return Decimal(json.loads(result.stdout)["variant"]["cost_usd"])


def test_routing_the_first_call_away_keeps_the_later_calls_warm(tmp_path: Path) -> None:
    """Two Sonnet calls read a 7,000-token system prompt warm before the recording began;
    complexity routing sends the first ("hi") to Haiku, the second stays. Steady state: the
    sessions before sent the second to Sonnet too, so both caches are warm (the moved entry
    used to replace the recorded one, the second call wrote 7,000 tokens cold, and the
    variant read +488% where it saves). Per million: Haiku 4.5 $1 in, $0.10 read, $5 out."""
    path = _split(tmp_path)
    strategy = "routing:complexity=true,tiers.light=claude-haiku-4-5,tiers.heavy=" + SONNET
    costs = {mode: _simulated(path, strategy, mode) for mode in ("steady", "first")}
    # #0 on Haiku reads 7,000 (5 x 1 + 7,000 x 0.10 + 10 x 5); #1 reads on Sonnet
    # (40 x 3 + 7,000 x 0.30 + 10 x 15)
    assert costs["steady"] == Decimal("0.000755") + Decimal("0.00237")
    # the first run: Haiku's cache is cold (5 + 7,000 x 1.25 + 50), Sonnet's recorded one warm
    assert costs["first"] == Decimal("0.008805") + Decimal("0.00237")


def test_the_first_run_reads_the_breakpoints_before_a_change(tmp_path: Path) -> None:
    """One call reads 22,000 tokens warm: the system prompt (its own breakpoint) and a tool
    loop up to a marked answer. Truncation cuts the tool result after the system prompt. The
    first run after it ships still finds the system prompt's entry, which the sessions before
    wrote on their way to the deeper one (only the deepest was kept, and the unchanged system
    prompt was written cold)."""
    listing = "\n".join(
        f"line {i}: def function_{i}(x): return x * {i} + compute_something_else(x, {i})"
        for i in range(600)
    )
    messages = [
        {"role": "user", "content": "Read main.py and summarise it."},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "read", "input": {}}],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "t1", "content": listing}],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "900 functions.", "cache_control": {"type": "ephemeral"}}
            ],
        },
        {"role": "user", "content": "Now list the ten most important ones."},
    ]
    usage = {"cache_read_input_tokens": 22000, "cache_creation_input_tokens": 0, "input_tokens": 20}
    path = write_yaml(
        tmp_path / "loop.yaml",
        [_interaction(messages, usage, "Tue, 04 Nov 2025 10:00:00 GMT", REVIEWER[:14_000])],
    )
    totals = {}
    for mode in ("steady", "first"):
        result = run_cli(
            "simulate",
            path,
            "-s",
            "truncation:max_chars=2000",
            "--warm",
            mode,
            "--no-cache",
            "--format",
            "json",
        )
        assert result.exit_code == 0, result.output
        totals[mode] = json.loads(result.stdout)["variant"]
    system = totals["first"]["cache_read_tokens"]
    assert 2000 < system < 4000  # the system prompt's 14,000 characters, about 2,800 tokens
    assert totals["first"]["cache_write_5m_tokens"] > 0  # what truncation changed: cold
    assert totals["steady"]["cache_write_5m_tokens"] == 0  # steady: all of it warm


def test_a_tier_naming_the_recorded_model_by_its_alias_routes_nothing(tmp_path: Path) -> None:
    """``tiers.heavy=claude-sonnet-4-5`` for calls recorded as ``claude-sonnet-4-5-20250929``:
    the same model (one price, one cache), so the long call stays as recorded; it used to be
    "routed" to it and, in a first run, write its 7,000 warm tokens cold (+$0.0241)."""
    path = _split(tmp_path)
    strategy = "routing:complexity=true,tiers.light=claude-haiku-4-5,tiers.heavy=claude-sonnet-4-5"
    assert _simulated(path, strategy, "first") == Decimal("0.008805") + Decimal("0.00237")
    result = run_cli("simulate", path, "-s", strategy, "--no-cache", "--format", "json")
    changes = [e["message"] for e in json.loads(result.stdout)["events"] if e["kind"] == "change"]
    assert len(changes) == 1 and "claude-haiku-4-5" in changes[0]


def test_the_project_setting_is_the_default_below_the_scenario_and_the_option(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``[tool.costsim] warm = "first"``: compare and simulate run a first run where neither
    the option nor the scenario says otherwise; a recalled output never crosses modes."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COSTSIM_CACHE_DIR", str(tmp_path / "cache"))
    path = _scenario(tmp_path, "")
    (tmp_path / "pyproject.toml").write_text('[tool.costsim]\nwarm = "first"\n')

    def compared(*option: str) -> tuple[str, Decimal]:
        result = run_cli("compare", path, "--format", "json", *option)
        assert result.exit_code == 0, result.output
        (scenario,) = json.loads(result.stdout)["scenarios"]
        return scenario["warm_starts"], Decimal(scenario["variants"][0]["totals"]["cost_usd"])

    assert compared() == ("first", FIRST)
    assert compared("--warm", "steady") == ("steady", STEADY)
    path.write_text(SCENARIO.format(warm="warm: steady\n"))
    assert compared() == ("steady", STEADY)
    (tmp_path / "pyproject.toml").write_text('[tool.costsim]\nwarm = "steady"\n')
    path.write_text(SCENARIO.format(warm=""))
    assert compared() == ("steady", STEADY)  # recalled under its own key, not the first run's
    (tmp_path / "pyproject.toml").write_text('[tool.costsim]\nwarm = "first"\n')
    assert compared() == ("first", FIRST)
    strategy = "routing:default=light,tiers.light=claude-opus-4-1-20250805"
    simulated = run_cli("simulate", tmp_path / CASSETTE.name, "-s", strategy, "--format", "json")
    assert json.loads(simulated.stdout)["warm_starts"] == "first"


def test_the_html_page_names_a_first_run(tmp_path: Path) -> None:
    path = _scenario(tmp_path, "first")
    for mode, said in (("first", True), ("steady", False)):
        page = tmp_path / f"{mode}.html"
        result = run_cli(
            "compare", path, "--warm", mode, "--no-cache", "--format", "html", "-o", page
        )
        assert result.exit_code == 0, result.output
        assert ("first run after each change ships" in page.read_text()) is said
