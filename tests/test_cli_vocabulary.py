"""One vocabulary: the strategy syntax that is printed can be pasted back (CLI, plugin,
scenario files); percentages with or without %, never negative; one --by vocabulary;
discovery (strategies, baselines); folders walked as ruff and pytest walk them; progress
on stderr only when it helps; python -m costsim."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import costsim
from costsim import api
from costsim.api.testing import TestCost, parse_strategies, save_baseline
from costsim.cli import _common, _progress, cli
from costsim.engine import make_step, parse_step, parse_variant, parse_variants
from costsim.errors import ConfigError
from tests.conftest import EXAMPLES, ROOT

pytestmark = pytest.mark.usefixtures("columns_100")

SCENARIO = ROOT / "tests" / "data" / "examples_scenario.yaml"


def _run(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args))


# --- the strategy syntax ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "caching",
        "caching:ttl=1h",
        "caching:placement=tools+system,rolling=2,ttl=1h",
        "routing:agents.support=claude-haiku-4-5",
        "routing:default=light,tiers.heavy=claude-opus-4-5,tiers.light=claude-haiku-4-5",
        "batching:tools=browser_*",
        "selective_tools:categories.web=fetch_*+search,mode=oracle",
        'lean_context:patterns="summar(y|ise)"+"\\bextract\\b"',
        'expectations:ref_patterns="\\[ref=([^\\]\\s]+)\\]"',
        "expectations:default.console_levels=error,default.include=console",
        "compaction:summary_model=null",
        "thinking_budget:budget=2048",
    ],
)
def test_printed_steps_parse_back_to_the_same_step(text: str) -> None:
    step = parse_step(text)
    assert parse_step(step.describe()) == step


def test_a_stack_prints_as_it_is_read() -> None:
    variant = parse_variant("truncation:max_chars=9000 & caching:ttl=1h")
    assert variant.describe() == "truncation:max_chars=9000 & caching:ttl=1h"
    assert parse_variant(variant.describe()).steps == variant.steps


def test_plugin_and_cli_read_the_same_syntax() -> None:
    # the plugin's --costsim-strategies: comma-separated variants, options continue an entry
    variants = parse_strategies("caching:ttl=1h,rolling=2, truncation & caching")
    assert [v.name for v in variants] == ["caching:ttl=1h,rolling=2", "truncation & caching"]
    assert variants[1].steps == parse_variant("truncation&caching").steps
    assert parse_variants("routing:default=claude-haiku-4-5&caching")[0].describe() == (
        "routing:default=claude-haiku-4-5 & caching"
    )
    # simulate -s takes one stack, or the same stack as repeated -s
    stacked = costsim.simulate(EXAMPLES, "truncation & caching")
    repeated = costsim.simulate(EXAMPLES, ["truncation", "caching"])
    assert stacked.totals.cost_usd == repeated.totals.cost_usd
    assert stacked.data.variants[0].variant.name == "truncation & caching"


def test_labels_printed_by_compare_paste_back_into_simulate() -> None:
    document = json.loads(_run("compare", str(SCENARIO), "--format", "json").stdout)
    for variant in document["scenarios"][0]["variants"]:
        again = _run("simulate", str(EXAMPLES), "-s", variant["label"], "--format", "json")
        assert again.exit_code == 0, again.output
        assert json.loads(again.stdout)["strategies"] == variant["strategies"]


def test_syntax_errors_are_sentences() -> None:
    with pytest.raises(ConfigError, match=r"'cachng' is not a strategy\. Did you mean 'caching'"):
        parse_step("cachng:ttl=1h")
    with pytest.raises(ConfigError, match=r"ttl='2h': expected one of '5m' or '1h'"):
        parse_step("caching:ttl=2h")
    with pytest.raises(ConfigError, match="unknown parameter \\(did you mean 'rolling'\\?\\)"):
        parse_step("caching:roling=2")
    with pytest.raises(ConfigError, match="is not key=value"):
        parse_step("caching:ttl")
    # bounds in words; Anthropic accepts at most 4 breakpoints a request
    with pytest.raises(ConfigError, match="max_breakpoints='9': must be 4 or less "):
        parse_step("caching:max_breakpoints=9")
    with pytest.raises(ConfigError, match="max_chars='-5': must be 1 or more "):
        parse_step("truncation:max_chars=-5")
    # a mapping written inline, as the strategies list shows it: how to write it on a line
    with pytest.raises(ConfigError, match=r"'tiers' .* holds keys: write each as tiers\.KEY="):
        parse_step("routing:tiers={light: gpt-4o-mini}")
    # an empty mapping is written {} in labels, and reads back
    empty = make_step("expectations", {"tools": {}})
    assert parse_step(empty.describe()) == empty
    result = _run("simulate", str(EXAMPLES), "-s", "caching,truncation")
    assert result.exit_code == 2 and "names 2 variants" in result.stderr


# --- percentages and --by ---------------------------------------------------------------------


@pytest.mark.parametrize("value", ["1", "1%", "1.0 %"])
def test_fail_over_takes_percent_with_or_without_sign(value: str) -> None:
    result = _run("compare", str(SCENARIO), "--fail-over", value)
    assert result.exit_code == 1, result.output
    assert "over the limit of +1%" in result.stderr


@pytest.mark.parametrize("value", ["-50", "-5%", "lots"])
def test_fail_over_refuses_negative_or_junk(value: str) -> None:
    result = _run("compare", str(SCENARIO), "--fail-over", value)
    assert result.exit_code == 2
    assert "a threshold is 0% or more" in result.stderr or "is not a percentage" in result.stderr


def test_baseline_tolerances_take_percent_with_or_without_sign(tmp_path: Path) -> None:
    _save(tmp_path)
    for fail in ("cost:5", "cost:5%"):
        result = _run("baseline", "compare", "main", "pr", "--dir", str(tmp_path), "--fail", fail)
        assert result.exit_code == 1 and "over the tolerance of 5%" in result.stdout
    result = _run("baseline", "compare", "main", "pr", "--dir", str(tmp_path), "--fail", "cost:-5")
    assert result.exit_code == 2 and "a tolerance is 0% or more" in result.stderr


def test_one_by_vocabulary() -> None:
    assert _common.FORMATS == api.FORMATS  # --format offers what the registry renders
    assert _common.REPORT_GROUPINGS == api.REPORT_GROUPINGS
    assert _common.BREAKDOWNS == api.BREAKDOWN_KEYS
    assert set(api.REPORT_GROUPINGS) < set(api.BREAKDOWN_KEYS)
    for by in api.BREAKDOWN_KEYS:
        result = _run("compare", str(SCENARIO), "--by", by)
        assert result.exit_code == 0, result.output
        assert f"By {by} (" in result.stdout


# --- discovery --------------------------------------------------------------------------------


def test_strategies_lists_every_registered_strategy() -> None:
    result = _run("strategies")
    assert result.exit_code == 0
    for name in ("batching", "caching", "compaction", "routing", "truncation", "thinking_budget"):
        assert f"\n{name} " in result.stdout
    detail = _run("strategies", "truncation")
    assert "max_chars (integer) = 8000" in detail.stdout
    assert "Tool results longer than this many characters are cut." in detail.stdout
    unknown = _run("strategies", "cachng")
    assert unknown.exit_code == 2 and "Did you mean 'caching'?" in unknown.stderr
    assert re.search(r"costsim\s+strategies\s+lists", _run("simulate", "--help").stdout)


def _save(folder: Path) -> None:
    cheap = TestCost(calls=1, prompt_tokens=100, priced_cost_usd=Decimal("0.010"))
    dear = TestCost(calls=1, prompt_tokens=150, priced_cost_usd=Decimal("0.015"))
    save_baseline(folder / "main.json", {"t::a": cheap, "t::gone": cheap})
    save_baseline(folder / "pr.json", {"t::a": dear, "t::new": cheap})


def test_baselines_by_name_as_the_plugin_saves_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "pyproject.toml").write_text("")
    _save(tmp_path / ".costsim")
    (tmp_path / "src").mkdir()
    monkeypatch.chdir(tmp_path / "src")  # found from below, as pytest finds its root
    listing = _run("baseline", "list")
    assert listing.exit_code == 0
    assert listing.stdout.startswith("2 baselines in ../.costsim.")
    assert "../.costsim/main.json" in listing.stdout
    result = _run("baseline", "compare", "main", "pr")
    assert result.exit_code == 1
    assert result.stdout.startswith("pr vs main: 1 regression beyond tolerance (cost:5%)")
    assert "Regressions (1):" in result.stdout and "Gone tests (not in pr) (1):" in result.stdout
    better = _run("baseline", "compare", "pr", "main")
    assert better.exit_code == 0 and "Improvements (1):\n  t::a: cost $0.015000 -> $0.010000" in (
        better.stdout
    )
    missing = _run("baseline", "compare", "main", "nope")
    assert missing.exit_code == 2
    assert "no baseline named 'nope' (saved: main, pr)" in missing.stderr


# --- walking folders --------------------------------------------------------------------------


def _tree(root: Path) -> None:
    (root / "tests" / "cassettes").mkdir(parents=True)
    shutil.copy(EXAMPLES / "openai_chat_streaming.yaml", root / "tests" / "cassettes" / "a.yaml")
    shutil.copy(EXAMPLES / "anthropic_support_agent.yaml", root / "tests" / "legacy.yaml")
    for junk in (".venv/lib/python3.11/site-packages/pkg", "venv2", "node_modules/x", ".git"):
        (root / junk).mkdir(parents=True)
        (root / junk / "data.json").write_text("{not a cassette")
    (root / "venv2" / "pyvenv.cfg").write_text("home = /usr\n")


def test_walk_skips_hidden_folders_and_virtualenvs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _tree(tmp_path)
    monkeypatch.chdir(tmp_path)
    result = _run("report", ".")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("4 LLM calls in 2 cassettes")


def test_include_and_exclude_globs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _tree(tmp_path)
    monkeypatch.chdir(tmp_path)
    only = _run("cassettes", "list", ".", "--include", "cassettes/*", "--format", "json")
    assert [c["path"] for c in json.loads(only.stdout)["cassettes"]] == ["tests/cassettes/a.yaml"]
    skip = _run("cassettes", "list", ".", "--exclude", "legacy.yaml", "--format", "json")
    assert [c["path"] for c in json.loads(skip.stdout)["cassettes"]] == ["tests/cassettes/a.yaml"]
    folder = _run("cassettes", "list", ".", "--exclude", "cassettes", "--format", "json")
    assert [c["path"] for c in json.loads(folder.stdout)["cassettes"]] == ["tests/legacy.yaml"]


def test_a_folder_without_cassettes_is_a_warning_not_a_zero_total(tmp_path: Path) -> None:
    result = _run("report", str(tmp_path))
    assert result.exit_code == 0
    assert (
        result.stderr
        == f"warning: {tmp_path}: no cassette files (*.yaml, *.yml, *.json) found here\n"
    )
    assert result.stdout == "No cassettes: nothing to report.\n"
    assert "TOTAL" not in result.stdout and "$0" not in result.stdout
    quiet = _run("report", str(tmp_path), "-q")
    assert quiet.stderr == ""
    document = json.loads(_run("report", str(tmp_path), "--format", "json").stdout)
    assert document["warnings"] == [
        f"{tmp_path}: no cassette files (*.yaml, *.yml, *.json) found here"
    ]


@pytest.mark.parametrize(
    ("command", "says"),
    [
        (("advise", "caching"), "No LLM calls: nothing to advise on.\n"),
        (("check-cache",), "No calls to compare: nothing to check.\n"),
        (("calibrate",), "No usable calls: nothing to calibrate on.\n"),
    ],
)
def test_nothing_to_work_on_is_said_not_drawn_as_zeros(
    tmp_path: Path, command: tuple[str, ...], says: str
) -> None:
    """Not "Recommended: keep the caching as recorded" nor "0 of 0 calls matched (0.0%)"."""
    result = _run(*command, str(tmp_path), "--no-cache")
    assert result.exit_code == 0
    assert result.stdout == says and "no cassette files" in result.stderr


# --- what the table says ----------------------------------------------------------------------


def test_verbose_lists_every_event_with_file_and_interaction() -> None:
    short = _run("compare", str(SCENARIO), "--variant", "cache-1h")
    assert "and 3 more (use -v)" in short.stdout
    assert "change (caching)" not in short.stdout
    full = _run("compare", str(SCENARIO), "--variant", "cache-1h", "-v")
    assert "(use -v)" not in full.stdout
    for index in (0, 1, 2):
        assert f"change (caching) cassettes/anthropic_support_agent.yaml#{index}: added" in (
            full.stdout
        )


def test_answer_line_and_wide_columns() -> None:
    result = _run("simulate", str(EXAMPLES), "-s", "routing:default=claude-haiku-4-5")
    lines = result.stdout.splitlines()
    assert lines[0].startswith("routing:default=claude-haiku-4-5 saves $")  # one variant
    assert "write 5m" not in result.stdout
    wide = _run("simulate", str(EXAMPLES), "--wide")
    header = next(line for line in wide.stdout.splitlines() if line.startswith("variant"))
    for column in ("uncached", "cache read", "write 5m", "write 1h", "output", "thinking"):
        assert column in header


def test_unpriced_variant_says_why(tmp_path: Path) -> None:
    result = _run("simulate", str(EXAMPLES), "-s", "routing:default=gpt-9")
    assert result.exit_code == 0
    answer = " ".join(result.stdout.split("\n\n")[0].split())
    assert answer.startswith(
        "No answer: routing:default=gpt-9 leaves 3 of 6 calls unpriced (see below), so its cost "
        "is only known to be at least $"
    )
    assert "genai-prices has no price for openai model 'gpt-9' (3 calls)" in result.stdout
    row = next(line for line in result.stdout.splitlines() if line.startswith("routing:"))
    cost, delta, pct, band = row.split()[4:8]
    assert cost.startswith("≥$") and cost.endswith("*")  # the priced part, never "unknown"
    assert (delta, pct, band) == ("-", "-", "-")  # no change known: no range around one either


# --- progress ---------------------------------------------------------------------------------


class _Terminal:
    def __init__(self) -> None:
        self.text = ""

    def isatty(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self.text += text
        return len(text)

    def flush(self) -> None:
        pass


def test_progress_only_on_a_terminal_after_a_second(monkeypatch: pytest.MonkeyPatch) -> None:
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    clock = iter([0.0, 0.2, 5.0, 5.1, 5.2, 5.3, 5.4])
    monkeypatch.setattr(_progress.time, "monotonic", lambda: next(clock))
    bar = _progress.ProgressBar(enabled=True)
    bar("loading", 1, 3)  # 0.2 s in: nothing yet
    assert terminal.text == ""
    bar("loading", 2, 3)
    bar("loading", 3, 3)
    bar.close()
    assert "loading" in terminal.text and "100%" in terminal.text
    quiet = _progress.ProgressBar(enabled=False)
    quiet("loading", 1, 1)
    assert quiet.bar is None


def test_no_progress_when_stderr_is_not_a_terminal() -> None:
    result = _run("report", str(EXAMPLES))
    assert result.stderr == ""


def test_python_dash_m_costsim_is_the_costsim_command() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "costsim", "strategies", "--format", "json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["kind"] == "costsim.strategies"


@pytest.mark.parametrize("text", ["truncation & & caching", "caching &", "& caching"])
def test_an_empty_step_in_a_stack_is_refused(text: str) -> None:
    from costsim.errors import ConfigError
    from costsim.strategies.syntax import parse_variant

    with pytest.raises(ConfigError, match="an empty step in"):
        parse_variant(text)
    assert _run("simulate", "cassettes", "-s", text).exit_code == 2


def test_a_saved_calibration_beside_the_baselines_is_not_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The README suggests .costsim/calibration.json; baseline list and the names offered
    leave it out, while a damaged baseline there is still an error that names it."""
    (tmp_path / "pyproject.toml").write_text("")
    _save(tmp_path / ".costsim")
    monkeypatch.chdir(tmp_path)
    saved = _run("calibrate", str(ROOT / "cassettes"), "--save", ".costsim/calibration.json")
    assert saved.exit_code == 0
    listing = _run("baseline", "list")
    assert listing.exit_code == 0 and listing.stdout.startswith("2 baselines in .costsim.")
    missing = _run("baseline", "compare", "main", "nonexistent")
    assert "(saved: main, pr)" in missing.stderr
    (tmp_path / ".costsim" / "broken.json").write_text("{")
    assert "broken.json: not valid JSON" in _run("baseline", "list").stderr


