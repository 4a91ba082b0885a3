"""``pytest --costsim`` on a suite that calls an embeddings API: its requests are counted and
priced, as ``costsim report`` prices them, and said beside the LLM figures, never in them.

The plugin read ``/embeddings`` as other traffic: a suite calling OpenAI or Voyage
embeddings saw an LLM-only figure, with no word of the embeddings it paid for, where
``costsim report`` on the same cassettes said what they cost.
"""

from __future__ import annotations

import json
from decimal import Decimal
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import requests  # noqa: F401  (imported here so pytester's in-process runs share one copy)
import vcr  # noqa: F401

from costsim.plugin.helper import ENV
from tests.conftest import said
from tests.test_hostile_input import (
    ANTHROPIC_REQUEST,
    ANTHROPIC_URI,
    interaction,
    run_cli,
    write_yaml,
)

pytest_plugins = ["pytester"]

EMBEDDINGS = "https://api.openai.com/v1/embeddings"
SMALL = {"model": "text-embedding-3-small", "input": ["refund policy"]}
IN_HOUSE = {"model": "in-house-embed", "input": ["refund policy"]}
NOUSAGE = {"model": "text-embedding-3-small", "input": ["How do I return a damaged item?"]}
"""8 tokens in cl100k_base (counted with tiktoken), the encoding of OpenAI's embeddings."""


def _reply(model: str, tokens: int) -> dict[str, Any]:
    usage = {"prompt_tokens": tokens, "total_tokens": tokens}
    return {"object": "list", "data": [{"embedding": [0.1, 0.2]}], "model": model, "usage": usage}


TESTS = f"""
import requests
import vcr

def test_rag():
    with vcr.use_cassette("rag.yaml", record_mode="none"):
        requests.post({EMBEDDINGS!r}, json={SMALL!r})
        requests.post({ANTHROPIC_URI!r}, json={ANTHROPIC_REQUEST!r})

def test_nousage():
    with vcr.use_cassette("nousage.yaml", record_mode="none"):
        requests.post({EMBEDDINGS!r}, json={NOUSAGE!r})

def _in_house():
    with vcr.use_cassette("in_house.yaml", record_mode="none"):
        requests.post({EMBEDDINGS!r}, json={IN_HOUSE!r})

def test_in_house_first():
    _in_house()

def test_in_house_again():
    _in_house()
"""

SMALL_COST = Decimal("0.00002")
"""By hand: 1,000 input tokens of text-embedding-3-small at $0.02 per million."""
PRICED_NOTE = (
    "Embeddings, in no total above: 1 call of 1,000 tokens (text-embedding-3-small): $0.000020."
)
PARTIAL_NOTE = (
    "Embeddings, in no total above: 3 calls of 1,020 tokens (in-house-embed, "
    "text-embedding-3-small): at least $0.000020 (2 calls of a model without a price)."
)
IN_HOUSE_UNPRICED = (
    "unpriced: in_house.yaml interaction 0: genai-prices has no price for openai model "
    "'in-house-embed'"
)


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    monkeypatch.setenv("COLUMNS", "100")
    write_yaml(
        pytester.path / "rag.yaml",
        [
            interaction(EMBEDDINGS, SMALL, _reply("text-embedding-3-small", 1_000)),
            interaction(),  # an Anthropic Messages call
        ],
    )
    write_yaml(
        pytester.path / "in_house.yaml",
        [interaction(EMBEDDINGS, IN_HOUSE, _reply("in-house-embed", 10))],
    )
    nousage = _reply("text-embedding-3-small", 0)
    del nousage["usage"]  # a 200 OK without a usage block
    write_yaml(pytester.path / "nousage.yaml", [interaction(EMBEDDINGS, NOUSAGE, nousage)])
    pytester.makepyfile(test_calls=TESTS)
    return pytester


def _report(path: Path) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(path.read_text())
    schema = json.loads((resources.files("costsim") / "schemas" / "pytest.schema.json").read_text())
    jsonschema.validate(document, schema)
    return document


def _llm_cost(path: Path) -> Decimal:
    """What ``costsim report`` says the cassette's LLM calls cost (its embeddings apart)."""
    result = run_cli("report", "--format", "json", path)
    assert result.exit_code == 0, result.output
    return Decimal(json.loads(result.stdout)["totals"]["cost_usd"])


def _joined(output: str) -> str:
    return " ".join(output.split())


def _summary(output: str) -> list[str]:
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if "costsim: LLM calls replayed" in line)
    end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("====="))
    return lines[start + 1 : end]


@pytest.mark.parametrize(
    ("meter_process", "workers"),
    [("1", []), ("0", []), ("0", ["-n", "2"])],
    ids=["metering-process", "test-process", "xdist"],
)
def test_embeddings_are_counted_priced_and_said_beside_the_llm_figures(
    project: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    meter_process: str,
    workers: list[str],
) -> None:
    """Alike wherever the calls are metered: beside the tests, in their process, or in
    xdist workers that send their figures to the controller."""
    monkeypatch.setenv(ENV, meter_process)
    result = project.runpytest_subprocess(
        "--costsim", "-k", "rag", "--costsim-report", "out.json", "--costsim-save", "main", *workers
    )
    result.assert_outcomes(passed=1)
    assert result.ret == pytest.ExitCode.OK
    llm = _llm_cost(project.path / "rag.yaml")
    lines = _summary(result.stdout.str())
    # the answer first, the LLM figure as before, what embeddings add beside it
    assert lines[0] == f"1 LLM call in 1 test: ${llm:.6f}; embeddings $0.000020 more.", lines
    assert PRICED_NOTE in lines, lines
    assert all(len(line) <= 100 for line in lines), lines
    document = _report(project.path / "out.json")
    assert document["embeddings"] == {
        "calls": 1,
        "tokens": 1_000,
        "cost_usd": document["embeddings"]["priced_cost_usd"],
        "priced_cost_usd": document["embeddings"]["priced_cost_usd"],
        "unpriced_calls": 0,
        "estimated_calls": 0,
        "models": {"text-embedding-3-small": 1},
        "unpriced": [],
    }
    assert Decimal(document["embeddings"]["cost_usd"]) == SMALL_COST
    # in no LLM total, budget or baseline: the test's figures are its LLM call's
    assert Decimal(document["total"]["cost_usd"]) == llm
    assert document["total"]["calls"] == 1
    assert Decimal(document["tests"]["test_calls.py::test_rag"]["cost_usd"]) == llm
    saved = json.loads((project.path / ".costsim" / "main.json").read_text())
    assert Decimal(saved["tests"]["test_calls.py::test_rag"]["cost_usd"]) == llm
    assert "embeddings" not in json.dumps(saved)


