"""Embeddings requests: billed, in no LLM total, and said beside it (a trial's 1.2M-token
embeddings request, $0.156, was 99.7% of its bill and nowhere in the report)."""

from __future__ import annotations

import json
import shutil
from decimal import Decimal
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
from click.testing import CliRunner

from costsim.cli import cli
from costsim.providers.normalise import load_trace
from tests.test_hostile_input import interaction, write_yaml

OPENAI = "https://api.openai.com/v1/embeddings"
AZURE = (
    "https://acme.openai.azure.com/openai/deployments/embedder/embeddings?api-version=2024-10-21"
)
VOYAGE = "https://api.voyageai.com/v1/embeddings"


def _reply(model: str, usage: dict[str, int]) -> dict[str, Any]:
    return {"object": "list", "data": [{"embedding": [0.1, 0.2]}], "model": model, "usage": usage}


def _cassette(tmp_path: Path) -> Path:
    large = _reply(
        "text-embedding-3-large", {"prompt_tokens": 1_200_000, "total_tokens": 1_200_000}
    )
    return write_yaml(
        tmp_path / "rag.yaml",
        [
            interaction(OPENAI, {"model": "text-embedding-3-large", "input": ["a"]}, large),
            interaction(),  # an Anthropic Messages call
            interaction(  # the model from the request when the response names none
                AZURE,
                {"model": "text-embedding-3-small", "input": "b"},
                {"usage": {"prompt_tokens": 500}},
            ),
            interaction(
                VOYAGE,
                {"model": "voyage-3", "input": ["c"]},
                _reply("voyage-3", {"total_tokens": 70}),
            ),
            interaction(
                OPENAI, {"model": "text-embedding-3-small", "input": "d"}, {"error": {}}, status=429
            ),
            interaction(OPENAI, {"input": "e"}, {"data": []}),  # no model: a note
            interaction(
                OPENAI, {"model": "in-house"}, _reply("in-house-embed", {"prompt_tokens": 10})
            ),
            interaction(  # a corrupt count, past any model's, and no input: a note
                OPENAI, {"model": "x"}, _reply("text-embedding-3-small", {"prompt_tokens": 10**18})
            ),
        ],
    )


def _run(*args: str) -> Any:
    return CliRunner().invoke(cli, [*args, "--no-cache"], env={"COLUMNS": "100"})


def test_each_successful_embeddings_request_with_usage_is_read(tmp_path: Path) -> None:
    trace = load_trace(_cassette(tmp_path))
    found = [(e.provenance.index, e.model, e.tokens, e.host) for e in trace.embeddings]
    assert found == [
        (0, "text-embedding-3-large", 1_200_000, "api.openai.com"),
        (2, "text-embedding-3-small", 500, "acme.openai.azure.com"),
        (3, "voyage-3", 70, "api.voyageai.com"),
        (6, "in-house-embed", 10, "api.openai.com"),  # the response's name
    ]
    assert len(trace.calls) == 1 and trace.other_interactions == 7  # in no LLM figure
    # a request whose tokens cannot be known is said, never dropped
    assert [(n.provenance.index, n.note.kind.value) for n in trace.notes] == [
        (5, "unreadable-embeddings"),
        (7, "unreadable-embeddings"),
    ]
    assert "names no model" in trace.notes[0].note.message


def test_the_report_says_what_they_cost_beside_the_llm_total(tmp_path: Path) -> None:
    path = _cassette(tmp_path)
    result = _run("report", str(path), "--format", "json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    schema = json.loads(
        resources.files("costsim").joinpath("schemas/report.schema.json").read_text()
    )
    jsonschema.validate(document, schema)
    embeddings = document["embeddings"]
    assert (embeddings["calls"], embeddings["tokens"]) == (4, 1_200_580)
    # by hand: 1.2M x $0.13/M (3-large) + 500 x $0.02/M (3-small, Azure's price the same)
    # + 70 x $0.06/M (voyage-3); in-house-embed has no price: the cost is a lower bound
    assert Decimal(embeddings["priced_cost_usd"]) == Decimal("0.156") + Decimal(
        "0.00001"
    ) + Decimal("0.0000042")
    assert embeddings["cost_usd"] is None and embeddings["unpriced_calls"] == 1
    llm = Decimal(document["totals"]["cost_usd"])
    assert llm < Decimal("0.001")  # the Messages call only
    text = _run("report", str(path)).stdout
    assert text.splitlines()[0].endswith("; embeddings ≥$0.156 more.")
    said = " ".join(text.split())
    assert "Embeddings, in no total above: 4 calls of 1,200,580 tokens" in said
    assert "at least $0.156 (1 call of a model without a price)" in said


def test_a_cached_trace_keeps_them_where_the_file_now_is(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    first = _cassette(tmp_path / "a")
    cache = {"COSTSIM_CACHE_DIR": str(tmp_path / "cache")}
    runs = []
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir(exist_ok=True)
        if folder == "b":
            shutil.copy(first, tmp_path / "b" / "rag.yaml")  # same bytes: read from the cache
        result = CliRunner().invoke(
            cli, ["report", str(tmp_path / folder), "--format", "json"], env=cache
        )
        assert result.exit_code == 0, result.output
        runs.append(json.loads(result.stdout)["embeddings"])
    # the unpriced call named where its file now is, not where the cache first read it
    assert [Path(run.pop("unpriced")[0]["path"]).parent.name for run in runs] == ["a", "b"]
    assert runs[0] == runs[1] and runs[0]["calls"] == 4


def test_embeddings_none_of_which_has_a_price_cost_unknown_never_0(tmp_path: Path) -> None:
    """Their priced part is $0: said as unknown, not as "at least $0.00"."""
    path = write_yaml(
        tmp_path / "in_house.yaml",
        [interaction(OPENAI, {"model": "x"}, _reply("in-house-embed", {"prompt_tokens": 10}))],
    )
    text = _run("report", str(path)).stdout
    assert text.splitlines()[0].endswith("; embeddings unpriced.")
    said = " ".join(text.split())
    assert (
        "Embeddings, in no total above: 1 call of 10 tokens (in-house-embed): cost unknown "
        "(1 call of a model without a price)." in said
    ), text
    assert "at least $0" not in said


def test_an_xdist_workers_figures_come_back_whole() -> None:
    """A worker sends its unpriced and estimated calls to the controller as JSON."""
    from costsim.analysis.embeddings import EmbeddingTotals, UnpricedEmbedding
    from costsim.model import Provenance

    sent = EmbeddingTotals(calls=2, tokens=30, unpriced_calls=1, estimated_calls=1)
    sent.unpriced.append(UnpricedEmbedding(Provenance(Path("a.yaml"), 3), "x", "no price"))
    assert EmbeddingTotals.from_json(json.loads(json.dumps(sent.to_json(listed=True)))) == sent
