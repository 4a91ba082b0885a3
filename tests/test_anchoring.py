"""A changed call is billed as recorded plus the simulated change (costsim.engine.anchoring).

Where the simulator's replay of a recording is not what the provider billed (OpenAI's
best-effort caching missed, a server-side tool's own iterations read the cache), a variant
simulated the same way carries that gap. It used to stay in the variant's cost: a routed
web-search call "saved" more than the whole cassette cost, and the cost column of compare was
not the recorded cost plus the Δ beside it.
"""

from __future__ import annotations

import json
import tempfile
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

import costsim
from costsim.api.testing import TestMeter
from costsim.engine.anchoring import anchored
from costsim.model import Call, Usage, UsageSource
from costsim.providers.normalise import load_trace
from tests.test_read_pricing import _cassette

SYSTEM = "You answer questions about the shop's orders, politely and briefly. " * 120
MISSED = [(1500, 0), (1510, 0), (1520, 0)]
"""Three gpt-4o-mini calls sharing a long system prompt, none of which read the cache: OpenAI
caches on a best-effort basis, and the replay reads it on the second and third."""
# the recording re-priced at gpt-4o ($2.50 / M input, $10 / M output), as billed: no reads
ROUTED_BY_HAND = (4530 * Decimal("2.50") + 300 * Decimal("10")) / 1_000_000  # 0.014325
# as recorded, at gpt-4o-mini ($0.15 / M input, $0.60 / M output)
RECORDED_BY_HAND = (4530 * Decimal("0.15") + 300 * Decimal("0.60")) / 1_000_000  # 0.0008595


def _without_usage(path: Path, answer: str | None = None) -> Path:
    """The cassette as a stream recorded without ``include_usage`` records it: no usage in
    any response (and ``answer`` as the reply, when given)."""
    import yaml

    document = yaml.safe_load(path.read_text())
    for interaction in document["interactions"]:
        body = json.loads(interaction["response"]["body"]["string"])
        del body["usage"]
        if answer is not None:
            body["choices"][0]["message"]["content"] = answer
        interaction["response"]["body"]["string"] = json.dumps(body)
    path.write_text(yaml.safe_dump(document))
    return path


def test_a_class_moves_by_the_simulated_change() -> None:
    recorded = Usage(uncached_input=2000, cache_read=15000, output=500)
    replay = Usage(uncached_input=17000, output=500)  # a server-side tool's reads, unseen
    # routed, the same tokens: billed as recorded (at the new model's prices)
    assert anchored(recorded, replay, replay) == recorded
    # 5,000 prompt tokens fewer: the reads the replay cannot see shrink with the prompt,
    # 15,000 x 12,000 / 17,000 = 10,588.2
    shorter = anchored(recorded, Usage(uncached_input=12000, output=500), replay)
    assert (shorter.prompt_total, shorter.cache_read, shorter.uncached_input) == (
        12000,
        10588,
        1412,
    )
    # and cannot exceed the prompt that is left
    tiny = anchored(Usage(uncached_input=10, cache_read=990), Usage(uncached_input=600), replay)
    assert (tiny.prompt_total, tiny.cache_read) == (0, 0)
    # a breakpoint that writes where the replay read what the provider did not serve
    missed = Usage(uncached_input=5000, output=10)
    predicted = Usage(uncached_input=1000, cache_read=4000, output=10)
    written = anchored(
        missed, Usage(uncached_input=1000, cache_write_5m=4000, output=10), predicted
    )
    assert (written.cache_read, written.cache_write_5m, written.uncached_input) == (0, 4000, 1000)
    # a thinking budget: output and reasoning move together, reasoning within output
    thought = Usage(uncached_input=100, output=1000, reasoning=800)
    budget = anchored(
        thought,
        Usage(uncached_input=100, output=600, reasoning=400),
        Usage(uncached_input=100, output=1000, reasoning=800),
    )
    assert (budget.output, budget.reasoning, budget.uncached_input) == (600, 400, 100)
    estimated = Usage(uncached_input=100, output=10, source=UsageSource.ESTIMATED)
    assert anchored(recorded, estimated, replay).source is UsageSource.ESTIMATED


