"""``pytest --costsim`` through pytester: metering, budgets, baselines, xdist, inertness."""

from __future__ import annotations

import json
import shutil
from decimal import Decimal
from importlib import resources
from pathlib import Path

import jsonschema
import pytest
import requests  # noqa: F401  (imported here so pytester's in-process runs share one copy)
import vcr  # noqa: F401
import yaml
from click.testing import CliRunner

from costsim.analysis.bands import variant_bands
from costsim.cli import cli as main_cli
from costsim.engine import Engine, Variant, parse_step
from costsim.metering.meter import Meter
from costsim.pricing.ledger import Totals
from costsim.providers.normalise import load_trace
from tests.conftest import EXAMPLES, REPLAY, said

pytest_plugins = ["pytester"]


# The example cassette's first two calls: prompts 2,042 + 2,151, outputs 58 + 31.
TWO_CALLS_PROMPT = 2042 + 2151


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    shutil.copy(EXAMPLES / "anthropic_support_agent.yaml", pytester.path / "agent.yaml")
    return pytester


def _report(pytester: pytest.Pytester, name: str = "out.json") -> dict[str, object]:
    """The JSON report the run wrote, checked against the schema costsim ships for it."""
    document: dict[str, object] = json.loads((pytester.path / name).read_text())
    schema = json.loads((resources.files("costsim") / "schemas" / "pytest.schema.json").read_text())
    jsonschema.validate(document, schema)
    return document


def test_replayed_calls_appear_with_their_tokens(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_agent=REPLAY + "\ndef test_two():\n    _replay(2)\n\ndef test_none():\n    pass\n"
    )
    result = project.runpytest("--costsim", "--costsim-report", "out.json")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(
        ["*costsim: LLM calls replayed*", "*test_agent.py::test_two*2*4,193*"]
    )
    tests = _report(project)["tests"]
    assert isinstance(tests, dict)
    assert tests["test_agent.py::test_two"]["prompt_tokens"] == TWO_CALLS_PROMPT
    assert tests["test_agent.py::test_two"]["output_tokens"] == 58 + 31


def test_a_first_run_says_so(project: pytest.Pytester) -> None:
    """``--costsim-warm first`` (or ``warm = "first"`` in ``[tool.costsim]``) changes what
    drifted calls and what-if columns cost: the summary and the report file say it."""
    project.makepyfile(test_agent=REPLAY + "\ndef test_two():\n    _replay(2)\n")
    result = project.runpytest("--costsim", "--costsim-warm", "first", "--costsim-report", "o.json")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*warm starts: the first run after each change ships*"])
    notes = _report(project, "o.json")["notes"]
    assert isinstance(notes, list) and any("first run" in note for note in notes)
    project.makepyprojecttoml('[tool.costsim]\nwarm = "first"\n')
    again = project.runpytest("--costsim")
    again.stdout.fnmatch_lines(["*warm starts: the first run after each change ships*"])
    bad = project.runpytest("--costsim", "--costsim-warm", "cold")
    assert bad.ret == pytest.ExitCode.USAGE_ERROR


def test_budget_exceeded_fails_the_run_with_the_message(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_agent=REPLAY
        + "\nimport pytest\n\n@pytest.mark.costsim_budget(prompt_tokens=1000)\ndef test_two():\n    _replay(2)\n"
    )
    result = project.runpytest("--costsim")
    result.assert_outcomes(passed=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        ["*test_agent.py::test_two: prompt_tokens 4,193 over the budget of 1,000*"]
    )


def test_a_baseline_that_cannot_be_written_keeps_the_other_failures(
    project: pytest.Pytester,
) -> None:
    """.costsim is a file here (as a read-only project refuses the folder): saving fails with
    one sentence, the budget failure still stands, and the report is still written."""
    project.makepyfile(
        test_agent=REPLAY
        + "\nimport pytest\n\n@pytest.mark.costsim_budget(prompt_tokens=1000)\ndef test_two():\n    _replay(2)\n"
    )
    (project.path / ".costsim").write_text("not a folder\n")
    result = project.runpytest("--costsim", "--costsim-save", "main", "--costsim-report", "r.json")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    text = " ".join(result.stdout.str().split())
    assert "prompt_tokens 4,193 over the budget of 1,000" in text
    assert "main.json: cannot be written (Not a directory)" in text and "internal error" not in text
    assert (project.path / "r.json").is_file()


def test_pattern_budget_from_pyproject(project: pytest.Pytester) -> None:
    project.makepyprojecttoml(
        "[tool.pytest.ini_options]\ncostsim = true\n"
        '[tool.costsim]\nbudgets = [{pattern = "*test_two", output_tokens = 50}]\n'
    )
    project.makepyfile(test_agent=REPLAY + "\ndef test_two():\n    _replay(2)\n")
    result = project.runpytest()
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*test_two: output_tokens 89 over the budget of 50*"])


def test_a_budget_pattern_that_matches_no_test_is_said(project: pytest.Pytester) -> None:
    """A pattern written as a function name ('test_two*') matches no test id: the gate
    checks nothing, and the summary says so with an id to match against."""
    project.makepyprojecttoml(
        "[tool.pytest.ini_options]\ncostsim = true\n"
        '[tool.costsim]\nbudgets = [{pattern = "test_two*", output_tokens = 50},'
        ' {pattern = "*::test_two", calls = 5}]\n'
    )
    project.makepyfile(test_agent=REPLAY + "\ndef test_two():\n    _replay(2)\n")
    result = project.runpytest()
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(
        ["budget pattern 'test_two*' matches no test of this run, so it checks*"]
    )
    assert "'*::test_two' matches no test" not in result.stdout.str()
    # a pattern for tests -k deselected is right, only not in use this run: not said
    deselected = project.runpytest("-k", "not test_two")
    assert "'*::test_two' matches no test" not in deselected.stdout.str()
    assert "'test_two*' matches no test" in " ".join(deselected.stdout.str().split())


def test_budgets_for_files_a_run_did_not_collect_are_not_said(project: pytest.Pytester) -> None:
    """A trial ran one test file of its suite: every budget pattern for its other files was
    warned of as matching no test. A pattern for a file that exists but was not collected is
    only not in use this run; one for a file that does not exist still checks nothing."""
    project.makepyprojecttoml(
        "[tool.pytest.ini_options]\ncostsim = true\n"
        '[tool.costsim]\nbudgets = [{pattern = "test_agent.py::*", calls = 5},'
        ' {pattern = "test_other.py::test_*", calls = 5},'
        ' {pattern = "test_gone.py::*", calls = 5}]\n'
    )
    project.makepyfile(
        test_agent=REPLAY + "\ndef test_two():\n    _replay(2)\n",
        test_other="def test_plain():\n    pass\n",
    )
    result = project.runpytest("test_agent.py")
    result.assert_outcomes(passed=1)
    text = " ".join(result.stdout.str().split())
    assert "'test_other.py::test_*' matches no test" not in text
    assert "'test_agent.py::*' matches no test" not in text
    assert "budget pattern 'test_gone.py::*' matches no test of this run" in text


@pytest.mark.parametrize(("key", "hint"), [("budget", "did you mean 'budgets'?"),
                                           ("drfit", "did you mean 'drift'?"),
                                           ("colour", "known: budgets, cache")])  # fmt: skip
def test_an_unknown_setting_is_a_usage_error(project: pytest.Pytester, key: str, hint: str) -> None:
    """A misspelt key used to be ignored: the budget it held never ran, and the run passed."""
    project.makepyprojecttoml(f'[tool.costsim]\n{key} = "x"\n')
    project.makepyfile(test_agent=REPLAY + "\ndef test_two():\n    _replay(2)\n")
    result = project.runpytest("--costsim")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    output = " ".join((result.stdout.str() + result.stderr.str()).split())
    assert f"[tool.costsim] has no setting '{key}' ({hint}" in output, output
    cli = CliRunner().invoke(main_cli, ["report", str(project.path / "agent.yaml")])
    assert cli.exit_code == 2 and f"has no setting '{key}'" in cli.output


def _baseline(project: pytest.Pytester, prompt_tokens: int) -> None:
    folder = project.path / ".costsim"
    folder.mkdir(exist_ok=True)
    entry = {"calls": 2, "prompt_tokens": prompt_tokens, "output_tokens": 89, "cost_usd": None}
    document = {
        "format_version": 1,
        "kind": "costsim.baseline",
        "tests": {"test_agent.py::test_two": entry},
    }
    (folder / "base.json").write_text(json.dumps(document))


