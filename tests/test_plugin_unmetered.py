"""``pytest --costsim`` on an interaction that looks like an LLM call costsim cannot meter:
counted and said as ``costsim report`` says it, from the same classification, never dropped.

A trial replayed Ollama's native ``POST /api/chat``: the plugin printed "no LLM calls were
replayed or recorded through vcrpy" and its JSON report had no note, while ``costsim report``
on the same cassette counted "1 LLM-looking interaction not metered" with an
``unrecognised-llm-call`` note.
"""

from __future__ import annotations

import json
import shutil
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import requests  # noqa: F401  (imported here so pytester's in-process runs share one copy)
import vcr  # noqa: F401

from costsim.plugin.helper import ENV
from tests.conftest import EXAMPLES, REPLAY, said
from tests.test_hostile_input import interaction as recorded
from tests.test_hostile_input import run_cli, write_yaml
from tests.test_real_world_recordings import BEDROCK

pytest_plugins = ["pytester"]

OLLAMA = "http://localhost:11434/api/chat"
CHAT = {"model": "llama3.2:3b", "messages": [{"role": "user", "content": "hi"}], "stream": False}
OLLAMA_REPLY = {
    "model": "llama3.2:3b",
    "message": {"role": "assistant", "content": "File category 31."},
    "done": True,
    "prompt_eval_count": 3380,
    "eval_count": 22,
}
TITAN_EMBED = f"{BEDROCK}amazon.titan-embed-text-v2%3A0/invoke"

TESTS = f"""
def test_native():
    with vcr.use_cassette("native.yaml", record_mode="none"):
        requests.post({OLLAMA!r}, json={CHAT!r})

def test_agent():
    _replay(1)

def test_embeds():
    with vcr.use_cassette("embed.yaml", record_mode="none"):
        requests.post({TITAN_EMBED!r}, json={{"inputText": "hi"}})
"""


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    shutil.copy(EXAMPLES / "anthropic_support_agent.yaml", pytester.path / "agent.yaml")
    write_yaml(pytester.path / "native.yaml", [recorded(OLLAMA, CHAT, OLLAMA_REPLY)])
    reply = {"embedding": [0.01, 0.02], "inputTextTokenCount": 3}
    write_yaml(pytester.path / "embed.yaml", [recorded(TITAN_EMBED, {"inputText": "hi"}, reply)])
    return pytester


def _report(pytester: pytest.Pytester) -> dict[str, Any]:
    document: dict[str, Any] = json.loads((pytester.path / "out.json").read_text())
    schema = json.loads((resources.files("costsim") / "schemas" / "pytest.schema.json").read_text())
    jsonschema.validate(document, schema)
    return document


def _joined(output: str) -> str:
    """``output`` with its lines joined (costsim wraps what it says to the terminal)."""
    return " ".join(output.split())


def _report_note(path: Path) -> str:
    """What ``costsim report`` notes of the cassette's one interaction it cannot meter."""
    result = run_cli("report", "--format", "json", path)
    assert result.exit_code == 0, result.output
    (note,) = json.loads(result.stdout)["notes"]
    assert note["kind"] == "unrecognised-llm-call"
    message: str = note["message"]
    return message


