"""Every real cassette in ../shared/corpus loads, and its numbers match what was billed.

Call counts are checked against the corpus MANIFEST; token totals against an independent
reading of the raw bodies (tests/corpus_oracle.py, which does not use costsim). The MANIFEST
counts calls to three endpoints only; costsim also meters billed calls beyond them (Responses
compaction, Claude through Bedrock Converse, the Chat Completions shape on other providers'
hosts), checked separately against the oracle.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from costsim.cli import cli
from costsim.model import Call, CassetteTrace
from costsim.pricing.ledger import Totals, meter
from costsim.providers.normalise import load_trace
from tests.corpus_oracle import ENDPOINTS, extra_oracle, oracle, read_manifest


def _in_manifest(call: Call) -> bool:
    """Whether the MANIFEST counts the call (one of its three endpoints)."""
    return (call.host, call.endpoint.rstrip("/")) in ENDPOINTS


@pytest.fixture(scope="module")
def traces(corpus: Path) -> dict[str, CassetteTrace]:
    return {name: load_trace(corpus / name) for name in sorted(read_manifest(corpus))}


def test_every_corpus_file_matches_manifest_and_oracle(
    corpus: Path, traces: dict[str, CassetteTrace]
) -> None:
    manifest = read_manifest(corpus)
    assert len(traces) == 902
    failures, extra_calls = [], 0
    for name, trace in traces.items():
        row = manifest[name]
        expected = oracle(corpus / name)
        totals = Totals.of(meter(call) for call in trace.calls if _in_manifest(call))
        got = (
            totals.llm_calls,
            totals.calls_with_usage,
            totals.prompt_tokens,
            totals.output_tokens,
        )
        want = (
            int(row["n_llm_calls"]),
            int(row["n_calls_with_usage"]),
            expected.prompt_tokens,
            expected.output_tokens,
        )
        if got != want:
            failures.append(f"{name}: got {got}, want {want}")
        # Billed calls beyond the manifest's definition, against the oracle's reading of them.
        extra = [call for call in trace.calls if not _in_manifest(call)]
        extra_calls += len(extra)
        beyond = extra_oracle(corpus / name)
        totals = Totals.of(meter(call) for call in extra)
        got = (
            totals.llm_calls,
            totals.calls_with_usage,
            totals.prompt_tokens,
            totals.output_tokens,
        )
        want = (
            beyond.llm_calls,
            beyond.calls_with_usage,
            beyond.prompt_tokens,
            beyond.output_tokens,
        )
        if got != want:
            failures.append(f"{name} (beyond the manifest): got {got}, want {want}")
        if any(call.notes for call in extra):
            failures.append(f"{name}: notes on {[c.notes for c in extra]}")
    assert failures == []
    # 6 Responses compactions, 1 Claude call through Bedrock Converse, and 4 Chat Completions
    # calls other providers served: 3 to Azure OpenAI (errored, unbilled), 1 to Mistral
    assert extra_calls == 11


def test_error_calls_match_manifest(corpus: Path, traces: dict[str, CassetteTrace]) -> None:
    manifest = read_manifest(corpus)
    for name, trace in traces.items():
        errored = sum(call.errored for call in trace.calls if _in_manifest(call))
        assert errored == int(manifest[name]["n_error_calls"]), name


def test_provider_counts_match_manifest(corpus: Path, traces: dict[str, CassetteTrace]) -> None:
    manifest = read_manifest(corpus)
    for name, trace in traces.items():
        row = manifest[name]
        providers = [call.provider for call in trace.calls if _in_manifest(call)]
        assert providers.count("anthropic") == int(row["n_anthropic_calls"]), name
        assert providers.count("openai") == int(row["n_openai_calls"]), name


def test_streaming_anthropic_final_delta_wins(corpus: Path) -> None:
    # message_start says 702 input tokens; the final message_delta (server tools) says 1591.
    name = "pydantic__pydantic-ai/tests__cassettes__test_tool_search__test_anthropic_native_tool_search_streaming.yaml"
    trace = load_trace(corpus / name)
    assert any(call.usage and call.usage.uncached_input == 1591 for call in trace.calls)


def test_report_json_over_corpus_matches_manifest(corpus: Path) -> None:
    manifest = read_manifest(corpus)
    result = CliRunner().invoke(cli, ["report", str(corpus), "--format", "json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["format_version"] == 1
    totals = document["totals"]
    extra = 11  # calls beyond the manifest's three endpoints (see above), 3 of them errored
    assert totals["llm_calls"] == sum(int(r["n_llm_calls"]) for r in manifest.values()) + extra
    assert totals["calls_with_usage"] == extra - 3 + sum(
        int(r["n_calls_with_usage"]) for r in manifest.values()
    )
    assert len(document["cassettes"]) == 902
    assert totals["unpriced_calls"] == len(document["unpriced"])
    assert (totals["cost_usd"] is None) == bool(
        totals["unpriced_calls"] or totals["unmetered_calls"] or totals["left_out_calls"]
    )
    # Gemini and Cohere calls costsim cannot meter: in no sum, so the total is a lower bound
    missed = [n for n in document["notes"] if n["kind"] == "unrecognised-llm-call"]
    assert totals["left_out_calls"] == len(missed) == 14