@pytest.mark.parametrize(("grown", "fails"), [(6, True), (4, False)])
def test_regression_against_a_baseline(project: pytest.Pytester, grown: int, fails: bool) -> None:
    _baseline(project, round(TWO_CALLS_PROMPT / (1 + grown / 100)))
    project.makepyfile(
        test_agent=REPLAY + "\ndef test_two():\n    _replay(2)\n\ndef test_new():\n    _replay(1)\n"
    )
    result = project.runpytest(
        "--costsim", "--costsim-compare", "base", "--costsim-fail", "prompt_tokens:5%"
    )
    result.assert_outcomes(passed=2)
    assert (result.ret == pytest.ExitCode.TESTS_FAILED) is fails
    assert said(
        result.stdout.str(),
        "*not in baseline base (new, or not saved: it failed then): test_agent.py::test_new*",
    )
    over = "1 regression(s)" if fails else "no regression"
    text = " ".join(result.stdout.str().split())
    assert f"compared with baseline base: 1 test(s) against prompt_tokens:5%; {over}" in text
    if fails:
        result.stdout.fnmatch_lines(
            ["*test_two: prompt_tokens rose +6.0% (3,956 -> 4,193), over", "  the tolerance of 5%"]
        )


def test_compare_totals_the_tests_priced_in_both(project: pytest.Pytester) -> None:
    """``--costsim-compare`` left out its "the tests in both cost" line, with no word, as soon
    as one test was unpriced (here in the baseline): it totals those priced in both and says
    how many it left out."""
    folder = project.path / ".costsim"
    folder.mkdir()
    priced = {
        "calls": 2,
        "prompt_tokens": 4000,
        "cost_usd": "0.010000",
        "priced_cost_usd": "0.010000",
    }
    unpriced = {"calls": 1, "unpriced_calls": 1, "cost_usd": None, "priced_cost_usd": "0"}
    tests = {"test_agent.py::test_two": priced, "test_agent.py::test_one": unpriced}
    document = {"format_version": 2, "kind": "costsim.baseline", "tests": tests}
    (folder / "base.json").write_text(json.dumps(document))
    project.makepyfile(
        test_agent=REPLAY + "\ndef test_two():\n    _replay(2)\n\ndef test_one():\n    _replay(1)\n"
    )
    result = project.runpytest(
        "--costsim", "--costsim-compare", "base", "--costsim-fail", "calls:900"
    )
    assert said(
        result.stdout.str(),
        "*compared with baseline base: 2 test(s) against calls:900; no regression; the 1 priced "
        "in both cost $0.010000 -> $0.* (+*%), 1 left out (unpriced calls)*",
    )


def test_save_then_compare_with_the_cli(project: pytest.Pytester) -> None:
    from click.testing import CliRunner

    from costsim.cli import cli

    project.makepyfile(test_agent=REPLAY + "\ndef test_two():\n    _replay(2)\n")
    project.runpytest("--costsim", "--costsim-save", "first").assert_outcomes(passed=1)
    saved = project.path / ".costsim" / "first.json"
    document = json.loads(saved.read_text())
    assert (
        document["format_version"] == 2
        and document["tests"]["test_agent.py::test_two"]["calls"] == 2
    )
    result = CliRunner().invoke(cli, ["baseline", "compare", str(saved), str(saved)])
    assert result.exit_code == 0 and "no regression" in result.stdout


