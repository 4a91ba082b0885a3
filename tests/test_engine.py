"""The simulation engine: identity reproduces the recording; caching bills like the provider."""

from __future__ import annotations

import dataclasses
import json
from decimal import Decimal
from pathlib import Path

import pytest
from click.testing import CliRunner

from costsim.analysis.report import load_traces
from costsim.cli import cli
from costsim.engine import Engine, Variant, make_step, parse_step
from costsim.errors import ConfigError
from costsim.model import CassetteTrace, Usage
from costsim.pricing.ledger import meter
from costsim.providers.normalise import load_trace
from tests.conftest import EXAMPLES

CONVERSATION = "crewAIInc__crewAI/lib__crewai__tests__cassettes__utilities__TestAnthropicStructuredPlanning.test_anthropic_research_workflow_generates_steps.yaml"


@pytest.fixture(scope="module")
def corpus_traces(corpus: Path) -> list[CassetteTrace]:
    return load_traces([corpus])[0]


def test_identity_reproduces_every_recorded_call(corpus_traces: list[CassetteTrace]) -> None:
    engine = Engine(corpus_traces)
    result = engine.run(Variant("identity"))
    compared = 0
    for trace, simulated in zip(corpus_traces, result.traces, strict=True):
        assert len(trace.calls) == len(simulated.calls)
        for call, item in zip(trace.calls, simulated.calls, strict=True):
            if call.usage is not None:
                assert item.usage == call.usage, call.provenance
                compared += 1
    # 1725 to the manifest's endpoints, 6 compactions, 1 Converse, 1 to Mistral's host
    assert compared == 1733


def test_strategy_changing_nothing_changes_no_number(corpus_traces: list[CassetteTrace]) -> None:
    engine = Engine(corpus_traces)
    nothing = Variant(
        "nothing", (make_step("caching", {"placement": [], "split_dynamic_system": False}),)
    )
    base, same = engine.run(Variant("base")).totals(), engine.run(nothing).totals()
    assert (same.prompt_tokens, same.cache_read_tokens, same.output_tokens, same.cost_usd) == (
        base.prompt_tokens,
        base.cache_read_tokens,
        base.output_tokens,
        base.cost_usd,
    )


def test_caching_lowers_cost_of_an_uncached_conversation(corpus: Path) -> None:
    trace = load_trace(corpus / CONVERSATION)
    assert all(c.usage is None or c.usage.cache_read == 0 for c in trace.calls)
    engine = Engine([trace])
    base = engine.run(Variant("base")).totals()
    result = engine.run(Variant("cached", (make_step("caching"),)))
    cached = result.totals()
    assert base.cost_usd is not None and cached.cost_usd is not None
    assert cached.cost_usd < base.cost_usd
    assert cached.cache_read_tokens > 0
    # Floor: every token the variant wrote or read, read at the cache-read price instead.
    floor = sum(
        (
            meter(
                item.call,
                usage=Usage(
                    uncached_input=item.usage.uncached_input,
                    cache_read=item.usage.cache_read + item.usage.cache_write,
                    output=item.usage.output,
                ),
            ).price.amount  # type: ignore[union-attr]
            or Decimal(0)
        )
        for t in result.traces
        for item in t.calls
        if item.usage is not None
    )
    assert cached.cost_usd >= floor


def test_parse_step_and_suggestions() -> None:
    step = parse_step("caching:ttl=1h,placement=tools+system,rolling=2")
    assert step.describe() == "caching:placement=tools+system,rolling=2,ttl=1h"
    assert parse_step(step.describe()) == step
    with pytest.raises(ConfigError, match="Did you mean 'caching'"):
        parse_step("cachng")
    with pytest.raises(ConfigError, match=r"ttl='2h'"):
        parse_step("caching:ttl=2h")
    with pytest.raises(ConfigError, match="not key=value"):
        parse_step("caching:ttl")


def test_simulate_cli_json_shape() -> None:
    result = CliRunner().invoke(
        cli, ["simulate", str(EXAMPLES), "-s", "caching", "--format", "json"]
    )
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["format_version"] == 1
    for key in ("baseline", "variant"):
        assert {"llm_calls", "prompt_tokens", "cache_read_tokens", "cost_usd"} <= set(document[key])
    assert document["strategies"] == ["caching"]
    assert document["baseline"]["prompt_tokens"] == 2042 + 2151 + 31 + 1210 + 1236


