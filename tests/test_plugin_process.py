"""The metering process (:mod:`costsim.plugin.helper`): where a second core is free, calls are
metered beside the tests. It must give every figure, file and failure that metering in the
test process gives, keep the test process light, and never let a lost call go unsaid."""

from __future__ import annotations

import json
import pickle
import re
import shutil
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import yaml

from costsim.api.gates import Budget
from costsim.plugin import recorder
from costsim.plugin.helper import ENV
from costsim.plugin.run import Run, Setup
from tests.conftest import EXAMPLES, REPLAY

pytest_plugins = ["pytester"]

SUITE = (
    REPLAY
    + """
import pytest


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
)

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


WHERE = """
from costsim.plugin import hooks


def pytest_sessionfinish(session):
    with open("where.txt", "w") as f:
        f.write(type(session.config.stash[hooks.SESSION]).__name__)
"""


def _run(pytester: pytest.Pytester, mode: str, *args: str) -> tuple[str, dict[str, Any], str]:
    """(the costsim part of the output, the JSON report, the saved baseline) in ``mode``,
    checked to be metered where ``mode`` says: beside the tests (1) or in their process (0)."""
    pytester.makeconftest(WHERE)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(ENV, mode)
        result = pytester.runpytest_subprocess(*args)
    where = (pytester.path / "where.txt").read_text()
    assert where == {"1": "Recorder", "0": "LocalState"}[mode], where
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
    text = result.stdout.str()
    part = text[text.index("costsim: LLM calls replayed") :]
    part = re.sub(r" in [\d.]+s( \([\d:]+\))?", "", part)  # the run's duration
    # and the rule around the summary, as long as the duration (a run over 10 s: one less =)
    part = re.sub(r"^=+ (.*?) =+$", r"\1", part, flags=re.MULTILINE)
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

def pytest_unconfigure(config):  # after the summary: it prints in the test process too
    heavy = sorted(m for m in ("costsim.engine", "costsim.pricing.prices", "genai_prices",
                               "tiktoken", "costsim.providers.normalise", "costsim.render.text",
                               "tabulate", "costsim.api.testing") if m in sys.modules)
    with open("modules.json", "w") as f:
        f.write(repr(heavy))
"""


def test_the_test_process_imports_nothing_heavy(project: pytest.Pytester) -> None:
    """The engine, the price lists and the tokenizers load in the metering process only, to
    the end of the run (the summary's list of tests vcrpy could not serve loaded them all,
    0.2 s: --costsim's overhead went from +5% to +14%)."""
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


ONE_TEST = "\ndef test_two():\n    _replay(2)\n"

KILL = """
import os
import signal
import time

from costsim.plugin import hooks


def pytest_collection_finish(session):
    os.kill(session.config.stash[hooks.SESSION].pid, signal.SIGKILL)
    time.sleep(0.2)
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
    # the fixture raises: the test's assertions are never checked against no calls at all
    assert "MeteringError" in text


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
    carried = [item[4] for _, batch in pipe.sent for item in batch]
    assert carried == [0, 2]
    assert len(notes.internal_errors) == 1
    assert "a.yaml interaction 1" in notes.internal_errors[0]


def _request(body: bytes) -> Any:
    class Request:
        method, uri, headers = "POST", "https://api.anthropic.com/v1/messages", {}

    request = Request()
    request.body = body  # type: ignore[attr-defined]
    return request


def test_setup_and_run_travel_whole(tmp_path: Path) -> None:
    """What the metering process is told is plain data: at the start (inherited through the
    fork, and fit for a pipe) and at the end (through the pipe)."""
    setup = Setup(drift="fail", notes=("a note",))
    assert pickle.loads(pickle.dumps(setup)) == setup
    run = Run(
        tmp_path,
        None,
        0,
        collect_only=False,
        options={"strategies": "caching"},
        selected=frozenset({"t.py::a"}),
        order=("t.py::a", "t.py::b"),
        deselected=frozenset({"t.py::b"}),
        whole_files=frozenset({"t.py"}),
        budgets={"t.py::a": Budget(prompt_tokens=10)},
        tolerances={"t.py::a": {"cost": 0.05}},
        usage_errors=("t.py::a: a bad marker",),
        internal_errors=("t.py::a: a.yaml interaction 0: costsim could not note it",),
    )
    assert pickle.loads(pickle.dumps(run)) == run


NOTE_FAILS = """
from costsim.plugin import recorder

_of = recorder.PlainRequest.of
_seen = []


def _failing_once(request):
    _seen.append(1)
    if len(_seen) == 2:
        raise RuntimeError("planted")
    return _of(request)


recorder.PlainRequest.of = staticmethod(_failing_once)
"""


def test_the_test_process_s_own_errors_reach_the_report_once(project: pytest.Pytester) -> None:
    project.makeconftest(NOTE_FAILS)
    project.makepyfile(test_suite=SUITE.split("@pytest.fixture", maxsplit=1)[0] + ONE_TEST)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(ENV, "1")
        result = project.runpytest_subprocess("--costsim", "--costsim-report", "out.json")
    result.assert_outcomes(passed=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # costsim's own error fails the run
    report = json.loads((project.path / "out.json").read_text())
    noted = [e for e in report["internal_errors"] if "could not note it" in e]
    assert len(noted) == 1 and "RuntimeError: planted" in noted[0]
    text = " ".join(result.stdout.str().split())
    assert text.count("RuntimeError: planted") == 1


def _both(pytester: pytest.Pytester, *args: str) -> tuple[str, str]:
    """The costsim part of the output, in the metering process and in the test process."""
    parts = []
    for mode in ("1", "0"):
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv(ENV, mode)
            result = pytester.runpytest_subprocess("--costsim", *args)
        text = result.stdout.str()
        assert "INTERNALERROR" not in text + result.stderr.str()
        parts.append(re.sub(r" in [\d.]+s", "", text[text.index("costsim:") :]))
    return parts[0], parts[1]


TWICE = """
import json
import os

import pytest
import requests
import vcr


@pytest.mark.parametrize("folder", ["one", "two"])
def test_in_its_folder(folder, monkeypatch):
    monkeypatch.chdir(folder)
    with open("agent.yaml") as f:
        import yaml
        bodies = [json.loads(i["request"]["body"]) for i in yaml.safe_load(f)["interactions"]]
    with vcr.use_cassette("agent.yaml", record_mode="none"):
        for body in bodies[:2]:
            requests.post("https://api.anthropic.com/v1/messages", json=body)
"""


def test_a_test_that_changes_folder_meters_its_own_cassette(pytester: pytest.Pytester) -> None:
    """Two cassettes of one relative name, each in the folder its test moved to."""
    text = (EXAMPLES / "anthropic_support_agent.yaml").read_text()
    for folder, scale in (("one", 1), ("two", 2)):
        (pytester.path / folder).mkdir()
        doubled = re.sub(
            r'"input_tokens":(\d+)',
            lambda m, scale=scale: f'"input_tokens":{int(m[1]) * scale}',
            text,
        )
        (pytester.path / folder / "agent.yaml").write_text(doubled)
    pytester.makepyfile(test_folders=TWICE)
    beside, here = _both(pytester, "-p", "no:randomly")
    assert beside == here
    assert "one/agent.yaml" not in beside  # names are relative to where the run started
    rows = [line for line in here.splitlines() if "test_in_its_folder" in line]
    assert len(rows) == 2 and rows[0].split()[-1] != rows[1].split()[-1]


def test_calls_noted_from_many_threads_are_all_metered() -> None:
    """A real metering process, noted to by eight threads at once (an SDK's pool): every call
    arrives and is metered, none is lost or garbled on the pipe."""
    cassette = EXAMPLES / "anthropic_support_agent.yaml"
    interaction = yaml.safe_load(cassette.read_text())["interactions"][0]
    stored = recorder.PlainRequest(
        interaction["request"]["method"],
        interaction["request"]["uri"],
        interaction["request"]["body"],
        interaction["request"]["headers"],
    )
    notes = recorder.Recorder.start(Setup())
    assert notes is not None
    try:

        def call(n: int) -> None:  # each its own interaction: every note carries its bodies
            notes.observe(str(cassette), n, stored, interaction["response"], stored)

        with notes.attributing("t::threads"), ThreadPoolExecutor(8) as pool:  # as pytest does
            list(pool.map(call, range(2_000)))
        metered = notes.calls("t::threads")
    finally:
        notes.close()
    assert len(metered) == 2_000 and not notes.internal_errors
    assert {m.usage.prompt_total for m in metered} == {2042}


FORKS = (
    SUITE.split("@pytest.fixture", maxsplit=1)[0]
    + """
import os


def test_forks():
    _replay(2)
    pid = os.fork()
    if pid == 0:  # a child the test forks: its calls are its own
        _replay(3)
        os._exit(0)
    os.waitpid(pid, 0)
    _replay(1)
"""
)


def test_a_forked_child_counts_nothing_twice(project: pytest.Pytester) -> None:
    project.makepyfile(test_suite=FORKS)
    beside, here = _both(project)
    assert beside == here
    assert re.search(r"test_forks\s+3\b", here)


BROKEN_SUMMARY = """
import costsim.plugin.local as local

def explode(*args, **kwargs):
    raise RuntimeError("boom")

local.summary_lines = explode
"""


def test_a_summary_that_fails_is_a_costsim_failure_in_both(project: pytest.Pytester) -> None:
    project.makeconftest(BROKEN_SUMMARY)
    project.makepyfile(
        test_suite=SUITE.split("@pytest.fixture", maxsplit=1)[0]
        + "\ndef test_one():\n    _replay(1)\n"
    )
    beside, here = _both(project)
    assert beside == here
    assert "costsim internal error: summary: RuntimeError: boom" in " ".join(here.split())
    assert "Traceback" not in beside


DAEMON = """
import multiprocessing
import sys

import pytest


def run(queue):
    queue.put(pytest.main(["-q", "-p", "no:cacheprovider", "--costsim", "test_suite.py"]))


if __name__ == "__main__":
    queue = multiprocessing.get_context("fork").Queue()
    worker = multiprocessing.get_context("fork").Process(target=run, args=(queue,), daemon=True)
    worker.start()
    worker.join()
    sys.exit(queue.get())
"""


def test_a_run_inside_a_daemonic_worker_still_meters(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_suite=SUITE.split("@pytest.fixture", maxsplit=1)[0]
        + "\ndef test_one():\n    _replay(2)\n"
    )
    (project.path / "orchestrate.py").write_text(DAEMON)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(ENV, "1")
        result = project.run(sys.executable, "orchestrate.py")
    assert result.ret == 0, result.stdout.str() + result.stderr.str()
    assert "internal error" not in result.stdout.str()
    result.stdout.fnmatch_lines(["*test_one*2*4,193*"])