def test_a_failed_test_s_calls_are_not_saved_as_its_baseline(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A test that failed after one of its three calls was saved at a third of its cost, with
    no word (a trial's): the next run's whole cost then read as a regression. Its figures are
    left out, and what the baseline held for it before stays."""
    body = REPLAY + (
        "\nimport os\n"
        "\ndef test_ok():\n    _replay(2)\n"
        "\ndef test_flaky():\n    _replay(1 if os.environ.get('BREAK') else 3)\n"
        "    assert not os.environ.get('BREAK')\n"
    )
    project.makepyfile(test_agent=body)
    project.runpytest("--costsim", "--costsim-save", "main").assert_outcomes(passed=2)
    saved = project.path / ".costsim" / "main.json"
    whole = json.loads(saved.read_text())["tests"]["test_agent.py::test_flaky"]
    assert whole["calls"] == 3
    monkeypatch.setenv("BREAK", "1")
    result = project.runpytest("--costsim", "--costsim-save", "main")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["baseline saved: *(2 test(s); 1 that failed not taken (a*"])
    tests = json.loads(saved.read_text())["tests"]
    assert tests["test_agent.py::test_flaky"] == whole  # as before, not the third
    assert tests["test_agent.py::test_ok"]["calls"] == 2


def test_a_test_that_errs_only_in_teardown_is_saved(project: pytest.Pytester) -> None:
    """A teardown's error comes after every call the test made: its figures are whole."""
    body = REPLAY + (
        "\nimport pytest\n"
        "\n@pytest.fixture\ndef broken():\n    yield\n    raise RuntimeError('cleanup')\n"
        "\ndef test_two(broken):\n    _replay(2)\n"
    )
    project.makepyfile(test_agent=body)
    project.runpytest("--costsim", "--costsim-save", "main").assert_outcomes(passed=1, errors=1)
    tests = json.loads((project.path / ".costsim" / "main.json").read_text())["tests"]
    assert tests["test_agent.py::test_two"]["calls"] == 2


def test_corrupt_baseline_is_a_clear_error(project: pytest.Pytester) -> None:
    (project.path / ".costsim").mkdir()
    (project.path / ".costsim" / "bad.json").write_text("{not json")
    project.makepyfile(test_agent="def test_x():\n    pass\n")
    result = project.runpytest("--costsim", "--costsim-compare", "bad")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert said(result.stderr.str(), "*costsim: baseline *bad.json: not valid JSON*")
    assert "Traceback" not in result.stderr.str()


def test_fixture_exposes_the_test_ledger(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_agent=REPLAY
        + "\ndef test_two(costsim):\n    _replay(2)\n    assert costsim.totals.prompt_tokens == 4193\n"
        "    assert len(costsim.calls) == 2\n"
    )
    project.runpytest("--costsim").assert_outcomes(passed=1)


def test_markdown_report(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_agent=REPLAY + "\nimport pytest\n\n@pytest.mark.costsim_budget(output_tokens=10)\n"
        "def test_two():\n    _replay(2)\n"
    )
    result = project.runpytest(
        "--costsim",
        *("--costsim-report", "summary.md", "--costsim-report", "out.json"),
        *("--costsim-strategies", "caching"),
    )
    result.assert_outcomes(passed=1)
    # both files: a second --costsim-report used to replace the first, without a word
    result.stdout.fnmatch_lines(["report written: summary.md", "report written: out.json"])
    assert _report(project)["tests"]["test_agent.py::test_two"]["calls"] == 2  # type: ignore[index]
    text = (project.path / "summary.md").read_text()
    assert text.startswith("## costsim")
    assert "cost with caching |" in text and "| test_agent.py::test_two" in text
    assert "\n- cost with caching: saves $" in text  # the change and bands the terminal gives
    assert "; TOTAL p90 ±$" in text
    assert "- :x: test_agent.py::test_two: output_tokens 89 over the budget of 10" in text


def test_strategies_add_what_if_columns(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_agent=REPLAY + "\ndef test_all():\n    _replay(3)\n\ndef test_two():\n    _replay(2)\n"
    )
    result = project.runpytest(
        "--costsim",
        "--costsim-report",
        "out.json",
        "--costsim-strategies",
        "caching:ttl=1h,routing:default=claude-haiku-4-5&caching",
    )
    result.stdout.fnmatch_lines(
        [
            "*cost*what-if 1*what-if 2*",
            "what-if 1: cost with caching:ttl=1h: adds $0.00* (+*%), p90 Δ +$0.00*",
            "  to +$0.00*; TOTAL p90 ±$0.00*",  # simulated: a band
            "what-if 2: cost with routing:default=claude-haiku-4-5&caching*",
        ]
    )
    what_if = _report(project)["tests"]["test_agent.py::test_all"]["what_if"]  # type: ignore[index]
    trace = load_trace(project.path / "agent.yaml")
    engine = Engine([trace])
    recorded = engine.run(Variant("recorded")).totals().cost_usd
    assert recorded is not None
    for name in what_if:
        steps = tuple(parse_step(step) for step in name.split("&"))
        run = engine.run(Variant(name, steps))
        # the test's recorded cost plus what the variant changes, as the engine bills it
        assert Totals.of(run.baseline_metered()).cost_usd == recorded
        expected = run.totals().cost_usd
        assert expected is not None
        assert Decimal(what_if[name]["cost_usd"]) == expected
        assert what_if[name]["unpriced_calls"] == 0
        low, high = (Decimal(what_if[name][key]) for key in ("cost_usd_low", "cost_usd_high"))
        assert low <= expected <= high
        # its range is written as the cost is ("0.004080", was "0.00408000" beside it)
        written = [what_if[name][key] for key in ("cost_usd", "cost_usd_low", "cost_usd_high")]
        assert len({len(text.partition(".")[2]) for text in written}) == 1, written
    assert Decimal(what_if["routing:default=claude-haiku-4-5&caching"]["cost_usd"]) < Decimal(
        what_if["caching:ttl=1h"]["cost_usd"]
    )
    # the run's total carries each variant's cost over every test, as the TOTAL row does
    report = _report(project)
    tests = report["tests"].values()  # type: ignore[union-attr]
    total = report["total"]["what_if"]  # type: ignore[index]
    assert list(total) == list(what_if)
    for name in what_if:
        assert Decimal(total[name]["cost_usd"]) == sum(
            Decimal(test["what_if"][name]["cost_usd"]) for test in tests
        )
        assert total[name]["unpriced_calls"] == 0


def test_a_what_if_says_its_change_with_the_band_compare_gives_it(
    project: pytest.Pytester,
) -> None:
    """A what-if column's legend says what it changes in the tests' cost and how sure that
    is, as compare says a variant's Δ: the estimates the tests' cost shares with the what-if
    cancel out, so a strategy that changes nothing costs the same, exactly, however wide the
    band of the cost itself (its calls recorded without usage, estimated)."""
    project.makepyfile(test_agent=REPLAY + "\ndef test_all():\n    _replay(3)\n")
    result = project.runpytest(
        "--costsim", "--costsim-report", "out.json", "--costsim-strategies", "caching:ttl=1h"
    )
    result.stdout.fnmatch_lines(["what-if 1: cost with caching:ttl=1h: adds $0.0*, p90 Δ*"])
    what_if = _report(project)["tests"]["test_agent.py::test_all"]["what_if"]  # type: ignore[index]
    engine = Engine([load_trace(project.path / "agent.yaml")], meter=Meter())
    run = engine.run(Variant("v", (parse_step("caching:ttl=1h"),)))
    delta = variant_bands(run, engine.meter, None).delta
    change = what_if["caching:ttl=1h"]
    assert delta  # simulated: not exact
    assert (Decimal(change["change_below_usd"]), Decimal(change["change_above_usd"])) == (
        delta.below,
        delta.above,
    )

    document = yaml.safe_load((project.path / "agent.yaml").read_text())
    for interaction in document["interactions"]:
        body = json.loads(interaction["response"]["body"]["string"])
        body.pop("usage", None)  # recorded without usage: every call estimated
        interaction["response"]["body"]["string"] = json.dumps(body)
    (project.path / "agent.yaml").write_text(yaml.safe_dump(document))
    result = project.runpytest(
        "--costsim",
        "--costsim-report",
        "out.json",
        "--costsim-strategies",
        "thinking_budget:budget=1024",
    )
    result.stdout.fnmatch_lines(
        ["what-if 1: cost with thinking_budget:budget=1024: costs the same as the tests;*"]
    )
    same = _report(project)["tests"]["test_agent.py::test_all"]["what_if"][
        "thinking_budget:budget=1024"
    ]  # type: ignore[index]
    assert same["change_below_usd"] == same["change_above_usd"] == "0.00000000"
    assert Decimal(same["above_usd"]) > 0


def test_xdist_totals_equal_a_serial_run(project: pytest.Pytester) -> None:
    body = REPLAY + "".join(f"\ndef test_{i}():\n    _replay({1 + i % 2})\n" for i in range(4))
    project.makepyfile(test_agent=body)
    project.runpytest_subprocess("--costsim", "--costsim-report", "serial.json").assert_outcomes(
        passed=4
    )
    project.runpytest_subprocess(
        "--costsim", "--costsim-report", "parallel.json", "-n", "2"
    ).assert_outcomes(passed=4)
    assert _report(project, "serial.json")["total"] == _report(project, "parallel.json")["total"]


def test_drift_lists_the_same_calls_in_the_same_order_under_xdist(
    project: pytest.Pytester,
) -> None:
    tests = "".join(f"\ndef test_{name}():\n    _replay(2, grown)\n" for name in "dcba")
    project.makepyfile(test_agent=REPLAY + GROWN_SYSTEM + tests)
    reports = {}
    for name, workers in (("serial", ()), ("xdist", ("-n", "2"))):
        report = f"{name}.json"
        result = project.runpytest_subprocess("--costsim", "--costsim-report", report, *workers)
        result.assert_outcomes(passed=4)
        reports[name] = _report(project, report)["drift"]
    listed = [(entry["test"], entry["interaction"]) for entry in reports["serial"]]  # type: ignore[index]
    # in collection order (the file's, not the names'), each test's calls in order
    assert listed == [(f"test_agent.py::test_{name}", i) for name in "dcba" for i in (0, 1)]
    assert reports["xdist"] == reports["serial"]


HEAVY_CHECK = """
import sys
HEAVY = ("costsim.pricing.ledger", "costsim.pricing.prices", "genai_prices", "tiktoken", "tabulate")

def pytest_unconfigure(config):
    print("HEAVY:" + ",".join(m for m in HEAVY if m in sys.modules))
"""


def test_inert_without_the_flag(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(HEAVY_CHECK)
    pytester.makepyfile(test_plain="def test_x():\n    pass\n")
    result = pytester.runpytest_subprocess("-s")
    result.assert_outcomes(passed=1)
    assert "costsim:" not in result.stdout.str()  # no summary (the plugin list names it)
    result.stdout.fnmatch_lines(["HEAVY:"])  # nothing heavy was imported


SDK_TEST = """
import json
import {sdk}
import vcr
import yaml

def test_sdk(monkeypatch):
    monkeypatch.setenv("{key}", "test-key")
    with open("recorded.yaml") as f:
        bodies = [json.loads(i["request"]["body"]) for i in yaml.safe_load(f)["interactions"]]
    with vcr.use_cassette("recorded.yaml", record_mode="none", match_on=["method", "path"]):
        for body in bodies:
            for _ in {create}(**body) if body.get("stream") else [{create}(**body)]:
                pass
"""


@pytest.mark.parametrize(
    ("sdk", "key", "create", "cassette", "expected"),
    [
        pytest.param(
            "anthropic", "ANTHROPIC_API_KEY", "anthropic.Anthropic().messages.create",
            "lib__crewai__tests__cassettes__TestCrewMultimodalAnthropic.test_pdf_file[anthropic-claude-3-5-haiku-20241022].yaml",
            {"calls": 1, "prompt_tokens": 1815, "output_tokens": 31},
            id="anthropic",
        ),
        pytest.param(
            "anthropic, asyncio", "ANTHROPIC_API_KEY",
            "(lambda **body: asyncio.run(anthropic.AsyncAnthropic().messages.create(**body)))",
            "lib__crewai__tests__cassettes__TestCrewMultimodalAnthropic.test_pdf_file[anthropic-claude-3-5-haiku-20241022].yaml",
            {"calls": 1, "prompt_tokens": 1815, "output_tokens": 31},
            id="anthropic-async",
        ),
        pytest.param(
            "openai", "OPENAI_API_KEY", "openai.OpenAI().chat.completions.create",
            "lib__crewai__tests__cassettes__llms__openai__test_openai_streaming_cached_prompt_tokens.yaml",
            {"calls": 2, "prompt_tokens": 2288, "output_tokens": 5, "cache_read_tokens": 2048},
            id="openai-streaming-cached",
        ),
    ],
)  # fmt: skip
def test_real_sdk_meters_exactly_the_recorded_usage(
    pytester: pytest.Pytester,
    corpus: Path,
    sdk: str,
    key: str,
    create: str,
    cassette: str,
    expected: dict[str, int],
) -> None:
    """End to end: the SDK sends its request, vcrpy replays a real recording, and costsim
    meters exactly the usage the provider billed (the SDK's own request is not "drifted")."""
    shutil.copy(corpus / "crewAIInc__crewAI" / cassette, pytester.path / "recorded.yaml")
    pytester.makepyfile(test_sdk=SDK_TEST.format(sdk=sdk, key=key, create=create))
    result = pytester.runpytest("--costsim", "--costsim-report", "out.json")
    result.assert_outcomes(passed=1)
    entry = _report(pytester)["tests"]["test_sdk.py::test_sdk"]  # type: ignore[index]
    assert {name: entry[name] for name in expected} == expected
    assert entry["drifted_calls"] == 0


def test_pytest_recording_marker(project: pytest.Pytester) -> None:
    folder = project.path / "cassettes" / "test_marked"
    folder.mkdir(parents=True)
    shutil.move(project.path / "agent.yaml", folder / "test_one.yaml")
    project.makepyfile(
        test_marked="""
import pytest
import requests
import yaml
import yaml

@pytest.mark.vcr
def test_one():
    with open("cassettes/test_marked/test_one.yaml") as f:
        body = yaml.safe_load(f)["interactions"][0]["request"]["body"]
    requests.post("https://api.anthropic.com/v1/messages", data=body)
"""
    )
    result = project.runpytest("--costsim", "--record-mode=none", "--costsim-report", "out.json")
    result.assert_outcomes(passed=1)
    assert _report(project)["tests"]["test_marked.py::test_one"]["prompt_tokens"] == 2042  # type: ignore[index]


RECORDING_SERVER = """
import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest
import requests
import vcr

REPLY = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
         "content": [{"type": "text", "text": "hi"}], "stop_reason": "end_turn",
         "usage": {"input_tokens": 120, "output_tokens": 7}}

class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers["content-length"]))
        body = json.dumps(REPLY).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass

@pytest.fixture
def server():
    httpd = HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_port}"
    httpd.shutdown()
    httpd.server_close()

def test_records(server):
    with vcr.use_cassette("new.yaml", record_mode="all"):
        for _ in range(2):
            requests.post(server + "/v1/messages", json={
                "model": "claude-sonnet-4-5", "max_tokens": 10,
                "messages": [{"role": "user", "content": "hi"}]})
"""


def test_record_mode_counts_too(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_rec=RECORDING_SERVER)
    result = pytester.runpytest("--costsim", "--costsim-report", "out.json")
    result.assert_outcomes(passed=1)
    entry = _report(pytester)["tests"]["test_rec.py::test_records"]  # type: ignore[index]
    assert (entry["calls"], entry["prompt_tokens"], entry["output_tokens"]) == (2, 240, 14)
    assert (pytester.path / "new.yaml").is_file()


def test_fixture_scopes_are_attributed_to_the_scope(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_agent=REPLAY
        + """
import pytest

@pytest.fixture(scope="module")
def warm_module():
    _replay(1)

@pytest.fixture(scope="session")
def warm_session():
    _replay(2)

def test_a(warm_module, warm_session):
    pass

def test_b(warm_module, warm_session):
    _replay(1)
"""
    )
    project.runpytest("--costsim", "--costsim-report", "out.json").assert_outcomes(passed=2)
    tests = _report(project)["tests"]
    assert isinstance(tests, dict)
    assert tests["<module fixtures: test_agent.py>"]["prompt_tokens"] == 2042
    assert tests["<session fixtures>"]["prompt_tokens"] == TWO_CALLS_PROMPT
    assert tests["test_agent.py::test_b"]["prompt_tokens"] == 2042
    assert "test_agent.py::test_a" not in tests


def test_tolerance_marker_overrides_the_run_tolerance(project: pytest.Pytester) -> None:
    _baseline(project, round(TWO_CALLS_PROMPT / 1.06))
    project.makepyfile(
        test_agent=REPLAY
        + "\nimport pytest\n\n@pytest.mark.costsim_tolerance(prompt_tokens='10%')\n"
        "def test_two():\n    _replay(2)\n"
    )
    result = project.runpytest(
        "--costsim", "--costsim-compare", "base", "--costsim-fail", "prompt_tokens:5%"
    )
    assert result.ret == pytest.ExitCode.OK


def test_improvements_are_reported(project: pytest.Pytester) -> None:
    _baseline(project, TWO_CALLS_PROMPT)
    folder = project.path / ".costsim" / "base.json"
    document = json.loads(folder.read_text())
    document["tests"]["test_agent.py::test_two"]["cost_usd"] = "1.00"
    folder.write_text(json.dumps(document))
    project.makepyfile(test_agent=REPLAY + "\ndef test_two():\n    _replay(2)\n")
    result = project.runpytest("--costsim", "--costsim-compare", "base")
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["*improved: test_agent.py::test_two: cost $1.0000 -> $0.010736*"])


@pytest.mark.parametrize(
    ("marker", "message"),
    [
        (
            "costsim_budget(prompt_tokens='many')",
            "*prompt_tokens: Input should be a valid integer*",
        ),
        ("costsim_budget(tokens=5)", "*unknown budget key; *valid: prompt_tokens*"),
        (
            "costsim_budget(prompt_tokenz=5)",
            "*prompt_tokenz: unknown budget key; did you mean 'prompt_tokens'? valid: *",
        ),
        ("costsim_tolerance(cost='lots')", "*tolerance 'cost:lots' is not METRIC:PCT%*"),
    ],
)
def test_bad_markers_are_usage_errors(project: pytest.Pytester, marker: str, message: str) -> None:
    project.makepyfile(
        test_agent=f"import pytest\n\n@pytest.mark.{marker}\ndef test_x():\n    pass\n"
    )
    result = project.runpytest("--costsim")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert said(result.stderr.str(), message), result.stderr.str()
    assert "LLM calls" not in result.stdout.str()  # no test ran: no costsim section either


def test_unknown_strategy_is_a_usage_error(project: pytest.Pytester) -> None:
    project.makepyfile(test_agent="def test_x():\n    pass\n")
    result = project.runpytest("--costsim", "--costsim-strategies", "cachin")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert said(result.stderr.str(), "*costsim: *cachin*"), result.stderr.str()


def _broken_cassette(project: pytest.Pytester) -> None:
    document = yaml.safe_load((project.path / "agent.yaml").read_text())
    document["interactions"][0]["response"]["body"]["string"] = '{"type": "message", "usage": '
    (project.path / "agent.yaml").write_text(yaml.safe_dump(document))


@pytest.mark.parametrize("lenient", [False, True])
def test_an_unreadable_call_fails_the_run_unless_lenient(
    project: pytest.Pytester, lenient: bool
) -> None:
    _broken_cassette(project)
    project.makepyfile(test_agent=REPLAY + "\ndef test_two():\n    _replay(2)\n")
    result = project.runpytest("--costsim", *(["--costsim-lenient"] if lenient else []))
    result.assert_outcomes(passed=1)  # the user's test itself is never failed by costsim
    result.stdout.fnmatch_lines(
        ["unreadable: test_agent.py::test_two: agent.yaml: interaction 0: response body is*"]
    )
    total = next(line for line in result.stdout.lines if line.startswith("TOTAL"))
    assert total.endswith("≥$0.002517*")  # the unreadable call's cost is unknown, never $0
    row = next(line for line in result.stdout.lines if "test_two" in line and "$" in line)
    assert row.endswith("≥$0.002517*")  # the test's own cost says it too (it read as whole)
    # why its cost is unknown: unreadable (a trial read "1 call unpriced" of a priced model)
    result.stdout.fnmatch_lines(
        [
            "2 LLM calls in 1 test: ≥$0.002517 (1 call unreadable).",
            "* partial cost: 1 call unreadable (listed below)*",
        ],
        consecutive=False,
    )
    assert (result.ret == pytest.ExitCode.OK) is lenient


def test_an_unreadable_call_leaves_each_what_if_cost_partial(project: pytest.Pytester) -> None:
    """No variant can price a call that could not be read: the test's what-if cost is partial,
    as its own cost is (it used to leave the call out as if it cost $0 and read as whole)."""
    _broken_cassette(project)
    project.makepyfile(test_agent=REPLAY + "\ndef test_two():\n    _replay(2)\n")
    result = project.runpytest(
        "--costsim",
        "--costsim-lenient",
        "--costsim-strategies",
        "caching:ttl=1h",
        "--costsim-report",
        "out.json",
    )
    row = next(line for line in result.stdout.lines if "test_two" in line and "$" in line)
    total = next(line for line in result.stdout.lines if line.startswith("TOTAL"))
    for line in (row, total):
        assert line.split()[-1].startswith("≥$") and line.endswith("*"), line
    report = _report(project)
    test = report["tests"]["test_agent.py::test_two"]["what_if"]["caching:ttl=1h"]  # type: ignore[index]
    whole = report["total"]["what_if"]["caching:ttl=1h"]  # type: ignore[index]
    for value in (test, whole):
        assert value["unpriced_calls"] == 1
        assert value["cost_usd"] is None and value["cost_usd_low"] is None
        assert Decimal(value["priced_cost_usd"]) > 0


def test_calls_without_usage_are_estimated_and_flagged(project: pytest.Pytester) -> None:
    document = yaml.safe_load((project.path / "agent.yaml").read_text())
    response = json.loads(document["interactions"][0]["response"]["body"]["string"])
    del response["usage"]
    document["interactions"][0]["response"]["body"]["string"] = json.dumps(response)
    (project.path / "agent.yaml").write_text(yaml.safe_dump(document))
    project.makepyfile(test_agent=REPLAY + "\ndef test_one():\n    _replay(1)\n")
    result = project.runpytest("--costsim", "--costsim-report", "out.json")
    result.stdout.fnmatch_lines(
        [
            "*test_agent.py::test_one*1 (1 est.)*",
            "est.: 1 call recorded no usable usage*",
            "  agent.yaml interaction 0: *",
        ]
    )
    entry = _report(project)["tests"]["test_agent.py::test_one"]  # type: ignore[index]
    call = load_trace(project.path / "agent.yaml").calls[0]
    estimate = Meter().estimated_usage(call)
    assert entry["estimated_calls"] == 1
    assert (entry["prompt_tokens"], entry["output_tokens"]) == (
        estimate.prompt_total,
        estimate.output,
    )
    assert entry["cost_usd"] is not None


def test_top_n_and_unpriced_models(project: pytest.Pytester) -> None:
    document = yaml.safe_load((project.path / "agent.yaml").read_text())
    response = json.loads(document["interactions"][1]["response"]["body"]["string"])
    response["model"] = "claude-imaginary-9"
    document["interactions"][1]["response"]["body"]["string"] = json.dumps(response)
    request = json.loads(document["interactions"][1]["request"]["body"])
    request["model"] = "claude-imaginary-9"
    document["interactions"][1]["request"]["body"] = json.dumps(request)
    (project.path / "agent.yaml").write_text(yaml.safe_dump(document))
    body = REPLAY + "".join(f"\ndef test_{i}():\n    _replay({i})\n" for i in (1, 2, 3))
    project.makepyfile(test_agent=body)
    result = project.runpytest("--costsim", "--costsim-top", "2")
    lines = result.stdout.str().splitlines()
    table = [line.split()[0] for line in lines if line.split() and "::" in line.split()[0]]
    # costliest by priced cost, then prompt tokens: an unpriced call never sorts a test up
    # (interaction 2 is an errored, unbilled call: test_2 and test_3 tie, by name)
    assert [name.rsplit("::", 1)[1] for name in table] == ["test_2", "test_3"]
    total = next(line for line in lines if line.startswith("TOTAL"))
    assert total.endswith("≥$0.024656*")  # the priced part, starred: never $0, never hidden
    result.stdout.fnmatch_lines(["6 LLM calls in 3 tests: ≥$0.024656 (2 calls unpriced)."])
    result.stdout.fnmatch_lines(["* partial cost: 2 calls unpriced (listed below)*"])
    result.stdout.fnmatch_lines(
        [
            "1 other * $0.008219",
            "TOTAL * ≥$0.024656*",
            "The 1 other is the cheapest test: a larger --costsim-top lists more, a",
            "unpriced: agent.yaml interaction 1: *",
            "*claude-imaginary-9*",
        ]
    )


GROWN_SYSTEM = """
def grown(body):
    body = dict(body)
    body["system"] = [{**body["system"][0], "text": body["system"][0]["text"] + " extra" * 3000},
                      *body["system"][1:]]
    return body

def reordered(body):
    return dict(reversed(list(body.items())))
"""


def test_a_what_if_counts_its_divergences_as_compare_does(project: pytest.Pytester) -> None:
    """A call routed to a smaller model whose recorded answer called tools may not answer
    alike: compare counts it a divergence beside the saving, and so does the what-if (its
    legend and the JSON report), not only the saving."""
    project.makepyfile(test_agent=REPLAY + "\ndef test_all():\n    _replay(3)\n")
    routed = "routing:default=claude-haiku-4-5"
    result = project.runpytest(
        "--costsim", "--costsim-report", "out.json", "--costsim-strategies", routed
    )
    result.stdout.fnmatch_lines(
        [
            f"what-if 1: cost with {routed}: saves $0.0*",
            "  of $0.0*, p90 band ±<$0.000001; 1 divergence",  # as compare says it
        ]
    )
    engine = Engine([load_trace(project.path / "agent.yaml")], meter=Meter())
    expected = engine.run(Variant("v", (parse_step(routed),))).divergences
    assert expected == 1
    report = _report(project)
    test = report["tests"]["test_agent.py::test_all"]["what_if"][routed]  # type: ignore[index]
    assert test["divergences"] == expected
    assert report["total"]["what_if"][routed]["divergences"] == expected  # type: ignore[index]


def test_a_drifted_test_s_what_if_change_is_against_what_it_sent(
    project: pytest.Pytester,
) -> None:
    """A test that sent other requests than it recorded costs what it sent; a what-if that
    changes nothing more costs that, exactly (its change is not banded against the
    recording, from which the drift's own estimate would make it look uncertain)."""
    project.makepyfile(
        test_agent=REPLAY + GROWN_SYSTEM + "\ndef test_grown():\n    _replay(2, grown)\n"
    )
    result = project.runpytest(
        "--costsim",
        *("--costsim-report", "out.json"),
        *("--costsim-strategies", "thinking_budget:budget=1024,caching:ttl=1h"),
    )
    result.stdout.fnmatch_lines(
        [
            "what-if 1: cost with thinking_budget:budget=1024: costs the same as the tests;*",
            "what-if 2: cost with caching:ttl=1h: * p90 *",
        ]
    )
    report = _report(project)
    test = report["tests"]["test_agent.py::test_grown"]  # type: ignore[index]
    same = test["what_if"]["thinking_budget:budget=1024"]
    assert Decimal(same["cost_usd"]) == Decimal(test["cost_usd"])
    assert same["change_below_usd"] == same["change_above_usd"] == "0.00000000"
    assert Decimal(same["above_usd"]) > 0  # the drift's own estimate: the cost is banded
    cached = test["what_if"]["caching:ttl=1h"]
    assert Decimal(cached["change_below_usd"]) + Decimal(cached["change_above_usd"]) > 0
    # what the recording billed does not bound the saving of what was sent
    assert cached["touched_cost_usd"] is None


def test_a_grown_request_is_metered_as_sent(project: pytest.Pytester) -> None:
    """Who added 3,000 tokens to every request: the replay still returns the recorded usage,
    but costsim meters the request the code sent (recorded prompt + calibrated difference)."""
    project.makepyfile(
        test_agent=REPLAY
        + GROWN_SYSTEM
        + "\ndef test_same():\n    _replay(2, reordered)\n"
        + "\ndef test_grown():\n    _replay(2, grown)\n"
    )
    result = project.runpytest("--costsim", "--costsim-report", "out.json")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(
        [
            "*test_grown*2 (2 drifted)*",
            "drifted: 2 calls sent a request that differs from the recording; metered as*",
            # calls that differ alike, in one line
            "  system changed (+18,000 chars): 2 calls in 1 test, prompt +* tok each",
            "        (e.g. test_agent.py::test_grown (agent.yaml #0))",
        ]
    )
    verbose = project.runpytest("--costsim", "-v")  # -v: one line per call
    verbose.stdout.fnmatch_lines(
        [
            "  test_agent.py::test_grown (agent.yaml #0) prompt +* tok: system changed*",
            "  test_agent.py::test_grown (agent.yaml #1) prompt +* tok: system changed*",
        ]
    )
    tests = _report(project)["tests"]
    assert isinstance(tests, dict)
    assert tests["test_agent.py::test_same"]["prompt_tokens"] == TWO_CALLS_PROMPT  # key order
    assert tests["test_agent.py::test_same"]["drifted_calls"] == 0
    grown = tests["test_agent.py::test_grown"]
    assert grown["drifted_calls"] == 2
    # the table's "2 drifted" are the report's 2 estimated calls, and the summary says so
    assert (grown["estimated_calls"], grown["unrecorded_calls"]) == (2, 0)
    assert "count as estimated in report files" in " ".join(result.stdout.str().split())
    # " extra" is one cl100k token: each prompt grows by 3,000 raw tokens times the shipped
    # claude+tools coefficient per raw token. The system prompt carries the breakpoint, so the
    # first call writes the grown prefix and the second reads exactly what the first wrote.
    call = load_trace(project.path / "agent.yaml").calls[0]
    per_raw = Meter().coefficients(call).as_dict()["raw"]
    assert grown["prompt_tokens"] - TWO_CALLS_PROMPT == 2 * round(3000 * per_raw)
    assert grown["cache_read_tokens"] == grown["cache_write_tokens"] > 3000

    as_recorded = project.runpytest(
        "--costsim", "--costsim-drift=ignore", "--costsim-report", "r.json"
    )
    entry = _report(project, "r.json")["tests"]["test_agent.py::test_grown"]  # type: ignore[index]
    assert entry["prompt_tokens"] == TWO_CALLS_PROMPT and entry["drifted_calls"] == 0
    as_recorded.assert_outcomes(passed=2)


def test_a_grown_request_fails_the_baseline_gate(project: pytest.Pytester) -> None:
    project.makepyfile(test_agent=REPLAY + GROWN_SYSTEM + "\ndef test_two():\n    _replay(2)\n")
    project.runpytest("--costsim", "--costsim-save", "main").assert_outcomes(passed=1)
    project.makepyfile(
        test_agent=REPLAY + GROWN_SYSTEM + "\ndef test_two():\n    _replay(2, grown)\n"
    )
    result = project.runpytest(
        "--costsim", "--costsim-compare", "main", "--costsim-fail", "prompt_tokens:10%"
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*FAILED test_agent.py::test_two: prompt_tokens rose +1*%*"])


def test_markers_apply_under_xdist_and_the_closest_wins(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_agent=REPLAY
        + """
import pytest

pytestmark = pytest.mark.costsim_budget(prompt_tokens=100)

@pytest.mark.costsim_budget(prompt_tokens=100_000)
def test_allowed():
    _replay(2)

def test_over():
    _replay(2)
"""
    )
    for args in ((), ("-n", "2")):
        result = project.runpytest_subprocess("--costsim", *args)
        result.assert_outcomes(passed=2)
        assert result.ret == pytest.ExitCode.TESTS_FAILED
        result.stdout.fnmatch_lines(["*FAILED test_agent.py::test_over: prompt_tokens 4,193*"])
        assert "test_allowed: prompt_tokens" not in result.stdout.str()


def test_a_bad_marker_stops_the_run_before_any_test(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_agent="import pytest\n\ndef test_first():\n    print('RAN')\n\n"
        "@pytest.mark.costsim_budget(cost_usd=-1)\ndef test_bad():\n    pass\n"
    )
    result = project.runpytest("--costsim", "-s")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "RAN" not in result.stdout.str()
    assert said(
        result.stderr.str(), "*test_bad: costsim_budget: cost_usd: *greater than or equal to 0*"
    )


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ('[tool.pytest.ini_options]\ncostsim = "maybe"', "*invalid truth value 'maybe'*"),
        ("[tool.costsim]\nbudgets = [{pattern = 5, cost_usd = 1.0}]", "*needs a 'pattern' string*"),
        ('[tool.costsim]\nbudgets = "all"', "*budgets must be a list of tables*(got 'all')*"),
        ("[tool.costsim]\nbudgets = [3]", "*budgets?0? must be a table*"),
        ('[tool.costsim]\nunpriced_fallback = "tokens:5%"', "*unknown metric 'tokens'*"),
        ('[tool.costsim]\nunpriced_fallback = "prompt_tokens:lots"', "*unpriced_fallback: *"),
        ('[tool.costsim]\ndrift = "loud"', "*drift must be warn, fail or ignore (got 'loud')*"),
    ],
)
def test_bad_project_settings_are_usage_errors(
    project: pytest.Pytester, settings: str, message: str
) -> None:
    on = "" if "ini_options" in settings else "[tool.pytest.ini_options]\ncostsim = true\n"
    project.makepyprojecttoml(f"{on}{settings}\n")
    project.makepyfile(test_agent="def test_x():\n    pass\n")
    result = project.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert said(result.stderr.str(), message), result.stderr.str()


def test_every_settings_problem_is_reported_at_once(project: pytest.Pytester) -> None:
    """Three mistakes in [tool.costsim], three sentences in one run (they used to come one
    run at a time), each naming the file."""
    project.makepyprojecttoml(
        "[tool.pytest.ini_options]\ncostsim = true\n[tool.costsim]\ndrfit = 'fail'\n"
        "budgets = [{pattern = 'tests/*', cost_usd = -1}, {pattern = 'x', prompt_token = 5}]\n"
        "unpriced_fallback = 'cost:5%'\n"
    )
    project.makepyfile(test_agent="def test_x():\n    pass\n")
    result = project.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    error = " ".join(result.stderr.str().split())
    assert "[tool.costsim] has 4 problems" in error, error
    for part in (
        "has no setting 'drfit' (did you mean 'drift'?)",
        "budgets[0]: cost_usd: Input should be greater than or equal to 0",
        "budgets[1]: prompt_token: unknown budget key; did you mean 'prompt_tokens'?",
        "unpriced_fallback 'cost:5%' must name token or call tolerances",
    ):
        assert part in error, part
    # the commands read the same table, and say all of what they find wrong in it at once
    project.makepyprojecttoml("[tool.costsim]\njobs = 0\ncach = false\n")
    with project.path.joinpath("a.yaml").open("w") as file:
        file.write("interactions: []\nversion: 1\n")
    cli = CliRunner().invoke(main_cli, ["report", str(project.path / "a.yaml")])
    output = " ".join(cli.output.split())
    assert cli.exit_code == 2 and "[tool.costsim] has 2 problems" in output, output
    assert "jobs must be a whole number of at least 1 (got 0)" in output
    assert "has no setting 'cach' (did you mean 'cache'?)" in output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--costsim-top", "-1"), "*--costsim-top must be 0 or more*"),
        (("--costsim-fail", "cost:-5%"), "*a tolerance is 0% or more*"),
        (("--costsim-report", "x.csv"), "*--costsim-report x.csv: cannot tell which format*"),
    ],
)
def test_bad_options_are_usage_errors(
    project: pytest.Pytester, args: tuple[str, ...], message: str
) -> None:
    project.makepyfile(test_agent="def test_x():\n    pass\n")
    result = project.runpytest("--costsim", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert said(result.stderr.str(), message), result.stderr.str()


def test_an_unwritable_report_fails_the_run_with_a_message(project: pytest.Pytester) -> None:
    project.makepyfile(test_agent=REPLAY + "\ndef test_one():\n    _replay(1)\n")
    result = project.runpytest("--costsim", "--costsim-report", "test_agent.py/out.json")
    result.assert_outcomes(passed=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*FAILED costsim: *out.json: cannot be written*"])
    assert "Traceback" not in result.stdout.str()


def test_scrubbed_recordings_are_not_drifted(project: pytest.Pytester) -> None:
    """A cassette recorded through a body filter replays with the same filter: the request the
    code sends is compared after the filter, so unchanged code is not counted as drifted."""
    document = yaml.safe_load((project.path / "agent.yaml").read_text())
    for interaction in document["interactions"]:
        request = interaction["request"]
        request["body"] = request["body"].replace("Acme Cloud", "ACME-REDACTED")
    (project.path / "agent.yaml").write_text(yaml.safe_dump(document))
    project.makepyfile(
        test_agent=REPLAY.replace("ACME-REDACTED", "Acme Cloud")
        + """
def scrub(request):
    request.body = request.body.replace(b"Acme Cloud", b"ACME-REDACTED")
    return request

def test_scrubbed():
    with vcr.use_cassette("agent.yaml", record_mode="none", before_record_request=scrub):
        for body in RECORDED[:2]:
            body = json.loads(json.dumps(body).replace("ACME-REDACTED", "Acme Cloud"))
            requests.post("https://api.anthropic.com/v1/messages", json=body)
"""
    )
    result = project.runpytest("--costsim", "--costsim-report", "out.json")
    result.assert_outcomes(passed=1)
    entry = _report(project)["tests"]["test_agent.py::test_scrubbed"]  # type: ignore[index]
    assert (entry["drifted_calls"], entry["prompt_tokens"]) == (0, TWO_CALLS_PROMPT)


def test_requests_served_another_s_response_are_not_drifted(project: pytest.Pytester) -> None:
    """Calls to one URL sent concurrently (asyncio.gather, a thread pool) take the recorded
    responses in the order they arrive (vcrpy matches on method and URL): each was reported
    as drifted from the interaction it was served, a count that changed from run to run.
    Sent out of order here, each is metered as the interaction recorded for it."""
    project.makepyfile(
        test_agent=REPLAY
        + """
def test_out_of_order():
    with vcr.use_cassette("agent.yaml", record_mode="none"):
        for body in reversed(RECORDED[:2]):
            requests.post("https://api.anthropic.com/v1/messages", json=body)
"""
    )
    result = project.runpytest("--costsim", "--costsim-drift=fail", "--costsim-report", "o.json")
    result.assert_outcomes(passed=1)
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    entry = _report(project, "o.json")["tests"]["test_agent.py::test_out_of_order"]  # type: ignore[index]
    assert (entry["drifted_calls"], entry["calls"]) == (0, 2)
    assert (entry["prompt_tokens"], entry["output_tokens"]) == (TWO_CALLS_PROMPT, 58 + 31)


def test_tests_not_in_the_baseline_are_named_in_one_note(project: pytest.Pytester) -> None:
    """Each new test repeated the whole sentence, one note per test."""
    project.makepyfile(test_agent=REPLAY + "\ndef test_two():\n    _replay(2)\n")
    project.runpytest("--costsim", "--costsim-save", "base").assert_outcomes(passed=1)
    news = "".join(f"\ndef test_new_{n}():\n    _replay(1)\n" for n in range(7))
    project.makepyfile(test_agent=REPLAY + "\ndef test_two():\n    _replay(2)\n" + news)
    result = project.runpytest("--costsim", "--costsim-compare", "base")
    text = " ".join(result.stdout.str().split())
    assert text.count("not in baseline base") == 1
    assert (
        "not in baseline base (new, or not saved: it failed then): test_agent.py::test_new_0, "
        "test_agent.py::test_new_1, test_agent.py::test_new_2, test_agent.py::test_new_3, "
        "test_agent.py::test_new_4 and 2 more"
    ) in text


def test_what_if_costs_from_workers_add_up() -> None:
    from costsim.api.testing import WhatIfCost
    from costsim.plugin.session import CostsimSession

    state = CostsimSession()
    state.merge_what_if(
        "<session fixtures>",
        {"caching": WhatIfCost(Decimal("0.10")), "routing": WhatIfCost(Decimal("0.20"))},
    )
    state.merge_what_if(
        "<session fixtures>",
        {"caching": WhatIfCost(Decimal("0.05")), "routing": WhatIfCost(Decimal("0.01"), 1)},
    )
    merged = state.what_if_costs["<session fixtures>"]
    assert merged["caching"] == WhatIfCost(Decimal("0.15"))
    assert merged["routing"] == WhatIfCost(Decimal("0.21"), 1)  # the priced part, kept
    assert merged["routing"].cost_usd is None  # ... and the whole is unknown, never $0


def test_what_if_notes_come_in_one_order_whichever_worker_reports_first() -> None:
    """Each xdist worker sends the notes its tests gave; they came out in the order the
    workers happened to finish (a serial run's order was a third)."""
    from costsim.plugin.session import CostsimSession

    one = json.dumps({"what_if_notes": {"caching": ["b: below the minimum", "a: too short"]}})
    two = json.dumps({"what_if_notes": {"caching": ["c: no tools", "a: too short"]}})
    merged = []
    for order in ((one, two), (two, one)):
        state = CostsimSession()
        for output in order:
            state.merge_worker(output)
        merged.append(state.what_if_notes)
    assert merged[0] == merged[1]
    assert merged[0]["caching"] == ["a: too short", "b: below the minimum", "c: no tools"]


def _summary_section(lines: list[str]) -> list[str]:
    """The lines of costsim's terminal summary, up to pytest's next section."""
    start = next(i for i, line in enumerate(lines) if "costsim: LLM calls replayed" in line)
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("=")), len(lines))
    return lines[start + 1 : end]


