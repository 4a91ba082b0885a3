"""Installing costsim never breaks a test run; a costsim failure reads last; drift and unpriced
figures are actionable."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from costsim.metering.meter import Meter
from costsim.providers.normalise import load_trace
from tests.conftest import EXAMPLES, said
from tests.test_pytest_plugin import GROWN_SYSTEM, REPLAY

pytest_plugins = ["pytester"]


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    shutil.copy(EXAMPLES / "anthropic_support_agent.yaml", pytester.path / "agent.yaml")
    return pytester


@pytest.mark.parametrize("flag", [(), ("--costsim",)], ids=["off", "on"])
def test_a_run_without_xdist_works(pytester: pytest.Pytester, flag: tuple[str, ...]) -> None:
    """Where pytest-xdist is absent its hooks are unknown: costsim's must be optional."""
    pytester.makepyfile(test_ok="def test_ok():\n    assert True\n")
    result = pytester.runpytest_subprocess("-p", "no:xdist", *flag)
    result.assert_outcomes(passed=1)
    assert result.ret == pytest.ExitCode.OK
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()


def test_without_the_flag_nothing_is_read(pytester: pytest.Pytester) -> None:
    """Settings costsim would refuse are never looked at while costsim is off."""
    pytester.makeini("[pytest]\n")
    pytester.makepyprojecttoml('[tool.costsim]\nbudgets = "all"\ndrift = "loud"\n')
    pytester.makepyfile(test_ok="def test_ok():\n    pass\n")
    result = pytester.runpytest_subprocess()
    result.assert_outcomes(passed=1)
    assert result.ret == pytest.ExitCode.OK and "costsim:" not in result.stdout.str()


BROKEN = """
import costsim.plugin.session as session

def explode(self):
    raise RuntimeError("boom")

session.CostsimSession.failures = explode
"""


def test_an_internal_error_keeps_the_test_results(project: pytest.Pytester) -> None:
    project.makeconftest(BROKEN)
    project.makepyfile(
        test_agent=REPLAY + "\ndef test_two():\n    _replay(2)\n\ndef test_bad():\n    assert 0\n"
    )
    result = project.runpytest_subprocess("--costsim")  # the conftest patches costsim
    result.assert_outcomes(passed=1, failed=1)  # the user's results are all there
    output = result.stdout.str()
    assert "INTERNALERROR" not in output
    result.stdout.fnmatch_lines(
        [
            "*costsim: the run fails*",
            "FAILED costsim internal error: *finish: RuntimeError: boom (a costsim bug*",
        ]
    )
    assert output.splitlines()[-1].count("1 failed, 1 passed, 1 costsim failure")


def test_a_costsim_failure_is_in_the_last_line(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_agent=REPLAY + "\nimport pytest\n\n@pytest.mark.costsim_budget(prompt_tokens=10)\n"
        "def test_two():\n    _replay(2)\n"
    )
    result = project.runpytest("--costsim")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    lines = result.stdout.str().splitlines()
    assert "1 passed, 1 costsim failure" in lines[-1]
    assert lines[-2].startswith("FAILED test_agent.py::test_two: prompt_tokens 4,193 over")


def _unprice_second_call(project: pytest.Pytester) -> None:
    document = yaml.safe_load((project.path / "agent.yaml").read_text())
    interaction = document["interactions"][1]
    for part, key in (
        (interaction["request"], "body"),
        (interaction["response"]["body"], "string"),
    ):
        body = json.loads(part[key])
        body["model"] = "claude-imaginary-9"
        part[key] = json.dumps(body)
    (project.path / "agent.yaml").write_text(yaml.safe_dump(document))


def _save_then_grow(project: pytest.Pytester, *extra: str) -> pytest.RunResult:
    project.makepyfile(test_agent=REPLAY + GROWN_SYSTEM + "\ndef test_two():\n    _replay(2)\n")
    project.runpytest("--costsim", "--costsim-save", "main").assert_outcomes(passed=1)
    grown = GROWN_SYSTEM.replace('" extra" * 3000', '" extra" * 250')  # +~12% prompt tokens
    project.makepyfile(test_agent=REPLAY + grown + "\ndef test_two():\n    _replay(2, grown)\n")
    return project.runpytest("--costsim", "--costsim-compare", "main", *extra)


