"""Embeddings requests in ``costsim report``, ``cassettes check`` and ``cassettes list``: a
cassette of embeddings only is a billed recording (no ``no-llm-calls`` warning), a request
whose response recorded no usage is estimated from its input (never dropped), the unpriced
ones are named, and an unpriced one never reads as $0 (a trial's findings 1, 2, 3 and 11).
"""

from __future__ import annotations

import json
from decimal import Decimal
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from click.testing import CliRunner

from costsim.cli import cli
from tests.test_hostile_input import interaction, write_yaml

OPENAI = "https://api.openai.com/v1/embeddings"
LONG = "a long text " * 50
"""151 tokens in cl100k_base, the encoding of OpenAI's embeddings models (counted with
tiktoken: 50 x ['a', ' long', ' text'] and the last space)."""


def _reply(model: str, tokens: int | None) -> dict[str, Any]:
    reply: dict[str, Any] = {"object": "list", "data": [{"embedding": [0.1]}], "model": model}
    if tokens is not None:
        reply["usage"] = {"prompt_tokens": tokens, "total_tokens": tokens}
    return reply


def _run(*args: str | Path) -> Any:
    return CliRunner().invoke(
        cli, [*(str(arg) for arg in args), "--no-cache"], env={"COLUMNS": "120"}
    )


def _schema(name: str) -> dict[str, Any]:
    text = resources.files("costsim").joinpath(f"schemas/{name}.schema.json").read_text()
    document: dict[str, Any] = json.loads(text)
    return document