@pytest.mark.parametrize(
    ("columns", "options", "kept"),
    [
        # -vv: the output stays (a reasoning model's cost), the prompt goes (the split adds up
        # to it); at 100 columns -vv left the output out
        (100, ["-vv"], ["cache read", "cache write", "uncached", "output", "cost"]),
        (80, ["-vv"], ["cache read", "cache write", "uncached", "cost"]),
        # at 60 the id goes above its figures before the split -vv asked for goes (a trial)
        (60, ["-vv"], ["cache read", "cache write", "uncached", "cost"]),
        (60, ["--costsim-strategies", "caching:ttl=1h,routing:default=claude-haiku-4-5"], []),
        # -vv and four what-if columns: too wide at 80 (the split was never left out)
        (80, ["-vv", "--costsim-strategies", "truncation,caching:ttl=1h,caching,batching"], []),
    ],
)
def test_the_summary_fits_the_terminal_and_names_what_it_left_out(
    project: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    columns: int,
    options: list[str],
    kept: list[str],
) -> None:
    """-vv's token split used to print 156 columns, and two what-if columns 70 at 60."""
    monkeypatch.setenv("COLUMNS", str(columns))
    project.makepyfile(
        test_agent_with_a_rather_long_module_name=REPLAY
        + "\ndef test_all_three_calls_of_the_support_agent():\n    _replay(3)\n"
    )
    result = project.runpytest("--costsim", *options)
    section = _summary_section(result.stdout.lines)
    widths = [len(line.encode()) for line in section]  # in bytes: an ellipsis takes three
    assert section and max(widths) <= columns, "\n".join(section)
    rule = next(i for i, line in enumerate(section) if line.startswith("---"))
    header = " ".join(section[rule - 2 : rule]).split()  # headers of two words are stacked
    assert all(word in header for name in [*kept, "cost"] for word in name.split()), header
    assert any(line.startswith("(left out to fit: ") for line in section), "\n".join(section)
    row = next(line for line in section if "support_agent" in line)
    if "test" not in header:  # too narrow for the id beside its figures: it is above them
        assert row.endswith("test_all_three_calls_of_the_support_agent"), "\n".join(section)
    elif "calls" in header or "prompt" in header:  # those go before the test id
        assert len(row.split()[0]) >= 30, "\n".join(section)