def test_an_unpriced_test_is_gated_on_its_tokens(project: pytest.Pytester) -> None:
    _unprice_second_call(project)
    result = _save_then_grow(project)  # the default gate, cost:5%
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    text = " ".join(result.stdout.str().split())  # wrapped lines read as one
    assert (
        "test_agent.py::test_two: cost not compared (1 unpriced call); gated on "
        "prompt_tokens:5%, output_tokens:5% instead"
    ) in text
    result.stdout.fnmatch_lines(["FAILED test_agent.py::test_two: prompt_tokens rose +1*%*"])


def test_the_unpriced_fallback_is_a_project_setting(project: pytest.Pytester) -> None:
    _unprice_second_call(project)
    project.makepyprojecttoml('[tool.costsim]\nunpriced_fallback = "prompt_tokens:50%"\n')
    result = _save_then_grow(project)
    assert result.ret == pytest.ExitCode.OK
    assert "gated on prompt_tokens:50% instead" in " ".join(result.stdout.str().split())


@pytest.mark.parametrize("workers", [(), ("-n", "2")], ids=["serial", "xdist"])
def test_drift_can_fail_the_run_and_lists_each_call(
    project: pytest.Pytester, workers: tuple[str, ...]
) -> None:
    project.makepyfile(
        test_agent=REPLAY
        + GROWN_SYSTEM
        + "\ndef test_grown():\n    _replay(2, grown)\n"
        + "\ndef test_sampled():\n    _replay(1, lambda b: {**b, 'temperature': 0.1})\n"
        + "\ndef test_same():\n    _replay(2, reordered)\n"
    )
    result = project.runpytest_subprocess(
        "--costsim", "--costsim-drift=fail", "--costsim-report", "out.json", *workers
    )
    result.assert_outcomes(passed=3)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*FAILED costsim: 3 replayed calls drifted*"])
    drift = json.loads((project.path / "out.json").read_text())["drift"]
    found = sorted(
        (d["test"], d["interaction"], d["kind"], d["prompt_tokens_delta"]) for d in drift
    )
    call = load_trace(project.path / "agent.yaml").calls[0]
    grown = round(3000 * Meter().coefficients(call).as_dict()["raw"])  # " extra" is 1 token
    assert found == [
        ("test_agent.py::test_grown", 0, "system", grown),
        ("test_agent.py::test_grown", 1, "system", grown),
        ("test_agent.py::test_sampled", 0, "sampling parameters only", 0),
    ]


def test_the_plugin_says_where_it_saved_a_baseline(project: pytest.Pytester) -> None:
    project.makepyfile(test_agent=REPLAY + "\ndef test_two():\n    _replay(2)\n")
    result = project.runpytest("--costsim", "--costsim-save", "main")
    result.stdout.fnmatch_lines(["baseline saved: .costsim/main.json (1 test(s); compare with*"])