def _json(*args: str | Path, schema: str = "report") -> dict[str, Any]:
    result = _run(*args, "--format", "json")
    assert result.exit_code in (0, 1), result.output
    document: dict[str, Any] = json.loads(result.stdout)
    jsonschema.validate(document, _schema(schema))
    return document


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A RAG suite's cassettes, in the working folder: embeddings only (priced, unpriced,
    without usage), one errored, and one LLM call."""
    monkeypatch.chdir(tmp_path)
    write_yaml(
        tmp_path / "embed_small.yaml",
        [
            interaction(
                OPENAI,
                {"model": "text-embedding-3-small", "input": ["refund policy"]},
                _reply("text-embedding-3-small", 1_000),
            )
        ],
    )
    write_yaml(
        tmp_path / "embed_private.yaml",
        [
            interaction(
                OPENAI,
                {"model": "acme-embed-v1", "input": "x"},
                _reply("acme-embed-v1", 500),
            )
        ],
    )
    write_yaml(
        tmp_path / "embed_nousage.yaml",
        [
            interaction(
                OPENAI,
                {"model": "text-embedding-3-large", "input": [LONG]},
                _reply("text-embedding-3-large", None),
            ),
            interaction(  # token arrays: counted as their length
                OPENAI,
                {"model": "text-embedding-3-large", "input": [[1, 2, 3], [4, 5]]},
                _reply("text-embedding-3-large", None),
            ),
        ],
    )
    write_yaml(
        tmp_path / "embed_error.yaml",
        [
            interaction(
                OPENAI,
                {"model": "text-embedding-3-small", "input": "x"},
                {"error": {"message": "bad"}},
                status=400,
            )
        ],
    )
    write_yaml(tmp_path / "chat.yaml", [interaction()])  # an Anthropic Messages call
    return tmp_path


def test_a_cassette_of_embeddings_only_is_no_no_llm_calls_warning(folder: Path) -> None:
    """Billed traffic costsim meters: no finding (not even an informational one: nothing
    about it needs a reader's eye); a cassette of an errored (unbilled) request still warns."""
    for path in ("embed_small.yaml", "embed_private.yaml"):
        result = _run("cassettes", "check", folder / path, "--show-info")
        assert result.exit_code == 0, result.output
        assert result.stdout.startswith("1 cassette checked, nothing found"), result.output
    result = _run("cassettes", "check", folder / "embed_error.yaml")
    assert result.exit_code == 1
    assert "[warning] no-llm-calls" in result.stdout


def test_embeddings_without_usage_are_estimated_from_their_input(folder: Path) -> None:
    path = folder / "embed_nousage.yaml"
    document = _json("report", path)
    embeddings = document["embeddings"]
    # by hand: 151 tokens of LONG (cl100k_base) + 3 + 2 tokens sent as token arrays
    assert (embeddings["calls"], embeddings["tokens"]) == (2, 156)
    assert embeddings["estimated_calls"] == 2
    # 156 x $0.13 per million (text-embedding-3-large)
    assert Decimal(embeddings["cost_usd"]) == Decimal("0.00002028")
    text = " ".join(_run("report", path).stdout.split())
    assert (
        "Embeddings, in no total above: 2 calls of 156 tokens (text-embedding-3-large): "
        "$0.000020 (2 estimated: no usage recorded)." in text
    ), text
    check = _run("cassettes", "check", path)
    assert check.exit_code == 1  # a call without usage warns, as an LLM call's does
    said = " ".join(check.stdout.split())
    assert "no-llm-calls" not in said, said
    assert (
        "embed_nousage.yaml: interaction 0: [warning] no-usage: embeddings request without "
        "usage: its 151 tokens estimated from its input"
    ) in said, said


def test_an_embeddings_request_whose_input_cannot_be_read_is_a_note(tmp_path: Path) -> None:
    path = write_yaml(
        tmp_path / "odd.yaml",
        [
            interaction(
                OPENAI,
                {"model": "text-embedding-3-small", "input": {"text": "x"}},
                _reply("text-embedding-3-small", None),
            )
        ],
    )
    document = _json("report", path)
    assert document["embeddings"]["calls"] == 0
    assert [(n["interaction"], n["kind"]) for n in document["notes"]] == [
        (0, "unreadable-embeddings")
    ]
    text = " ".join(_run("report", path).stdout.split())
    assert "[unreadable-embeddings] embeddings request without usage whose input" in text, text
    check = _run("cassettes", "check", path)
    assert check.exit_code == 1
    assert "interaction 0: [warning] unreadable-embeddings:" in check.stdout
    assert "no-llm-calls" not in check.stdout


def test_the_report_names_each_unpriced_embeddings_call(folder: Path) -> None:
    reason = "genai-prices has no price for openai model 'acme-embed-v1'"
    document = _json("report", folder)
    assert document["embeddings"]["unpriced"] == [
        {"path": "embed_private.yaml", "interaction": 0, "model": "acme-embed-v1", "reason": reason}
    ]
    verbose = _run("report", folder, "-v").stdout.splitlines()
    note = next(i for i, line in enumerate(verbose) if line.startswith("Embeddings, in no"))
    # under the note, as the unpriced LLM calls are under theirs: why, then each one (-v)
    why = verbose.index(f"  {reason} (1 call)")
    assert note < why and verbose[why + 1] == f"  unpriced: embed_private.yaml#0: {reason}"
    quiet = _run("report", folder).stdout
    assert f"  {reason} (1 call)" in quiet, quiet
    assert "unpriced: embed_private.yaml#0" not in quiet  # each one with -v
    markdown = _run("report", folder, "-v", "--format", "markdown").stdout
    assert f"  - unpriced: embed_private.yaml#0: {reason}" in markdown, markdown


def test_a_row_of_embeddings_only_never_reads_0(folder: Path) -> None:
    """The row's LLM columns are about LLM calls: its cost is not $0 (its embeddings are in
    the note, unpriced or not), and its JSON carries its embeddings figures."""
    rows = {
        line.split()[0]: line.split()
        for line in _run("report", folder, "-v").stdout.splitlines()
        if ".yaml" in line and "#" not in line and ":" not in line
    }
    for name in ("embed_small.yaml", "embed_private.yaml", "embed_nousage.yaml"):
        assert rows[name][-1] == "-", rows[name]
    assert rows["embed_error.yaml"][-1] == "$0.000000"  # nothing billed at all
    markdown = _run("report", folder, "--format", "markdown").stdout
    assert not any("embed_private" in line and "$0" in line for line in markdown.splitlines())
    document = _json("report", folder)
    by_path = {item["path"]: item for item in document["cassettes"]}
    private = by_path["embed_private.yaml"]["embeddings"]
    assert (private["calls"], private["tokens"], private["cost_usd"]) == (1, 500, None)
    small = by_path["embed_small.yaml"]["embeddings"]
    assert Decimal(small["cost_usd"]) == Decimal("0.00002")  # 1,000 x $0.02 per million
    assert by_path["chat.yaml"]["embeddings"]["calls"] == 0
    result = _run("report", folder, "--format", "html", "-o", "page.html")
    assert result.exit_code == 0, result.output
    page = (folder / "page.html").read_text()
    # not among the costliest cassettes at $0: named once, as the unpriced call it holds
    assert page.count("embed_private.yaml") == 1
    assert "acme-embed-v1 (embeddings): genai-prices has no price" in page.replace("&#x27;", "'")


def test_cassettes_list_shows_the_date_and_model_of_embeddings(folder: Path) -> None:
    document = _json("cassettes", "list", folder, schema="cassettes-list")
    by_path = {item["path"]: item for item in document["cassettes"]}
    small = by_path["embed_small.yaml"]
    assert small["first_recorded"] == "2025-03-04T10:00:00+00:00"  # its Date header
    assert small["models"] == ["text-embedding-3-small"]
    assert small["llm_calls"] == 0
    table = _run("cassettes", "list", folder).stdout
    row = next(line for line in table.splitlines() if "embed_small.yaml" in line)
    assert "2025-03-04" in row and "text-embedding-3-small" in row, row