def test_an_embeddings_model_without_a_price_is_unpriced_never_0_and_listed_once(
    project: pytest.Pytester,
) -> None:
    """Two tests replay the one interaction: both calls are counted (as a replayed LLM call
    is), its unpriced line is said once, with how often."""
    result = project.runpytest_subprocess(
        "--costsim", "--costsim-report", "out.json", "-p", "no:xdist", "-k", "not nousage"
    )
    result.assert_outcomes(passed=3)
    text = result.stdout.str()
    lines = _summary(text)
    assert lines[0].endswith("; embeddings ≥$0.000020 more."), lines
    assert said(text, f"*{PARTIAL_NOTE}*")
    assert said(
        text, f"*(2 calls of a model without a price). {IN_HOUSE_UNPRICED} (replayed 2 times)*"
    )
    assert _joined(text).count("in-house-embed'") == 1
    assert all(len(line) <= 100 for line in lines), lines
    embeddings = _report(project.path / "out.json")["embeddings"]
    assert (embeddings["calls"], embeddings["tokens"], embeddings["unpriced_calls"]) == (
        3,
        1_020,
        2,
    )
    assert embeddings["cost_usd"] is None  # unknown, never $0
    assert Decimal(embeddings["priced_cost_usd"]) == SMALL_COST  # the part known
    # once, with how often it was replayed, as report's unpriced lists name calls
    assert embeddings["unpriced"] == [
        {
            "path": "in_house.yaml",
            "interaction": 0,
            "model": "in-house-embed",
            "reason": "genai-prices has no price for openai model 'in-house-embed'",
            "replayed": 2,
        }
    ]


def test_a_run_of_embeddings_only_says_what_they_cost(project: pytest.Pytester) -> None:
    result = project.runpytest("--costsim", "-k", "in_house_first", "--costsim-report", "out.md")
    result.assert_outcomes(passed=1)
    lines = _summary(result.stdout.str())
    # not the line of a run vcrpy saw nothing of (nor its setup hint): it saw embeddings
    assert lines[0] == (
        "no LLM calls, only embeddings requests, were replayed or recorded through vcrpy"
    )
    assert "vcrpy" not in " ".join(lines[1:]), lines
    assert said(
        result.stdout.str(),
        "*Embeddings: 1 call of 10 tokens (in-house-embed): cost unknown "
        "(1 call of a model without a price).*",
    )
    assert "in no total above" not in result.stdout.str()  # there is none above
    markdown = (project.path / "out.md").read_text()
    assert "No LLM calls, only embeddings requests, were replayed." in markdown
    assert "- Embeddings: 1 call of 10 tokens (in-house-embed)" in markdown


def test_embeddings_without_usage_are_estimated_from_their_input(
    project: pytest.Pytester,
) -> None:
    """A 200 OK without usage: counted, its tokens estimated from its input (never dropped)."""
    result = project.runpytest("--costsim", "-k", "nousage", "--costsim-report", "out.json")
    result.assert_outcomes(passed=1)
    # by hand: 8 tokens x $0.02 per million = $0.00000016, shown below a millionth
    assert said(
        result.stdout.str(),
        "*Embeddings: 1 call of 8 tokens (text-embedding-3-small): <$0.000001 "
        "(1 estimated: no usage recorded).*",
    )
    embeddings = _report(project.path / "out.json")["embeddings"]
    assert (embeddings["calls"], embeddings["tokens"], embeddings["estimated_calls"]) == (1, 8, 1)
    assert Decimal(embeddings["cost_usd"]) == Decimal("0.00000016")


def test_the_markdown_and_html_reports_say_them_beside_the_llm_figures(
    project: pytest.Pytester,
) -> None:
    result = project.runpytest(
        "--costsim", "--costsim-report", "out.md", "--costsim-report", "out.html",
        "-k", "not nousage",
    )  # fmt: skip
    result.assert_outcomes(passed=3)
    page = (project.path / "out.html").read_text()
    assert "for 1 LLM call in 1 test; embeddings ≥$0.000020 more." in page
    assert "Embeddings, in no total above: 3 calls of 1,020 tokens" in page
    assert ".;" not in page  # the note's sentence, then the calls it names
    assert "without a price). Unpriced: in_house.yaml interaction 0: genai-prices" in page
    markdown = (project.path / "out.md").read_text().splitlines()
    answer = next(line for line in markdown if line.startswith("1 LLM call in 1 test: $"))
    assert answer.endswith("; embeddings ≥$0.000020 more."), answer
    assert f"- {PARTIAL_NOTE}" in markdown
    assert f"- {IN_HOUSE_UNPRICED} (replayed 2 times)" in markdown