def test_a_long_run_lists_its_costliest_tests_and_sums_the_rest(
    project: pytest.Pytester,
) -> None:
    body = REPLAY + (
        "\nimport pytest\n\n@pytest.mark.parametrize('n', range(30))\n"
        "def test_many(n):\n    _replay(2 if n == 29 else 1)\n"
    )
    project.makepyfile(test_agent=body)
    result = project.runpytest("--costsim", "--costsim-report", "out.md")
    lines = result.stdout.str().splitlines()
    # the answer first: 29 tests of one call and one of two
    assert "31 LLM calls in 30 tests: $" in result.stdout.str()
    listed = [line.split()[0].rsplit("::", 1)[1] for line in lines if "::test_many[" in line]
    # the costliest first, then equal costs in natural order (n=2 before n=10)
    assert listed == ["test_many[29]", *(f"test_many[{n}]" for n in range(19))]
    summed = next(line for line in lines if line.startswith("10 others"))
    assert summed.split()[2:4] == ["10", f"{2042 * 10:,}"]  # by hand: 10 first calls
    total = next(line for line in lines if line.startswith("TOTAL"))
    assert total.split()[1:3] == ["31", f"{2042 * 30 + 2151:,}"]
    result.stdout.fnmatch_lines(["The 10 others are the cheapest tests, summed in one row: -v*"])
    markdown = (project.path / "out.md").read_text()
    # a test id's brackets are escaped in Markdown (shown as written, never a link)
    assert markdown.count("::test_many\\[") == 30 and "others" not in markdown
    assert markdown.splitlines()[2].startswith("31 LLM calls in 30 tests: $")  # the answer
    verbose = project.runpytest("--costsim", "-v")
    assert sum("::test_many[" in line and "$" in line for line in verbose.outlines) == 30