def test_a_routed_recording_keeps_what_it_was_billed(tmp_path: Path) -> None:
    """Routed to gpt-4o, the recording's calls read nothing, as billed; the replay's reads
    (which OpenAI did not serve) are neither in the cost nor in the Δ."""
    path = _cassette(tmp_path, "gpt-4o-mini", MISSED, SYSTEM)
    simulation = costsim.simulate(path, "routing:default=gpt-4o")
    (variant,) = simulation.data.variants
    assert simulation.data.baseline.cost_usd == RECORDED_BY_HAND
    assert variant.totals.cache_read_tokens == 0
    assert variant.totals.cost_usd == ROUTED_BY_HAND
    assert variant.baseline.cost_usd == RECORDED_BY_HAND
    assert variant.delta.value == ROUTED_BY_HAND - RECORDED_BY_HAND
    detail = " ".join(simulation.render("table", width=100).split())
    assert "the variant bills 3 recorded calls differently (those it keeps, as recorded" in detail
    assert "where the recording billed $0.000860" in detail


def test_a_what_if_column_is_the_test_cost_plus_the_change(tmp_path: Path) -> None:
    """The plugin's column bills a test's calls as compare does: the routed test costs the
    hand figure; a variant that changes nothing costs what the test did, to the digit."""
    calls = load_trace(_cassette(tmp_path, "gpt-4o-mini", MISSED, SYSTEM)).calls
    columns = TestMeter().what_if(
        {"t": (calls, calls)}, "routing:default=gpt-4o,routing:default=gpt-4o-mini"
    )["t"]
    assert columns["routing:default=gpt-4o"].cost_usd == ROUTED_BY_HAND
    assert columns["routing:default=gpt-4o-mini"].cost_usd == RECORDED_BY_HAND


def test_on_real_recordings_cost_is_the_recording_plus_the_change(corpus: Path) -> None:
    """pydantic-ai's web-search calls read 92,160 tokens the replay cannot see (the search's
    own iterations). Routed to gpt-4o-mini they used to save $0.1437 of a $0.1184 cassette;
    now every cassette's cost is its recorded cost plus its Δ, and no saving exceeds it."""
    name = "tests__models__cassettes__test_openai_responses__test_openai_responses_model_"
    folder = corpus / "pydantic__pydantic-ai"
    paths = sorted(folder.glob(f"{name}*web_search*.yaml"))
    if not paths:
        pytest.skip("the corpus's pydantic-ai web-search recordings are absent")
    document = json.loads(
        costsim.simulate([str(p) for p in paths], "routing:default=gpt-4o-mini").render("json")
    )
    recorded = {c["path"]: c["recorded"] for c in document["cassettes"]}
    searched = 0
    for cassette in document["cassettes"]:
        cost = Decimal(cassette["variant"]["cost_usd"])
        base = Decimal(recorded[cassette["path"]]["cost_usd"])
        assert cost - base == Decimal(cassette["delta"]["cost_usd"])
        assert cost >= 0
        if recorded[cassette["path"]]["cache_read_tokens"]:
            searched += 1  # kept, shrunk as the routed prompt is (by a few tokens)
            read = recorded[cassette["path"]]["cache_read_tokens"]
            assert read * 0.999 <= cassette["variant"]["cache_read_tokens"] <= read
    assert searched >= 3


