"""The public API: the CLI's documents are the API's, strategies plug in through entry points."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import costsim
from costsim.cli import cli
from costsim.errors import ConfigError
from tests.conftest import EXAMPLES, ROOT

SCENARIO = ROOT / "scenarios" / "coding_agent.yaml"
AGENT = EXAMPLES / "anthropic_support_agent.yaml"
PLUGIN_PACKAGE = ROOT / "tests" / "data" / "strategy_package"


def test_the_readme_example_works_from_a_clean_interpreter() -> None:
    code = (
        "import costsim; c = costsim.compare('scenarios/coding_agent.yaml'); "
        "print(c.to_json()['variants'][0]['name'])"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "cache-5m"


def test_the_cli_writes_the_api_documents(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    runner = CliRunner()
    compared = runner.invoke(cli, ["compare", str(SCENARIO), "--format", "json"])
    assert compared.exit_code == 0, compared.output
    assert json.loads(compared.stdout)["scenarios"][0] == costsim.compare(SCENARIO).to_json()
    reported = runner.invoke(cli, ["report", str(AGENT), "--format", "json"])
    assert json.loads(reported.stdout) == costsim.report(AGENT).to_json()
    simulated = runner.invoke(cli, ["simulate", str(AGENT), "-s", "caching", "--format", "json"])
    assert json.loads(simulated.stdout) == costsim.simulate(AGENT, "caching").to_json()


def test_a_scenario_built_in_python(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    scenario = costsim.Scenario(
        name="support agent",
        cassettes=["cassettes/anthropic_support_agent.yaml"],
        variants={"cache": ["caching"], "cache-1h": [{"caching": {"ttl": "1h"}}]},
    )
    result = costsim.compare(scenario, variants=["cache"])
    assert [v.variant.name for v in result.variants] == ["cache"]
    document = result.to_json()
    assert document["scenario"] == "support agent"
    assert [v["name"] for v in document["variants"]] == ["cache"]
    with pytest.raises(ConfigError, match="no variant named 'cach'"):
        costsim.compare(scenario, variants=["cach"])


def test_results_render_in_every_format_they_have() -> None:
    traces = costsim.load(AGENT)
    report = costsim.report(traces, by="model")
    assert report.totals.prompt_tokens == 2042 + 2151 + sum(
        call.usage.prompt_total for call in traces[0].calls[2:] if call.usage
    )
    for fmt in report.formats():
        assert report.render(fmt).strip()
    simulation = costsim.simulate(traces, ["truncation", "caching"])
    assert simulation.saving == simulation.baseline.cost_usd - simulation.totals.cost_usd  # type: ignore[operator]
    with pytest.raises(ConfigError, match="has no 'pdf' format"):
        report.render("pdf")


def test_importing_costsim_is_lazy() -> None:
    code = "import sys, costsim; print('costsim.api' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "False"
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        costsim.nothing  # type: ignore[attr-defined]  # noqa: B018


def _with_plugin(
    *args: str, cwd: Path = ROOT, extra_path: Path = PLUGIN_PACKAGE
) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(
            filter(None, [str(extra_path), os.environ.get("PYTHONPATH")])
        ),
    }
    return subprocess.run(
        [sys.executable, "-m", "costsim", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


def test_a_strategy_from_an_installed_package(tmp_path: Path) -> None:
    """A team ships a strategy in its own package (an entry point in the group
    ``costsim.strategies``): it runs in ``simulate`` and in a scenario like a built-in."""
    simulated = _with_plugin(
        "simulate", str(AGENT), "-s", "trim_system:keep_chars=10", "--format", "json"
    )
    assert simulated.returncode == 0, simulated.stderr
    document = json.loads(simulated.stdout)
    assert document["variant"]["prompt_tokens"] < document["baseline"]["prompt_tokens"]
    shutil.copy(AGENT, tmp_path / "agent.yaml")
    (tmp_path / "scenario.yaml").write_text(
        "name: trimmed\ncassettes: [agent.yaml]\nvariants:\n  trim:\n    - trim_system: {keep_chars: 10}\n"
    )
    compared = _with_plugin("compare", str(tmp_path / "scenario.yaml"), "--format", "json")
    assert compared.returncode == 0, compared.stderr
    variant = json.loads(compared.stdout)["scenarios"][0]["variants"][0]
    assert variant["name"] == "trim" and variant["strategies"] == ["trim_system:keep_chars=10"]
    unknown = _with_plugin("simulate", str(AGENT), "-s", "trim_system")
    assert unknown.returncode == 0  # the same run without the package would not know it
    without = subprocess.run(
        [sys.executable, "-m", "costsim", "simulate", str(AGENT), "-s", "trim_system"],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert without.returncode == 2 and "'trim_system' is not a strategy" in without.stderr


def test_a_broken_strategy_package_is_named_not_fatal(tmp_path: Path) -> None:
    package = tmp_path / "broken_strategy"
    package.mkdir()
    (package / "__init__.py").write_text("raise ImportError('missing dependency: foo')\n")
    info = tmp_path / "broken_strategy-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-strategy\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        "[costsim.strategies]\nbroken = broken_strategy:Broken\n"
    )
    fine = _with_plugin("simulate", str(AGENT), "-s", "caching", extra_path=tmp_path)
    assert fine.returncode == 0, fine.stderr  # the others still load
    broken = _with_plugin("simulate", str(AGENT), "-s", "broken", extra_path=tmp_path)
    assert broken.returncode == 2
    assert "strategy 'broken' could not be loaded" in broken.stderr
    assert "missing dependency: foo" in broken.stderr


def test_strategies_as_a_scenario_writes_them_and_dates_as_dates() -> None:
    """A trial's ``simulate(traces, [{"truncation": {"max_chars": 10}}])`` ran truncation
    with its defaults, silently; a plain date for ``as_of`` was an AttributeError."""
    import datetime

    traces = costsim.load(str(EXAMPLES))
    text = costsim.simulate(traces, "truncation:max_chars=10")
    for form in ([{"truncation": {"max_chars": 10}}], {"truncation": {"max_chars": 10}}):
        assert (
            costsim.simulate(traces, form).saving
            == text.saving
            != (costsim.simulate(traces, "truncation").saving)
        )
    assert text.delta.value == -text.saving  # type: ignore[operator]
    assert text.delta.low is not None and text.delta.low <= text.delta.value  # type: ignore[operator]
    dated = costsim.simulate(traces, "caching", as_of=datetime.date(2025, 11, 15))
    timed = costsim.simulate(traces, "caching", as_of=datetime.datetime(2025, 11, 15))
    assert dated.totals.cost_usd == timed.totals.cost_usd
    for wrong in (["truncation", 5], [{"truncation": 5}], [{"truncation": {"max_char": 5}}]):
        with pytest.raises(ConfigError):
            costsim.simulate(traces, wrong)  # type: ignore[arg-type]