def test_many_failures_are_capped_in_natural_order_and_q_is_not_verbose(
    project: pytest.Pytester,
) -> None:
    """Fifteen tests over budget: the terminal lists the first ten in natural order (n=2
    before n=10) and says how many more, while the run's own failures are always listed;
    -v lists all, and -q (a negative verbosity) does not count as -v."""
    body = REPLAY + (
        "\nimport pytest\n\n@pytest.mark.costsim_budget(prompt_tokens=1000)\n"
        "@pytest.mark.parametrize('n', range(15))\ndef test_many(n):\n"
        "    _replay(1, lambda b: {**b, 'system': b['system'] + [{'type': 'text', 'text': 'v2'}]})\n"
    )
    project.makepyfile(test_agent=body)
    for args in ((), ("-q",)):
        result = project.runpytest("--costsim", *args)
        failed = [line for line in result.outlines if line.startswith("FAILED ")]
        numbers = [int(line.split("[", 1)[1].split("]", 1)[0]) for line in failed]
        assert numbers == list(range(10)), failed
        assert "and 5 more (-v lists them; so does --costsim-report)" in result.outlines
        # drifted calls alike: one line, whatever their number
        text = " ".join(result.stdout.str().split())
        assert "system changed (+2 chars): 15 calls in 15 tests, prompt +2 tok each" in text
        assert result.ret == 1
    verbose = project.runpytest("--costsim", "-v")
    assert (
        sum(line.startswith("FAILED ") and "prompt_tokens" in line for line in verbose.outlines)
        == 15
    )