def test_simulate_cli_identity_and_errors() -> None:
    result = CliRunner().invoke(cli, ["simulate", str(EXAMPLES)])
    assert result.exit_code == 0 and "exact" in result.stdout
    bad = CliRunner().invoke(cli, ["simulate", str(EXAMPLES), "-s", "cachng"])
    assert bad.exit_code == 2 and "Did you mean 'caching'?" in bad.stderr


def test_check_cache_matches_recorded_explicit_caching(corpus: Path) -> None:
    result = CliRunner().invoke(cli, ["check-cache", str(corpus), "--format", "json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["format_version"] == 1
    # calls whose server-side tool iterations read and write cache on their own are named as
    # such; the rest match at least 9 times in 10
    assert document["client_match_rate"] >= 0.9
    assert all(m["reason"] for m in document["mismatches"])
    server_side = [m for m in document["mismatches"] if "server-side tool" in m["reason"]]
    assert len(server_side) == document["server_side_compared"] - document["server_side_matched"]
    for mismatch in document["mismatches"]:
        recorded = mismatch["recorded"]
        assert recorded["cache_write"] == recorded["cache_write_5m"] + recorded["cache_write_1h"]


def test_replaced_requests_equal_to_the_recorded_ones_keep_recorded_numbers() -> None:
    trace = load_trace(EXAMPLES / "anthropic_support_agent.yaml")
    engine = Engine([trace])
    copies = [dataclasses.replace(call) for call in trace.calls]  # equal, not identical
    same = engine.run(Variant("as sent"), requests={trace.path: copies})
    assert [c.usage for c in same.traces[0].calls] == [call.usage for call in trace.calls]

    first = trace.calls[0]
    longer = dataclasses.replace(
        first,
        system=(dataclasses.replace(first.system[0], text=first.system[0].text + " more" * 100),),
    )
    changed = engine.run(Variant("as sent"), requests={trace.path: [longer, *trace.calls[1:]]})
    usage = changed.traces[0].calls[0].usage
    assert usage is not None and usage.estimated
    expected = round(first.usage.prompt_total + engine.meter.delta(first, longer))  # type: ignore[union-attr]
    assert usage.prompt_total == expected > first.usage.prompt_total  # type: ignore[union-attr]
    with pytest.raises(ValueError, match="2 requests for 3 calls"):
        engine.run(Variant("as sent"), requests={trace.path: copies[:2]})


def test_a_hit_reads_the_length_that_was_written() -> None:
    """The support agent's first call, with caching's breakpoints, writes its 2,042-token
    prompt (1,630 recorded to the system prompt, and the 412-token question) but the 3 tokens
    after its last block (TURN_CLOSE); the second call re-sends that prefix and reads those
    2,039 tokens, then writes its new 109. The read used to be the second request's own
    estimate of where the question ends (a few hundred tokens short), and the variant read as
    a cost where it saves. Sonnet 4.5, per million: $3 input, $3.75 5m write, $0.30 read, $15
    output."""
    trace = load_trace(EXAMPLES / "anthropic_support_agent.yaml")
    result = Engine([trace]).run(Variant("c", (make_step("caching"),)))
    first, second, _ = (item.usage for item in result.traces[0].calls)
    assert first is not None and second is not None
    assert (first.uncached_input, first.cache_write_5m) == (3, 2039)
    assert (second.cache_read, second.cache_write_5m, second.uncached_input) == (2039, 109, 3)
    # (2,039 x 3.75 + 3 x 3 + 58 x 15) + (2,039 x 0.30 + 109 x 3.75 + 3 x 3 + 31 x 15)
    # = 10,019.70 / 1e6
    assert result.totals().cost_usd == Decimal("0.0100197")


def _warm_openai(tmp_path: Path) -> Path:
    """An OpenAI Chat cassette whose first call reads cache it never wrote (a warm start)."""
    import yaml

    from tests.test_cassette_loading import interaction

    system = "You answer questions about a hardware shop's orders. " * 150
    interactions = [
        interaction(
            "https://api.openai.com/v1/chat/completions",
            {"model": "gpt-4o", "messages": [
                {"role": "system", "content": system}, {"role": "user", "content": f"order {i}?"}
            ]},
            {
                "id": f"chatcmpl-{i}", "object": "chat.completion", "model": "gpt-4o-2024-08-06",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": "Tomorrow."},
                             "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 2000, "completion_tokens": 3, "total_tokens": 2003,
                          "prompt_tokens_details": {"cached_tokens": 1920}},
            },
            response_headers={"date": [f"Tue, 04 Nov 2025 12:00:{10 * i:02d} GMT"]},
        )
        for i in range(2)
    ]  # fmt: skip
    path = tmp_path / "openai_warm.yaml"
    path.write_text(yaml.safe_dump({"version": 1, "interactions": interactions}))
    return path


def test_a_trace_of_several_cassettes_seeds_each_warm_start_at_its_own_call(
    tmp_path: Path,
) -> None:
    """A test that replays an Anthropic cassette and then an OpenAI one is one trace whose
    interaction indexes repeat (0, 1, 2, then 0, 1): the OpenAI call's warm start is seeded
    at that call, not at the Anthropic call of the same index (whose cache knows no such
    entry: every what-if of the test failed with KeyError 'retention')."""
    from costsim.model import CassetteTrace

    anthropic = load_trace(EXAMPLES / "anthropic_support_agent.yaml")
    openai = load_trace(_warm_openai(tmp_path))
    assert Engine([openai]).warm_starts()  # the recording reads what it never wrote
    merged = CassetteTrace(Path("0"), (*anthropic.calls, *openai.calls), 0, 0)
    engine = Engine([merged])
    seeds = engine.warm_starts()[merged.path]
    assert {position for position, *_ in seeds} == {len(anthropic.calls)}
    result = engine.run(Variant("c", (parse_step("caching:ttl=1h"),)))
    assert len(result.traces[0].calls) == len(merged.calls)


def test_a_changed_request_that_loses_a_warm_start_says_so() -> None:
    """A trial: selective_tools cost 2.7% more without a word, all of it a read the recording
    found warm (written outside it) that the changed request no longer matched. A request
    changed where its warm place still is reads the entry warm there (steady state); one that
    has no such place (every tool before the breakpoint left out) loses it, and says so."""
    from datetime import UTC, datetime

    from costsim.engine.warm import LOST_WARM_START
    from costsim.model import (
        CacheControl,
        Call,
        Flavour,
        Message,
        Provenance,
        TextBlock,
        ToolDef,
    )

    schema = {"type": "object", "properties": {"path": {"type": "string"}}}
    tools = tuple(
        ToolDef(f"read_file_{i}", "Read a file of the workspace. " * 120, schema) for i in range(3)
    )
    tools = (*tools[:-1], dataclasses.replace(tools[-1], cache_control=CacheControl("1h")))
    call = Call(
        flavour=Flavour.ANTHROPIC_MESSAGES,
        model="claude-sonnet-4-5",
        provenance=Provenance(Path("w.yaml"), 0),
        messages=(Message("user", (TextBlock("Thanks, that is all."),)),),
        tools=tools,
        response=(TextBlock("ok"),),
        usage=Usage(uncached_input=12, cache_read=2400, output=5),
        recorded_at=datetime(2025, 11, 3, 10, 0, tzinfo=UTC),
    )
    trace = CassetteTrace(Path("w.yaml"), (call,), 0, 0)
    engine = Engine([trace])
    assert engine.warm_starts()  # the recording reads what it never wrote
    none_sent = engine.run(Variant("s", (parse_step("selective_tools"),)))
    (item,) = none_sent.traces[0].calls
    assert item.call.tools == () and item.usage is not None and item.usage.cache_read == 0
    assert [e.message for e in none_sent.events if e.message.startswith(LOST_WARM_START)]
    routed = engine.run(Variant("r", (parse_step("routing:default=claude-opus-4-1"),)))
    (item,) = routed.traces[0].calls
    assert item.usage is not None and item.usage.cache_read > 0  # warm in Opus's own cache
    assert not [e for e in routed.events if e.message.startswith(LOST_WARM_START)]
    # Haiku 4.5 caches no prefix under 4,096 tokens: no entry of its own was warm
    haiku = engine.run(Variant("h", (parse_step("routing:default=claude-haiku-4-5"),)))
    (item,) = haiku.traces[0].calls
    assert item.usage is not None and item.usage.cache_read == 0
