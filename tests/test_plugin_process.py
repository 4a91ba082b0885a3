"""The metering process (:mod:`costsim.plugin.helper`): where a second core is free, calls are
metered beside the tests. It must give every figure, file and failure that metering in the
test process gives, keep the test process light, and never let a lost call go unsaid."""

from __future__ import annotations

import json
import pickle
import re
import shutil
from typing import Any

import pytest

from costsim.plugin import recorder
from costsim.plugin.helper import ENV
from costsim.plugin.run import Setup
from tests.conftest import EXAMPLES

pytest_plugins = ["pytester"]

SUITE = """
import json

import pytest
import requests
import vcr
import yaml

with open("agent.yaml") as f:
    RECORDED = [json.loads(i["request"]["body"]) for i in yaml.safe_load(f)["interactions"]]


def _replay(n, change=None):
    with vcr.use_cassette("agent.yaml", record_mode="none"):
        for body in RECORDED[:n]:
            requests.post("https://api.anthropic.com/v1/messages", json=(change or dict)(body))


@pytest.fixture(scope="module")
def warm():
    _replay(1)


@pytest.mark.parametrize("n", [1, 2, 3])
def test_replays(n, warm):
    _replay(n)


@pytest.mark.costsim_budget(prompt_tokens=100)
def test_over_budget():
    _replay(2)


def test_drifted():
    _replay(3, lambda b: {**b, "system": b["system"] + [{"type": "text", "text": "v2 " * 50}]})


def test_fixture(costsim):
    _replay(2)
    assert [c.usage.prompt_total for c in costsim.calls] == [2042, 2151]
    assert costsim.totals.prompt_tokens == 4193
"""

ARGS = (
    "--costsim",
    "--costsim-strategies",
    "caching:ttl=1h",
    "--costsim-save",
    "main",
    "--costsim-report",
    "out.json",
    "-v",
)


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    shutil.copy(EXAMPLES / "anthropic_support_agent.yaml", pytester.path / "agent.yaml")
    pytester.makepyfile(test_suite=SUITE)
    return pytester


def _run(pytester: pytest.Pytester, mode: str, *args: str) -> tuple[str, dict[str, Any], str]:
    """(the costsim part of the output, the JSON report, the saved baseline) in ``mode``."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(ENV, mode)
        result = pytester.runpytest_subprocess(*args)
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
    text = result.stdout.str()
    part = text[text.index("costsim: LLM calls replayed") :]
    part = re.sub(r" in [\d.]+s", "", part)  # the run's duration
    report = json.loads((pytester.path / "out.json").read_text())
    baseline = json.loads((pytester.path / ".costsim" / "main.json").read_text())
    baseline.pop("saved_at", None)
    return part, report, json.dumps(baseline, sort_keys=True)


def test_the_metering_process_gives_what_the_test_process_gives(
    project: pytest.Pytester,
) -> None:
    beside = _run(project, "1", *ARGS)
    here = _run(project, "0", *ARGS)
    assert beside == here
    part, report, _ = beside
    assert "test_over_budget: prompt_tokens 4,193 over the budget of 100" in " ".join(part.split())
    assert report["tests"]["test_suite.py::test_drifted"]["drifted_calls"] == 3
    assert "<module fixtures: test_suite.py>" in report["tests"]
    assert all("what_if" in figures for figures in report["tests"].values())
    # and a comparison with the saved baseline, in the metering process
    compared = project.runpytest_subprocess("--costsim", "--costsim-compare", "main")
    compared.assert_outcomes(passed=6)


TRACE_MODULES = """
import sys

def pytest_sessionfinish(session):
    heavy = sorted(m for m in ("costsim.engine", "costsim.pricing.prices", "genai_prices",
                               "tiktoken", "costsim.providers.normalise") if m in sys.modules)
    with open("modules.json", "w") as f:
        f.write(repr(heavy))
"""


def test_the_test_process_imports_nothing_heavy(project: pytest.Pytester) -> None:
    """The engine, the price lists and the tokenizers load in the metering process only."""
    project.makeconftest(TRACE_MODULES)
    project.makepyfile(
        test_suite=SUITE.split("@pytest.mark.costsim_budget", maxsplit=1)[
            0
        ]  # no fixture, no budget
    )
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(ENV, "1")
        result = project.runpytest_subprocess("--costsim")
    result.assert_outcomes(passed=3)
    assert (project.path / "modules.json").read_text() == "[]"
    result.stdout.fnmatch_lines(["*TOTAL*12*$*"])


KILL = """
import os
import signal

import multiprocessing
import pytest


def pytest_collection_finish(session):
    for child in multiprocessing.active_children():
        if child.name == "costsim-meter":
            os.kill(child.pid, signal.SIGKILL)
            child.join()
"""


def test_a_metering_process_that_dies_is_reported_never_silent(
    project: pytest.Pytester,
) -> None:
    project.makeconftest(KILL)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(ENV, "1")
        result = project.runpytest_subprocess("--costsim")
    result.assert_outcomes(passed=5, failed=1)  # the user's results are all there
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    text = " ".join(result.stdout.str().split())
    assert "costsim's metering process stopped" in text
    assert "are not all counted" in text
    assert "INTERNALERROR" not in text


class _Pipe:
    """A connection that pickles what it carries, as a real one does."""

    def __init__(self) -> None:
        self.sent: list[Any] = []

    def send(self, message: Any) -> None:
        self.sent.append(pickle.loads(pickle.dumps(message)))


def test_a_note_the_pipe_cannot_carry_loses_only_itself() -> None:
    pipe = _Pipe()
    notes = recorder.Recorder(None, pipe)  # type: ignore[arg-type]
    notes.observe("a.yaml", 0, _request(b"{}"), {"status": {"code": 200}})
    notes.observe("a.yaml", 1, _request(b"{}"), {"status": {"code": 200}, "odd": lambda: 0})
    notes.observe("a.yaml", 2, _request(b"{}"), {"status": {"code": 200}})
    notes._flush()
    carried = [item[3] for _, batch in pipe.sent for item in batch]
    assert carried == [0, 2]
    assert len(notes.internal_errors) == 1
    assert "a.yaml interaction 1" in notes.internal_errors[0]


def _request(body: bytes) -> Any:
    class Request:
        method, uri, headers = "POST", "https://api.anthropic.com/v1/messages", {}

    request = Request()
    request.body = body  # type: ignore[attr-defined]
    return request


def test_setup_travels_whole() -> None:
    """What the metering process is told at the start is plain data."""
    setup = Setup(drift="fail", notes=("a note",))
    assert pickle.loads(pickle.dumps(setup)) == setup