def test_errored_calls_fixture_scopes_and_the_baseline_total_are_said(
    project: pytest.Pytester,
) -> None:
    """The example's third interaction is an errored call (unbilled): the calls cell flags it,
    a note says what it is, the JSON counts it; a module fixture's calls are a fixture scope,
    not a test; and a comparison with a baseline gives the change of the tests' total."""
    body = REPLAY + (
        "\nimport pytest\n\n@pytest.fixture(scope='module')\ndef warm():\n    _replay(1)\n\n"
        "def test_all(warm):\n    _replay(3)\n\ndef test_one():\n    _replay(1)\n"
    )
    project.makepyfile(test_agent=body)
    saved = project.runpytest("--costsim", "--costsim-save", "base")
    saved.stdout.fnmatch_lines(["5 LLM calls in 2 tests and 1 fixture scope: $*"])
    row = next(line for line in saved.outlines if line.startswith("test_agent.py::test_all"))
    assert row.split()[1:3] == ["3", "(1"] and "errored)" in row
    text = " ".join(saved.stdout.str().split())
    assert "errored: 1 call the API answered with an error (4xx/5xx): unbilled" in text
    project.runpytest("--costsim", "--costsim-report", "out.json", "--costsim-report", "o.html")
    assert _report(project)["total"]["errored_calls"] == 1  # type: ignore[index]
    # the HTML page counts them as the terminal does (it said "5 LLM calls in 3 tests")
    page = (project.path / "o.html").read_text()
    assert "for 5 LLM calls in 2 tests and 1 fixture scope." in page
    # and flags the errored call and says what it is, as the terminal and Markdown do (the
    # page had neither: a trial found no "est.", "errored" or their notes in it)
    assert "3 (1 errored)" in page
    assert "errored: 1 call the API answered with an error (4xx/5xx): unbilled" in page
    grown = project.runpytest("--costsim", "--costsim-compare", "base")
    text = " ".join(grown.stdout.str().split())
    assert "; no regression; the tests in both cost $" in text and "(+0.0%)" in text