def test_one_warm_vocabulary() -> None:
    """``steady`` / ``first`` are written where each layer can read them (the CLI and the
    plugin import no engine; the project file is checked below it): the same words in all."""
    import typing

    from costsim.cache.rules import WARM_STARTS
    from costsim.io.config import _CHECKS
    from costsim.scenario.model import Scenario

    modes = set(WARM_STARTS)
    assert modes == {"steady", "first"}
    assert set(_common.warm_option(lambda: None).__click_params__[0].type.choices) == modes
    from costsim.plugin.hooks import pytest_addoption

    options: dict[str, dict[str, Any]] = {}

    class Recorder:  # what pytest_addoption declares, recorded
        def getgroup(self, *_: object) -> Recorder:
            return self

        def addoption(self, name: str, **attrs: Any) -> None:
            options[name] = attrs

        def addini(self, *_: object, **__: object) -> None:
            pass

    pytest_addoption(Recorder())  # type: ignore[arg-type]
    assert set(options["--costsim-warm"]["choices"]) == modes
    (literal, _none) = typing.get_args(Scenario.model_fields["warm"].annotation)
    assert set(typing.get_args(literal)) == modes
    for name in ("comparison", "advice"):
        schema = json.loads((ROOT / f"src/costsim/schemas/{name}.schema.json").read_text())
        assert set(schema["properties"]["warm_starts"]["enum"]) == modes
    for value in ("steady", "first", "cold", 1):  # the project file takes each, and no other
        assert (_CHECKS["warm"](value) == []) is (value in modes), value