def test_a_what_if_sees_a_responses_chain_as_compare_does(tmp_path: Path) -> None:
    """The plugin reads a test's calls one by one: a Responses request that continues a
    stored response (previous_response_id) was simulated without the conversation the server
    adds, so truncating a long tool output reached only the request that sent it. The test's
    calls are now chained as a loaded cassette's are: its what-if column is what `simulate`
    prints for the same recording."""
    from costsim.io.cassette import load_cassette
    from costsim.providers.normalise import call_from_interaction
    from tests.test_cassette_loading import interaction, write_yaml

    log = "\n".join(f"line {i}: step {i} passed in {i % 7}ms" for i in range(1500))
    turns = [
        ({"input": "Run the tests.", "tools": []},
         {"id": "resp_1", "output": [{"type": "function_call", "call_id": "c1",
                                      "name": "run_tests", "arguments": "{}"}]}, 60),
        ({"previous_response_id": "resp_1",
          "input": [{"type": "function_call_output", "call_id": "c1", "output": log}]},
         {"id": "resp_2", "output": [{"type": "message", "role": "assistant",
                                      "content": [{"type": "output_text", "text": "All pass."}]}]},
         21000),
        ({"previous_response_id": "resp_2", "input": "Which step was slowest?"},
         {"id": "resp_3", "output": []}, 21040),
    ]  # fmt: skip
    path = write_yaml(
        tmp_path / "chain.yaml",
        [
            interaction(
                "https://api.openai.com/v1/responses",
                {"model": "gpt-4.1-mini", **request},
                {
                    **response,
                    "model": "gpt-4.1-mini-2025-04-14",
                    "created_at": 1762250400,
                    "usage": {"input_tokens": prompt, "output_tokens": 20},
                },
            )
            for request, response, prompt in turns
        ],
    )
    calls = [call_from_interaction(i) for i in load_cassette(path).interactions]
    assert all(call is not None for call in calls)
    strategy = "truncation:max_chars=2000,head=800,tail=600"
    (column,) = TestMeter().what_if({"t": (calls, calls)}, strategy)["t"].values()  # type: ignore[arg-type]
    (variant,) = costsim.simulate(path, strategy).data.variants
    assert variant.totals.prompt_tokens < 60 + 2 * 2000  # both later requests truncated
    assert column.cost_usd == variant.totals.cost_usd
    # a conversation one test continues from another (a module fixture's, say): the same
    split = TestMeter().what_if(
        {"a": (calls[:2], calls[:2]), "b": (calls[2:], calls[2:])}, strategy
    )  # type: ignore[arg-type]
    costs = [column.cost_usd for columns in split.values() for column in columns.values()]
    assert None not in costs and sum(costs) == variant.totals.cost_usd  # type: ignore[arg-type]


def test_a_drifted_test_costs_its_recording_plus_what_it_sends_more(tmp_path: Path) -> None:
    """A test whose code now sends a longer system prompt: its calls are the recorded ones
    plus the added tokens, uncached (the recording shows OpenAI served no read; the replay's
    reads are not billed). It used to be the replay's whole simulation ($0.00064965 for a
    recording of $0.0008595)."""
    import dataclasses

    from costsim.model import Message, TextBlock

    calls = load_trace(_cassette(tmp_path, "gpt-4o-mini", MISSED, SYSTEM)).calls
    longer = SYSTEM + "Be kind."
    sent = [
        dataclasses.replace(
            call, messages=(Message("system", (TextBlock(longer),)), *call.messages[1:])
        )
        for call in calls
    ]
    metered = TestMeter().as_sent(calls, sent)
    added = sum(m.usage.prompt_total for m in metered if m.usage is not None) - 4530
    assert 0 < added <= 3 * 4  # "Be kind." is 3 tokens in o200k, in each of 3 calls
    assert all(m.usage is not None and m.usage.cache_read == 0 for m in metered)
    cost = sum((m.price.amount for m in metered if m.price and m.price.amount), Decimal(0))
    assert cost == RECORDED_BY_HAND + added * Decimal("0.15") / 1_000_000


def test_a_call_without_usage_is_estimated_with_the_cache_it_would_have_read(
    tmp_path: Path,
) -> None:
    """A stream recorded without usage (the openai SDK's default) is estimated. Its repeated
    system prompt was billed wholly uncached, above what OpenAI, which caches a repeated
    prefix of 1,024 tokens or more unasked, bills such calls; it is now split as the replay
    splits it, in report, compare's baseline and the plugin alike, and the reads are banded
    (OpenAI may not have served them)."""
    from costsim.analysis.report import build_report

    path = _without_usage(_cassette(tmp_path, "gpt-4o-mini", MISSED, SYSTEM))
    trace = load_trace(path)
    assert all(call.usage is None for call in trace.calls)
    report = build_report([trace])
    first, second, third = report.cassettes[0].calls
    assert first.usage is not None and first.usage.cache_read == 0
    for later in (second, third):
        assert later.usage is not None and later.usage.estimated
        assert later.usage.cache_read >= 1024 and later.usage.cache_read % 128 == 0
    # cheaper than all uncached by the reads at the cached discount ($0.15 -> $0.075 / M)
    reads = second.usage.cache_read + third.usage.cache_read  # type: ignore[union-attr]
    uncached = sum(m.usage.prompt_total for m in (first, second, third))  # type: ignore[union-attr]
    output = sum(m.usage.output for m in (first, second, third))  # type: ignore[union-attr]
    whole = (uncached * Decimal("0.15") + output * Decimal("0.60")) / 1_000_000
    assert report.totals.cost_usd == whole - reads * Decimal("0.075") / 1_000_000
    # the same in compare's baseline and in the plugin
    simulation = costsim.simulate(path, "truncation")
    assert simulation.data.baseline.cost_usd == report.totals.cost_usd
    plugin = TestMeter().recorded(trace.calls)
    assert (
        sum(m.price.amount for m in plugin if m.price and m.price.amount) == report.totals.cost_usd
    )