def test_a_budget_of_calls(project: pytest.Pytester) -> None:
    """``calls`` budgets how many LLM calls a test may make (a loop that runs away)."""
    body = REPLAY + (
        "\nimport pytest\n\n@pytest.mark.costsim_budget(calls=1)\ndef test_two():\n"
        "    _replay(2)\n\n@pytest.mark.costsim_budget(calls=2)\ndef test_ok():\n    _replay(2)\n"
    )
    project.makepyfile(test_agent=body)
    result = project.runpytest("--costsim")
    assert result.ret == 1
    assert said(
        result.stdout.str(), "*FAILED test_agent.py::test_two: calls 2 over the budget of 1*"
    )
    assert "test_ok: calls" not in result.stdout.str()
    assert "errored" not in result.stdout.str().split("costsim: the run fails")[1]


def test_a_budget_of_calls_says_how_many_errored(project: pytest.Pytester) -> None:
    """The example cassette's third call is a 529: a retried error is a call (it counts
    against the budget), and the failure says so."""
    body = (
        REPLAY
        + "\nimport pytest\n\n@pytest.mark.costsim_budget(calls=2)\ndef test_three():\n    _replay(3)\n"
    )
    project.makepyfile(test_agent=body)
    result = project.runpytest("--costsim")
    assert said(
        result.stdout.str(),
        "*test_three: calls 3 over the budget of 2 (1 of them errored, unbilled)*",
    )


BACKGROUND_TEST = """
import requests
import vcr


def test_background():
    with vcr.use_cassette("background.yaml", record_mode="none"):
        requests.post("https://api.openai.com/v1/responses",
                      json={"model": "o4-mini", "input": "Hello", "background": True})
        requests.get("https://api.openai.com/v1/responses/resp_1")
"""


def test_a_background_response_is_billed_from_its_retrieval(pytester: pytest.Pytester) -> None:
    """The plugin meters each replayed interaction alone: a background request (answered
    "queued", no usage) was estimated at 63 tokens instead of the retrieval's usage, which
    ``costsim report`` reads. o4-mini: 1,000 uncached x $1.10 + 1,000 cached x $0.275 +
    1,000 out x $4.40 per million = $0.005775."""
    queued = {"id": "resp_1", "object": "response", "status": "queued", "model": "o4-mini",
              "output": [], "usage": None}  # fmt: skip
    done = {**queued, "status": "completed", "model": "o4-mini-2025-04-16",
            "output": [{"type": "message", "role": "assistant",
                        "content": [{"type": "output_text", "text": "Hi"}]}],
            "usage": {"input_tokens": 2000, "input_tokens_details": {"cached_tokens": 1000},
                      "output_tokens": 1000, "total_tokens": 3000}}  # fmt: skip
    request = {"model": "o4-mini", "input": "Hello", "background": True}
    date = {"date": ["Mon, 02 Jun 2025 12:00:00 GMT"]}
    interactions = [
        {"request": {"method": "POST", "uri": "https://api.openai.com/v1/responses",
                     "body": json.dumps(request), "headers": {}},
         "response": {"status": {"code": 200, "message": "OK"}, "headers": date,
                      "body": {"string": json.dumps(queued)}}},
        {"request": {"method": "GET", "uri": "https://api.openai.com/v1/responses/resp_1",
                     "body": None, "headers": {}},
         "response": {"status": {"code": 200, "message": "OK"}, "headers": date,
                      "body": {"string": json.dumps(done)}}},
    ]  # fmt: skip
    (pytester.path / "background.yaml").write_text(
        yaml.safe_dump({"version": 1, "interactions": interactions})
    )
    pytester.makepyfile(test_bg=BACKGROUND_TEST)
    result = pytester.runpytest("--costsim", "--costsim-report", "out.json")
    result.assert_outcomes(passed=1)
    entry = _report(pytester)["tests"]["test_bg.py::test_background"]  # type: ignore[index]
    assert entry["cost_usd"] == "0.005775" and entry["unrecorded_calls"] == 0


def test_a_what_if_that_cannot_act_says_why(project: pytest.Pytester) -> None:
    """A routing what-if for an agent with no pattern changes nothing: its column was the
    tests' own cost with no word of why (a trial read it as "routing saves nothing"). The
    strategy's notes now follow the column's legend, in the terminal and the reports."""
    project.makepyfile(test_agent=REPLAY + "\ndef test_two():\n    _replay(2)\n")
    result = project.runpytest(
        "--costsim",
        "--costsim-report",
        "out.json",
        "--costsim-report",
        "out.md",
        "--costsim-strategies",
        "routing:agents.support=claude-haiku-4-5",
    )
    result.stdout.fnmatch_lines(
        [
            "what-if 1: cost with routing:agents.support=claude-haiku-4-5*",
            "  note: agents.support routes an agent with no pattern*",
        ]
    )
    notes = _report(project)["notes"]
    assert isinstance(notes, list)
    assert any("agents.support routes an agent with no pattern" in note for note in notes)
    assert (
        "note: agents.support routes an agent with no pattern"
        in (project.path / "out.md").read_text()
    )


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_a_sent_request_that_cannot_be_read_is_said_not_checked(
    project: pytest.Pytester, workers: list[str]
) -> None:
    """The code sends a body costsim cannot read to an LLM path: the replay serves the
    recorded call, metered as recorded, and the run says its drift was not checked (it was
    silent, after a change of this session; before it, an internal error)."""
    project.makepyfile(
        test_agent=REPLAY
        + "\ndef test_cut():\n"
        + "    with vcr.use_cassette('agent.yaml', record_mode='none'):\n"
        + "        requests.post('https://api.anthropic.com/v1/messages', data=b'{\"model\": ',"
        + " headers={'content-type': 'application/json'})\n"
    )
    result = project.runpytest("--costsim", "--costsim-report", "out.json", *workers)
    result.assert_outcomes(passed=1)
    text = " ".join(result.stdout.str().split())
    assert "test_agent.py::test_cut: drift not checked, the request it sent is unreadable:" in text
    assert "interaction 0: request body" in text
    notes = _report(project)["notes"]
    assert isinstance(notes, list) and any("drift not checked" in n for n in notes)
