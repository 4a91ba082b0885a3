"""Installing costsim never breaks a test run; a costsim failure reads last; drift and unpriced
figures are actionable."""

from __future__ import annotations

import json
import shutil

import pytest
import yaml

from costsim.metering.meter import Meter
from costsim.providers.normalise import load_trace
from tests.conftest import EXAMPLES
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
            "FAILED costsim internal error: _finish: RuntimeError: boom (a costsim bug*",
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
    result.stdout.fnmatch_lines(
        [
            "test_agent.py::test_two: cost not compared (1 unpriced call(s)); gated on",
            "  prompt_tokens:5%, output_tokens:5% instead",
            "*FAILED test_agent.py::test_two: prompt_tokens rose +1*% (4193 -> *",
        ]
    )


def test_the_unpriced_fallback_is_a_project_setting(project: pytest.Pytester) -> None:
    _unprice_second_call(project)
    project.makepyprojecttoml('[tool.costsim]\nunpriced_fallback = "prompt_tokens:50%"\n')
    result = _save_then_grow(project)
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["*cost not compared*gated on", "  prompt_tokens:50% instead"])


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
    result.stdout.fnmatch_lines(["*FAILED costsim: 3 replayed call(s) drifted*"])
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
    result.stdout.fnmatch_lines(["baseline saved: *.costsim/main.json (compare with*"])


def test_a_failure_to_set_up_still_runs_the_tests(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(
        "import costsim.plugin.session as s\n\n"
        "def explode(self):\n    raise ImportError('vcr is broken')\n\n"
        "s.CostsimSession.install = explode\n"
    )
    pytester.makepyfile(test_ok="def test_ok():\n    pass\n")
    result = pytester.runpytest_subprocess("--costsim")  # the conftest patches costsim
    result.assert_outcomes(passed=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        ["FAILED costsim internal error: setting up: ImportError: vcr is broken*"]
    )
    assert "1 passed, 1 costsim failure" in result.stdout.str().splitlines()[-1]