def test_a_reasoning_model_recorded_without_usage_says_its_thinking_is_unknown(
    tmp_path: Path,
) -> None:
    """o4-mini reasons on every request; a stream recorded without usage shows only the
    answer. A trial's such call read thinking 0, cost 52% below its bill, and a routing band
    its true saving fell outside. Its thinking now reads as unreported (≥), its output band
    reaches as far as reasoning models' hidden thinking did on the corpus, and the saving is
    not cut at the estimate's cost."""
    from costsim.analysis.report import build_report

    answer = "The refund for order 4411 was issued on Monday and should arrive in five days. "
    path = _without_usage(_cassette(tmp_path, "o4-mini", [(1400, 0)]), answer * 2)
    trace = load_trace(path)
    report = build_report([trace])
    assert report.totals.unreported_thinking_calls == 1 and report.totals.reasoning_tokens == 0
    (call,) = report.cassettes[0].calls
    assert call.usage is not None and call.usage.output < 60
    # billed, say, 515 output tokens (448 of them thinking): o4-mini $1.10 / $4.40 per million,
    # gpt-4o-mini $0.15 / $0.60
    prompt = call.usage.prompt_total
    saving = (
        prompt * (Decimal("1.10") - Decimal("0.15")) / 1_000_000
        + 515 * (Decimal("4.40") - Decimal("0.60")) / 1_000_000
    )
    (variant,) = costsim.simulate(path, "routing:default=gpt-4o-mini").data.variants
    band = variant.delta
    assert band.low is not None and band.high is not None
    assert band.low <= -saving <= band.high < 0


def test_which_requests_reason() -> None:
    """o-series and GPT-5 models reason unless told not to; GPT-5's chat model and GPT-5.1
    and later only when asked; the model the response names counts (an Azure deployment's
    name says nothing)."""
    import dataclasses

    from costsim.model import ThinkingConfig
    from costsim.model.reasoning import reasons

    (call,) = load_trace(_cassette(Path(tempfile.mkdtemp()), "gpt-4o", [(10, 0)])).calls
    named = {
        model: reasons(dataclasses.replace(call, model=model, response_model=None))
        for model in ("o1-mini", "o3-pro", "O4-mini", "openai/o4-mini", "gpt-5-mini", "gpt-oss-120b",
                      "gpt-5-chat-latest", "gpt-5.1", "gpt-4.1", "codex-mini-latest")
    }  # fmt: skip
    assert [m for m, yes in named.items() if yes] == [
        "o1-mini", "o3-pro", "O4-mini", "openai/o4-mini", "gpt-5-mini", "gpt-oss-120b",
        "codex-mini-latest",
    ]  # fmt: skip
    azure = dataclasses.replace(call, model="reasoning-prod", response_model="o4-mini-2025-04-16")
    assert reasons(azure)
    asked = ThinkingConfig(enabled=True, effort="low")
    assert reasons(dataclasses.replace(call, model="gpt-5.1", thinking=asked))
    off = ThinkingConfig(enabled=False, effort="none")
    assert not reasons(dataclasses.replace(call, model="o4-mini", thinking=off))