@pytest.mark.parametrize(
    ("meter_process", "workers"),
    [("1", []), ("0", []), ("0", ["-n", "2"])],
    ids=["metering-process", "test-process", "xdist"],
)
def test_an_llm_looking_call_costsim_cannot_meter_is_counted_and_said(
    project: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    meter_process: str,
    workers: list[str],
) -> None:
    """Alike wherever the calls are metered: beside the tests, in their process, or in
    xdist workers that send their figures and notes to the controller."""
    project.makepyfile(test_calls=REPLAY + TESTS)
    monkeypatch.setenv(ENV, meter_process)
    result = project.runpytest_subprocess("--costsim", "--costsim-report", "out.json", *workers)
    result.assert_outcomes(passed=3)
    assert result.ret == pytest.ExitCode.OK  # a note, as in report: not a failure of the run
    text = result.stdout.str()
    # the answer says it beside the figure, a lower bound, as report does
    assert said(text, "*1 LLM call in 2 tests: ≥$*; 1 LLM-looking interaction not metered.*")
    row = next(line for line in result.stdout.lines if "test_native" in line and "(1 " in line)
    assert "0 (1 not metered)" in row and "unknown" in row, row  # its cost unknown, not $0
    message = _report_note(project.path / "native.yaml")
    assert "POST localhost/api/chat looks like an LLM call" in message
    note = (
        f"[unrecognised-llm-call] test_calls.py::test_native: native.yaml: interaction 0: {message}"
    )
    assert note in _joined(text), text
    # an embeddings model's call on Bedrock is other traffic, as /embeddings is elsewhere
    assert "titan-embed" not in text and "test_embeds" not in text
    report = _report(project)
    assert report["tests"]["test_calls.py::test_native"]["unrecognised_calls"] == 1
    assert report["tests"]["test_calls.py::test_native"]["calls"] == 0
    assert report["total"]["unrecognised_calls"] == 1
    assert report["total"]["calls"] == 1
    assert report["tests"]["test_calls.py::test_native"]["cost_usd"] is None
    assert report["total"]["cost_usd"] is None  # the part known is priced_cost_usd
    assert report["notes"] == [note]


def test_a_run_whose_only_llm_looking_call_is_not_metered_says_so(
    project: pytest.Pytester,
) -> None:
    """The trial's repro: the summary claimed no LLM call was replayed."""
    project.makepyfile(test_calls=REPLAY + TESTS)
    result = project.runpytest(
        "--costsim", "-k", "native or embeds", "--costsim-report", "out.json"
    )
    result.assert_outcomes(passed=2)
    text = result.stdout.str()
    assert "no LLM calls were replayed" not in text
    assert said(text, "*0 LLM calls in 1 test: *; 1 LLM-looking interaction not metered.*")
    assert "0 LLM calls in 1 test: $0" not in _joined(text)  # unknown, never $0
    assert "[unrecognised-llm-call] test_calls.py::test_native: native.yaml" in _joined(text)
    assert _report(project)["total"]["unrecognised_calls"] == 1


def test_a_test_replaying_the_call_twice_counts_it_twice_and_notes_it_once(
    project: pytest.Pytester,
) -> None:
    project.makepyfile(test_calls=REPLAY + TESTS + "\ndef test_again():\n    test_native()\n"
                       "    test_native()\n")  # fmt: skip
    result = project.runpytest("--costsim", "-k", "again", "--costsim-report", "out.json")
    result.assert_outcomes(passed=1)
    report = _report(project)
    assert report["tests"]["test_calls.py::test_again"]["unrecognised_calls"] == 2
    assert len(report["notes"]) == 1
    assert said(result.stdout.str(), "*2 LLM-looking interactions not metered.*")


def test_a_test_with_no_call_metered_has_an_unknown_what_if_as_its_own_cost(
    project: pytest.Pytester,
) -> None:
    """The interaction costsim cannot meter is made under every variant too: each variant's
    cost of its test is unknown, as the test's own is, and the TOTAL's what-if a lower bound
    (it read "-", then an exact $0 for the test, as if the call cost nothing); its change is
    known, the same interaction being left out of both."""
    project.makepyfile(test_calls=REPLAY + TESTS)
    result = project.runpytest(
        "--costsim", "--costsim-strategies", "caching:ttl=1h", "--costsim-report", "out.json"
    )
    result.assert_outcomes(passed=3)
    total = next(line for line in result.stdout.lines if line.startswith("TOTAL"))
    assert total.split()[-1].startswith("≥$"), total
    report = _report(project)
    whole = report["total"]["what_if"]["caching:ttl=1h"]
    assert whole["cost_usd"] is None and whole["delta_usd"] is not None
    native = report["tests"]["test_calls.py::test_native"]["what_if"]["caching:ttl=1h"]
    assert native["cost_usd"] is None and native["delta_usd"] == "0"
