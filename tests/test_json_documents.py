"""Every command writes JSON with ``--format json``; every document carries format_version and
is described by a schema shipped in the package (``costsim/schemas/``)."""

from __future__ import annotations

import json
import os
from concurrent.futures import ThreadPoolExecutor
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from click.testing import CliRunner

import costsim
from costsim.api.testing import TestCost, save_baseline
from costsim.cli import cli
from costsim.render.formats import KINDS
from tests.conftest import EXAMPLES, ROOT

SCENARIO = ROOT / "tests" / "data" / "examples_scenario.yaml"


def _schema(name: str) -> dict[str, Any]:
    text = resources.files("costsim").joinpath(f"schemas/{name}").read_text()
    schema: dict[str, Any] = json.loads(text)
    jsonschema.Draft202012Validator.check_schema(schema)
    return schema


@pytest.fixture
def baselines(tmp_path: Path) -> Path:
    folder = tmp_path / ".costsim"
    cheap = TestCost(calls=1, prompt_tokens=100, output_tokens=10)
    cheap.priced_cost_usd = cheap.priced_cost_usd + 1
    dear = TestCost(calls=1, prompt_tokens=200, output_tokens=10)
    dear.priced_cost_usd = dear.priced_cost_usd + 2
    save_baseline(folder / "main.json", {"test_a": cheap, "test_b": dear})
    save_baseline(folder / "pr.json", {"test_a": dear, "test_c": cheap})
    return folder


def _commands(baselines: Path) -> dict[str, list[str]]:
    return {
        "report": ["report", str(EXAMPLES)],
        "simulation": ["simulate", str(EXAMPLES), "-s", "truncation & caching:ttl=1h"],
        "comparisons": ["compare", str(SCENARIO), "--by", "model"],
        "check-cache": ["check-cache", str(EXAMPLES)],
        "calibration": ["calibrate", str(EXAMPLES)],
        "cassette-list": ["cassettes", "list", str(EXAMPLES)],
        "cassette-check": ["cassettes", "check", str(EXAMPLES)],
        "baseline-list": ["baseline", "list", "--dir", str(baselines)],
        "baseline-comparison": ["baseline", "compare", "main", "pr", "--dir", str(baselines)],
        "strategies": ["strategies"],
    }


def test_every_kind_has_a_schema_file() -> None:
    for kind, entry in KINDS.items():
        assert entry.schema, kind
        _schema(entry.schema)


@pytest.mark.parametrize(
    "kind",
    [
        "report",
        "simulation",
        "comparisons",
        "check-cache",
        "calibration",
        "cassette-list",
        "cassette-check",
        "baseline-list",
        "baseline-comparison",
        "strategies",
    ],
)
def test_every_command_writes_json_that_its_schema_describes(kind: str, baselines: Path) -> None:
    result = CliRunner().invoke(cli, [*_commands(baselines)[kind], "--format", "json"])
    assert result.exit_code in (0, 1), result.output
    document = json.loads(result.stdout)
    assert isinstance(document["format_version"], int)
    jsonschema.validate(document, _schema(KINDS[kind].schema))


def test_api_documents_match_their_schemas() -> None:
    comparison = costsim.compare(SCENARIO)
    jsonschema.validate(comparison.to_json(), _schema(KINDS["comparison"].schema))
    breakdown = comparison.breakdown("agent")
    jsonschema.validate(breakdown.to_json(), _schema(KINDS["breakdown"].schema))
    jsonschema.validate(
        costsim.list_strategies("caching").to_json(), _schema("strategies.schema.json")
    )


def test_output_file_takes_its_format_from_the_extension(tmp_path: Path) -> None:
    runner = CliRunner()
    for name, check in (
        ("r.json", lambda text: json.loads(text)["kind"] == "costsim.report"),
        ("r.md", lambda text: text.startswith("## costsim report")),
        ("r.txt", lambda text: text.startswith("6 LLM calls in 3 cassettes")),
        ("r.html", lambda text: text.startswith("<!DOCTYPE html>")),
    ):
        result = runner.invoke(cli, ["report", str(EXAMPLES), "-o", str(tmp_path / name)])
        assert result.exit_code == 0 and result.stdout == "", result.output
        assert check((tmp_path / name).read_text()), name
    # --format says otherwise: it wins, and a warning says so (Markdown in x.json was silent)
    result = runner.invoke(
        cli, ["report", str(EXAMPLES), "-o", str(tmp_path / "x.json"), "--format", "markdown"]
    )
    assert (tmp_path / "x.json").read_text().startswith("## costsim report")
    assert result.exit_code == 0 and " ".join(result.stderr.split()) == (
        f"warning: writing markdown to {tmp_path / 'x.json'}, whose extension names json "
        "(--format markdown was given)"
    )
    result = runner.invoke(
        cli, ["report", str(EXAMPLES), "-o", str(tmp_path / "x.out"), "--format", "json"]
    )
    assert result.exit_code == 0 and result.stderr == ""  # an extension naming no format
    # an extension costsim cannot write is refused before any work, not written as a table
    result = runner.invoke(cli, ["report", str(EXAMPLES), "-o", str(tmp_path / "r.pdf")])
    assert result.exit_code == 2
    assert "cannot tell which format to write to" in result.stderr
    assert not (tmp_path / "r.pdf").exists()
    # a device or pipe has no extension to go by: the table, as on stdout (a trial's
    # ``-o /dev/null`` was refused)
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with ThreadPoolExecutor(1) as reader:
        read = reader.submit(fifo.read_text)
        result = runner.invoke(cli, ["report", str(EXAMPLES), "-o", str(fifo)])
        assert result.exit_code == 0 and read.result(timeout=60).startswith("6 LLM calls")
    assert runner.invoke(cli, ["report", str(EXAMPLES), "-o", os.devnull]).exit_code == 0
    # a format a command's result does not have is one sentence, exit 2
    result = runner.invoke(cli, ["check-cache", str(EXAMPLES), "-o", str(tmp_path / "c.html")])
    assert result.exit_code == 2 and "has no 'html' format" in result.stderr
    assert not (tmp_path / "c.html").exists()


@pytest.mark.parametrize(
    "args",
    [
        ["report", str(EXAMPLES)],
        ["cassettes", "list", str(EXAMPLES)],
        ["cassettes", "check", str(EXAMPLES)],
        ["check-cache", str(EXAMPLES)],
        ["calibrate", str(EXAMPLES)],
        ["simulate", str(EXAMPLES)],
        ["compare", str(SCENARIO)],
        ["strategies"],
        ["baseline", "list"],
    ],
    ids=lambda args: " ".join(a for a in args if "/" not in a),
)
def test_every_command_has_the_same_output_options(args: list[str]) -> None:
    result = CliRunner().invoke(cli, [*args, "--help"])
    for option in (
        "--format [table|json|markdown|html]",
        "-o, --output",
        "--wide",
        "-v, --verbose",
    ):
        assert option in result.stdout, (args, option)
    markdown = CliRunner().invoke(cli, [*args, "--format", "markdown"])
    assert markdown.exit_code == 0, markdown.output
    assert markdown.stdout.startswith("##"), markdown.stdout[:80]