def test_a_stream_without_usage_saves_no_more_than_its_estimate_costs(tmp_path: Path) -> None:
    """A plain model's stream recorded without usage: routing it saves at most what the
    estimate costs (a review saw the band reach 4.5 times it); a reasoning model's output is
    only a lower bound, so its band is not cut there (above)."""
    answer = "Your refund was issued on Monday. " * 4
    path = _without_usage(_cassette(tmp_path, "gpt-4o", [(1400, 0)]), answer)
    simulation = costsim.simulate(path, "routing:default=gpt-4o-mini")
    (variant,) = simulation.data.variants
    cost = simulation.data.baseline.cost_usd
    assert cost is not None and variant.delta.low is not None
    assert variant.delta.low >= -cost


def test_the_plugin_estimates_each_cassette_of_a_test_apart(tmp_path: Path) -> None:
    """A test that replays two cassettes: its calls without usage are split by the cache
    rules per cassette, as report splits them (a review saw the plugin share a cache across
    the two)."""
    import shutil

    from costsim.analysis.report import build_report

    first = _without_usage(_cassette(tmp_path, "gpt-4o-mini", MISSED, SYSTEM))
    second = tmp_path / "again.yaml"
    shutil.copy(first, second)
    traces = [load_trace(first), load_trace(second)]
    report = build_report(traces)
    plugin = TestMeter().recorded([call for trace in traces for call in trace.calls])
    assert sum(m.usage.cache_read for m in plugin if m.usage) == report.totals.cache_read_tokens
    assert sum(m.price.amount for m in plugin if m.price and m.price.amount) == (
        report.totals.cost_usd
    )


def test_a_bill_and_its_change_share_one_band_and_a_routed_read_is_not_repriced() -> None:
    """The recording's bill is exact, so a variant's cost and its change from it have one
    band. They did not: the cost carried the variant's estimates alone, the change the
    difference from the replay's, each at its own model's prices, so routing GPT-4.1 to
    mini banded its change four times its cost (a trial's; its hand count matched the
    figure to the cent). A cache boundary both simulations place in the same prefix moves
    the routed bill by the difference in tokens, at the new prices: nothing here."""
    scenario = costsim.compare(Path(__file__).parents[1] / "scenarios" / "side_calls.yaml")
    for summary in scenario.variants:
        cost, change = summary.cost, summary.delta
        assert cost.low is not None and cost.high is not None, summary.variant.name
        assert change.low is not None and change.high is not None
        assert (cost.high - cost.low) == (change.high - change.low), summary.variant.name
    routed = next(v for v in scenario.variants if v.variant.name == "all-on-mini")
    assert routed.delta.high - routed.delta.low < Decimal("0.00001")  # type: ignore[operator]


def test_a_drifted_test_s_routed_change_counts_the_replay_at_each_bill_s_prices(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A test that sent a longer system prompt than it recorded: its what-if change is banded
    against what it sent. Both bills move from the recording by their own and the replay's
    estimates, the replay's at each bill's prices; taking only the two runs' own terms left
    the replay out and banded a routed change too narrowly (a review's -0.00443/+0.00074,
    against -0.00456/+0.00087)."""
    import dataclasses

    from costsim.analysis.spread import difference, difference_terms
    from costsim.api import testing
    from costsim.model import Message, TextBlock

    (trace,) = costsim.load(Path(__file__).parents[1] / "scenarios/cassettes/side_calls")
    calls = list(trace.calls)

    def drifted(call: Call) -> Call:
        head = call.messages[0]
        text = "Note: " + "policy text " * 60 + "\n" + head.content[0].text  # type: ignore[union-attr]
        return dataclasses.replace(
            call, messages=(Message("system", (TextBlock(text),)), *call.messages[1:])
        )

    captured: dict[str, Any] = {}
    made = testing.run_terms  # type: ignore[attr-defined]

    def spy(result: Any, *args: Any, **kwargs: Any) -> Any:
        captured[result.variant.name] = terms = made(result, *args, **kwargs)
        return terms

    monkeypatch.setattr(testing, "run_terms", spy)
    strategy = "routing:default=gpt-4.1-mini"
    costs = testing.TestMeter().what_if({"t": (calls, [drifted(c) for c in calls])}, strategy)
    (variant,), (sent,) = captured[strategy], captured["as sent"]
    expected = difference(difference_terms(*variant), difference_terms(*sent))
    assert costs["t"][strategy].change == expected
    # the replay of the recording reads and writes where the recording billed it: exact
    # there, so only the two runs' own terms move the change
    assert expected == difference(variant[0], sent[0])