def test_a_failure_to_set_up_still_runs_the_tests(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(
        "import costsim.plugin.vcr_patch as s\n\n"
        "def explode(self):\n    raise ImportError('vcr is broken')\n\n"
        "s.VcrPatch.install = explode\n"
    )
    pytester.makepyfile(test_ok="def test_ok():\n    pass\n")
    result = pytester.runpytest_subprocess("--costsim")  # the conftest patches costsim
    result.assert_outcomes(passed=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        ["FAILED costsim internal error: setting up: ImportError: vcr is broken*"]
    )
    assert "1 passed, 1 costsim failure" in result.stdout.str().splitlines()[-1]


def test_a_bad_marker_under_xdist_fails_the_costsim_part_not_the_run(
    project: pytest.Pytester,
) -> None:
    """A worker cannot stop the run with a usage error (xdist would lose every result)."""
    project.makepyfile(
        test_agent=REPLAY + "\nimport pytest\n\n@pytest.mark.costsim_budget(prompt_tokenz=10)\n"
        "def test_two():\n    _replay(2)\n\ndef test_other():\n    pass\n"
    )
    result = project.runpytest_subprocess("--costsim", "-n", "2")
    result.assert_outcomes(passed=2)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
    text = " ".join(result.stdout.str().split())
    assert text.count("unknown budget key") == 1  # every worker finds it; it is one error
    assert "2 passed, 1 costsim failure" in result.stdout.str().splitlines()[-1]


WORKER_BREAKS = """
import os
import costsim.plugin.session as session

if os.environ.get("PYTEST_XDIST_WORKER"):
    def explode(self):
        raise RuntimeError("no figures")
    session.CostsimSession.costs = explode
"""


def test_a_worker_that_cannot_send_its_figures_is_reported(project: pytest.Pytester) -> None:
    project.makeconftest(WORKER_BREAKS)
    project.makepyfile(test_agent=REPLAY + "\ndef test_two():\n    _replay(2)\n")
    result = project.runpytest_subprocess("--costsim", "-n", "2")
    result.assert_outcomes(passed=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # never a silent "no LLM calls"
    assert "a worker's figures: RuntimeError: no figures" in " ".join(result.stdout.str().split())


def test_notes_and_warnings_show_when_no_call_could_be_metered(project: pytest.Pytester) -> None:
    document = yaml.safe_load((project.path / "agent.yaml").read_text())
    document["interactions"] = document["interactions"][:1]
    document["interactions"][0]["response"]["body"]["string"] = "<html>gateway error</html>"
    (project.path / "agent.yaml").write_text(yaml.safe_dump(document))
    project.makepyfile(test_agent=REPLAY + "\ndef test_one():\n    _replay(1)\n")
    result = project.runpytest("--costsim", "--costsim-save", "main")
    text = " ".join(result.stdout.str().split())
    # its one call was replayed but cannot be read: the test's cost is unknown, never $0
    assert "test_agent.py::test_one 1 0 0 - unpriced" in text
    assert "unreadable: test_agent.py::test_one: agent.yaml: interaction 0" in text
    assert result.ret == pytest.ExitCode.TESTS_FAILED


def test_saving_keeps_the_tests_a_run_did_not_collect(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_agent=REPLAY + "\ndef test_one():\n    _replay(1)\n\ndef test_two():\n    _replay(2)\n"
    )
    project.runpytest("--costsim", "--costsim-save", "main").assert_outcomes(passed=2)
    saved = project.path / ".costsim" / "main.json"
    before = json.loads(saved.read_text())["tests"]
    project.runpytest("--costsim", "--costsim-save", "main", "--collect-only")
    assert json.loads(saved.read_text())["tests"] == before  # nothing ran: nothing saved
    result = project.runpytest("--costsim", "--costsim-save", "main", "-k", "test_one")
    result.assert_outcomes(passed=1, deselected=1)
    assert json.loads(saved.read_text())["tests"] == before  # test_two kept, not dropped
    text = " ".join(result.stdout.str().split())
    assert "(2 test(s): 1 from this run, 1 kept from before (not run this time);" in text
    compare = project.runpytest("--costsim", "--costsim-compare", "main", "-k", "test_one")
    text = " ".join(compare.stdout.str().split())
    assert "1 test(s) of baseline main deselected this run" in text
    assert "made no LLM call" not in text
    # renamed: gone from a file the run collected whole, and named
    renamed = REPLAY + "\ndef test_one():\n    _replay(1)\n\ndef test_second():\n    _replay(2)\n"
    project.makepyfile(test_agent=renamed)
    compare = project.runpytest("--costsim", "--costsim-compare", "main")
    text = " ".join(compare.stdout.str().split())
    assert (
        "1 test(s) of baseline main are no longer collected (renamed or removed?): "
        "test_agent.py::test_two"
    ) in text
    assert (
        "not in baseline main (new, or not saved: it failed then): test_agent.py::test_second"
    ) in text


@pytest.mark.parametrize("workers", [(), ("-n", "2")], ids=["serial", "xdist"])
def test_saving_drops_tests_that_no_longer_exist(
    project: pytest.Pytester, workers: tuple[str, ...]
) -> None:
    """A test removed from a file the run collected whole is gone, not "not run this time";
    a test of a file the run named only in part, or did not collect, is kept."""
    two = "\ndef test_one():\n    _replay(1)\n\ndef test_two():\n    _replay(2)\n"
    project.makepyfile(test_agent=REPLAY + two, test_other=REPLAY + two)
    project.runpytest_subprocess("--costsim", "--costsim-save", "main", *workers)
    saved = project.path / ".costsim" / "main.json"
    assert len(json.loads(saved.read_text())["tests"]) == 4
    # test_two of test_agent.py is deleted; a run of only test_other.py::test_one
    project.makepyfile(test_agent=REPLAY + "\ndef test_one():\n    _replay(1)\n")
    result = project.runpytest_subprocess(
        "--costsim", "--costsim-save", "main", "test_other.py::test_one", *workers
    )
    result.assert_outcomes(passed=1)
    assert len(json.loads(saved.read_text())["tests"]) == 4  # nothing here was whole
    result = project.runpytest_subprocess(
        "--costsim", "--costsim-save", "main", "-k", "not test_one", *workers
    )
    tests = json.loads(saved.read_text())["tests"]
    assert "test_agent.py::test_two" not in tests
    assert set(tests) == {
        "test_agent.py::test_one", "test_other.py::test_one", "test_other.py::test_two"
    }  # fmt: skip
    text = " ".join(result.stdout.str().split())
    assert "1 dropped (no longer collected, e.g. test_agent.py::test_two)" in text


def test_a_last_failed_run_drops_no_test(project: pytest.Pytester) -> None:
    """--lf leaves a file's passing tests out while collecting it, without deselecting them:
    they still exist, and keep their figures (the failed test is not saved: its calls stop
    where it failed; fixed, the --lf run saves it)."""
    failing = "\ndef test_one():\n    _replay(1)\n\ndef test_two():\n    _replay(2)\n    assert 0\n"
    project.makepyfile(test_agent=REPLAY + failing)
    project.runpytest_subprocess("--costsim", "--costsim-save", "main")
    saved = project.path / ".costsim" / "main.json"
    before = set(json.loads(saved.read_text())["tests"])
    assert before == {"test_agent.py::test_one"}
    project.makepyfile(test_agent=REPLAY + failing.replace("    assert 0\n", ""))
    result = project.runpytest_subprocess(
        "--costsim", "--costsim-save", "main", "--lf", "-p", "cacheprovider"
    )
    result.assert_outcomes(passed=1)
    assert set(json.loads(saved.read_text())["tests"]) == {*before, "test_agent.py::test_two"}
    assert "dropped" not in result.stdout.str()


SILENT_FILTER = """
def pytest_collection_modifyitems(items):
    items[:] = [item for item in items if not item.name.endswith("two")]
"""


@pytest.mark.parametrize("workers", [(), ("-n", "2")], ids=["serial", "xdist"])
def test_a_test_a_plugin_leaves_out_unannounced_is_kept(
    project: pytest.Pytester, workers: tuple[str, ...]
) -> None:
    """A conftest that drops items without deselecting them: the dropped test still exists
    (serially, and under xdist, whose controller collects nothing itself)."""
    two = "\ndef test_one():\n    _replay(1)\n\ndef test_two():\n    _replay(2)\n"
    project.makepyfile(test_agent=REPLAY + two)
    project.runpytest_subprocess("--costsim", "--costsim-save", "main", *workers)
    saved = project.path / ".costsim" / "main.json"
    assert len(json.loads(saved.read_text())["tests"]) == 2
    project.makeconftest(SILENT_FILTER)
    result = project.runpytest_subprocess("--costsim", "--costsim-save", "main", *workers)
    result.assert_outcomes(passed=1)
    assert len(json.loads(saved.read_text())["tests"]) == 2
    assert "dropped" not in result.stdout.str()


def test_a_pyargs_run_drops_no_test(project: pytest.Pytester) -> None:
    """--pyargs names tests by module: which file an argument names only part of is not
    known, so nothing is known to be whole."""
    two = "\ndef test_one():\n    _replay(1)\n\ndef test_two():\n    _replay(2)\n"
    project.makepyfile(test_agent=REPLAY + two)
    project.runpytest_subprocess("--costsim", "--costsim-save", "main")
    saved = project.path / ".costsim" / "main.json"
    result = project.runpytest_subprocess(
        "--costsim", "--costsim-save", "main", "--pyargs", "test_agent::test_one"
    )
    result.assert_outcomes(passed=1)
    assert len(json.loads(saved.read_text())["tests"]) == 2


def test_a_test_named_through_a_linked_file_keeps_its_siblings(
    project: pytest.Pytester,
) -> None:
    """Node ids name a linked file by the link, not by where it points."""
    two = "\ndef test_one():\n    _replay(1)\n\ndef test_two():\n    _replay(2)\n"
    (project.path / "shared").mkdir()
    (project.path / "shared" / "real.py").write_text(REPLAY + two)
    (project.path / "test_linked.py").symlink_to(project.path / "shared" / "real.py")
    project.runpytest_subprocess("--costsim", "--costsim-save", "main", "test_linked.py")
    saved = project.path / ".costsim" / "main.json"
    assert len(json.loads(saved.read_text())["tests"]) == 2
    project.runpytest_subprocess(
        "--costsim", "--costsim-save", "main", "test_linked.py::test_one"
    ).assert_outcomes(passed=1)
    assert len(json.loads(saved.read_text())["tests"]) == 2


@pytest.mark.parametrize("name", ["../../escape", "a/b", ".hidden", "x.json"])
def test_a_baseline_name_is_a_plain_name(project: pytest.Pytester, name: str) -> None:
    project.makepyfile(test_agent="def test_x():\n    pass\n")
    result = project.runpytest("--costsim", "--costsim-save", name)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert said(result.stderr.str(), "*baseline name * must be a plain name*"), result.stderr.str()


@pytest.mark.parametrize("value", ["cost:5%", ""])
def test_an_unpriced_fallback_must_gate_something(project: pytest.Pytester, value: str) -> None:
    project.makepyprojecttoml(f'[tool.costsim]\nunpriced_fallback = "{value}"\n')
    project.makepyfile(test_agent="def test_x():\n    pass\n")
    result = project.runpytest("--costsim")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert said(result.stderr.str(), "*unpriced_fallback * must name token or call tolerances*")


def test_estimated_and_drifted_calls_are_flagged_apart(project: pytest.Pytester) -> None:
    document = yaml.safe_load((project.path / "agent.yaml").read_text())
    response = json.loads(document["interactions"][0]["response"]["body"]["string"])
    del response["usage"]
    document["interactions"][0]["response"]["body"]["string"] = json.dumps(response)
    (project.path / "agent.yaml").write_text(yaml.safe_dump(document))
    project.makepyfile(
        test_agent=REPLAY + "\ndef test_two():\n    _replay(2, lambda b: {**b, 'temperature': 0})\n"
    )
    result = project.runpytest("--costsim")
    result.stdout.fnmatch_lines(["test_agent.py::test_two*2 (1 est., 2 drifted)*"])


def test_every_line_fits_the_terminal(project: pytest.Pytester) -> None:
    _unprice_second_call(project)
    project.makepyfile(
        test_agent=REPLAY
        + GROWN_SYSTEM
        + "".join(
            f"\ndef test_a_rather_long_test_name_for_case_{i}():\n    _replay(3, grown)\n"
            for i in range(3)
        )
    )
    result = project.runpytest(
        "--costsim", "--costsim-strategies", "caching:ttl=1h,routing:default=claude-haiku-4-5"
    )
    start = next(i for i, line in enumerate(result.outlines) if "costsim: LLM calls" in line)
    section = result.outlines[start:]
    assert all(len(line) <= 80 for line in section), max(section, key=len)
    assert any("what-if 2" in line for line in section)


def test_the_markdown_report_keeps_every_drift_detail(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_agent=REPLAY + GROWN_SYSTEM + "\ndef test_g():\n    _replay(1, grown)\n"
    )
    project.runpytest("--costsim", "--costsim-report", "r.md")
    text = (project.path / "r.md").read_text()
    assert "test_agent.py::test_g (agent.yaml #0) prompt +" in text
    assert "system changed (+18,000 chars)" in text


@pytest.mark.parametrize(
    ("vcrpy", "sdk_needs", "hint"),
    [
        ("7.0.0", ["httpx2<3,>=2.0.0"], True),
        ("7.0.0", ["httpx<1"], False),
        ("8.2.0", ["httpx2"], False),
    ],
)
def test_the_vcrpy_hint_only_when_an_sdk_needs_httpx2(
    monkeypatch: pytest.MonkeyPatch, vcrpy: str, sdk_needs: list[str], hint: bool
) -> None:
    from costsim.plugin import render

    monkeypatch.setattr(render, "version", lambda name: vcrpy)
    monkeypatch.setattr(render, "requires", lambda name: sdk_needs)
    lines = render._vcrpy_hint()
    assert bool(lines) is hint
    if hint:
        assert "upgrade to vcrpy 8.2 or newer" in lines[0]


def test_a_replayed_interaction_is_read_again_only_when_its_file_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from costsim.plugin import session as module

    reads: list[tuple[str, int]] = []

    def read(path: str, index: int, request: object, response: object) -> object:
        reads.append((path, index))
        return object()

    monkeypatch.setattr(module, "read_vcr_interaction", read)
    cassette = tmp_path / "c.yaml"
    cassette.write_text("interactions: []\n")
    state = module.CostsimSession()
    first = state._recorded(str(cassette), "c.yaml", 0, "sent", {}, "stored")
    assert state._recorded(str(cassette), "c.yaml", 0, "sent", {}, "stored") is first
    state._recorded(str(cassette), "c.yaml", 1, "sent", {}, "stored")
    cassette.write_text("interactions: [] # re-recorded\n")
    assert state._recorded(str(cassette), "c.yaml", 0, "sent", {}, "stored") is not first
    state._recorded(str(cassette), "c.yaml", 0, "sent", {}, None)  # recorded now: always read
    assert reads == [("c.yaml", 0), ("c.yaml", 1), ("c.yaml", 0), ("c.yaml", 0)]


def test_an_unpriced_call_several_tests_replay_is_listed_once(project: pytest.Pytester) -> None:
    """A trial: two tests replaying one cassette printed each of its unpriced lines twice,
    alike, naming no test."""
    _unprice_second_call(project)
    project.makepyfile(
        test_agent=REPLAY + "\ndef test_one():\n    _replay(2)\n\ndef test_two():\n    _replay(2)\n"
    )
    result = project.runpytest("--costsim")
    result.assert_outcomes(passed=2)
    lines = [line for line in result.stdout.lines if line.startswith("unpriced: ")]
    assert len(lines) == 1, result.stdout.str()
    assert lines[0].startswith("unpriced: agent.yaml interaction 1: ")
    assert " ".join(result.stdout.str().split()).count("(replayed 2 times)") == 1


def test_the_markdown_report_right_aligns_figures_and_keeps_a_pipe_in_its_cell(
    project: pytest.Pytester,
) -> None:
    """A trial: the report's table was ``|---------|`` (GitHub renders it left-aligned) where
    every other Markdown table of costsim right-aligns figures."""
    project.makepyfile(
        test_agent=REPLAY
        + "\nimport pytest\n\n@pytest.mark.parametrize('x', ['a|b'])\n"
        + "def test_p(x):\n    _replay(2)\n"
    )
    project.runpytest("--costsim", "--costsim-report", "r.md").assert_outcomes(passed=1)
    lines = (project.path / "r.md").read_text().splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith("| test |"))
    rule = lines[head + 1]
    assert rule.startswith("|:---|---:|") and set(rule) <= set("|:-"), rule
    row = lines[head + 2]
    assert row.startswith("| test_agent.py::test_p\\[a\\|b\\] |"), row
    assert row.count(" | ") == lines[head].count(" | ")  # the pipe split no cell
