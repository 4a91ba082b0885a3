"""The offline estimator: tokenizers, per-flavour serialisation, calibration, memoisation."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from costsim.analysis.report import build_report, load_traces
from costsim.cli import cli
from costsim.errors import DataError
from costsim.metering import tokenizers
from costsim.metering.calibration import IDENTITY, NormalEquations, fit, vector
from costsim.metering.meter import Meter
from costsim.metering.serialise import Features, Serialiser, serialise
from costsim.model import (
    Call,
    Flavour,
    Message,
    Provenance,
    TextBlock,
    ThinkingBlock,
    ToolDef,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
    UsageSource,
)
from tests.conftest import EXAMPLES

HERE = Provenance(Path("x.yaml"), 0)
WEATHER = ToolDef(
    name="get_weather",
    description="Get the weather.",
    input_schema={
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "City name"},
            "unit": {"type": "string", "enum": ["c", "f"]},
        },
        "required": ["city"],
    },
)


def _chat(*messages: Message, model: str = "gpt-4o", tools: tuple[ToolDef, ...] = ()) -> Call:
    return Call(
        flavour=Flavour.OPENAI_CHAT, model=model, provenance=HERE, messages=messages, tools=tools
    )


def test_offline_encodings_match_tiktoken_ids() -> None:
    assert tokenizers.encoding("cl100k_base").encode("Hello world") == [9906, 1917]
    assert tokenizers.encoding("o200k_base").encode("Hello world") == [13225, 2375]


def test_vocabulary_with_wrong_hash_is_refused() -> None:
    spec = dataclasses.replace(tokenizers.ENCODINGS["cl100k_base"], sha256="0" * 64)
    with pytest.raises(DataError, match="expected SHA-256"):
        tokenizers._read_vocabulary(spec)


def test_unknown_encoding_is_a_data_error() -> None:
    with pytest.raises(DataError, match="unknown encoding"):
        tokenizers.encoding("p50k_base")


def test_openai_chat_text_recipe_by_hand() -> None:
    # 3 per message + role + content; 3 to prime the reply:
    # (3 + "system" 1 + "You are terse." 4) + (3 + "user" 1 + "hi" 1) + 3 = 16
    call = _chat(
        Message("system", (TextBlock("You are terse."),)), Message("user", (TextBlock("hi"),))
    )
    assert serialise(call).raw == 16


def test_openai_chat_name_adds_one() -> None:
    plain = _chat(Message("user", (TextBlock("hi"),)))
    named = _chat(Message("user", (TextBlock("hi"),), name="bob"))
    assert serialise(named).raw - serialise(plain).raw == 1 + 1  # "bob" is one token, +1


def test_openai_chat_reasoning_models_prime_with_two() -> None:
    message = Message("user", (TextBlock("hi"),))
    assert serialise(_chat(message, model="gpt-5")).raw == serialise(_chat(message)).raw - 1


def test_openai_chat_tools_rendered_as_signatures() -> None:
    base = _chat(Message("user", (TextBlock("hi"),)))
    with_tool = dataclasses.replace(base, tools=(WEATHER,))
    features = serialise(with_tool)
    # "namespace functions {\n\n// Get the weather.\ntype get_weather = (_: {\n// City name\n
    #  city: string,\nunit?: \"c\" | \"f\",\n}) => any;\n\n} // namespace functions" is 38
    # tokens, plus 9 around it; no system message to reuse.
    assert features.raw - serialise(base).raw == 38 + 9
    assert features.tools == 1 and features.has_tools and features.fixed == 0
    # with a system message the namespace joins it: 4 tokens less than a message of its own
    system = Message("system", (TextBlock("You are terse."),))
    plain = _chat(system, Message("user", (TextBlock("hi"),)))
    tooled = dataclasses.replace(plain, tools=(WEATHER,))
    assert serialise(tooled).raw - serialise(plain).raw == 38 + 9 - 4
    # a named tool_choice costs its name and 4 tokens
    named = dataclasses.replace(
        tooled, tool_choice={"type": "function", "function": {"name": "get_weather"}}
    )
    assert serialise(named).raw - serialise(tooled).raw == 2 + 4  # "get_weather" is 2 tokens


def test_anthropic_serialisation_by_hand() -> None:
    call = Call(
        flavour=Flavour.ANTHROPIC_MESSAGES,
        model="claude-sonnet-4-5",
        provenance=HERE,
        system=(TextBlock("You are terse."),),
        tools=(WEATHER,),
        messages=(
            Message("user", (TextBlock("hi"),)),
            Message("assistant", (ToolUseBlock("t1", "grep", {"q": "x"}),)),
            Message("user", (ToolResultBlock("t1", (TextBlock("found"),)),)),
        ),
    )
    features = serialise(call)
    assert (features.messages, features.tool_round_trips, features.tools) == (3, 1, 1)
    # Sonnet 4.5's documented tool-use system prompt (tool_choice auto): 496 tokens
    assert features.fixed == 496
    positions = Serialiser().positions(call)
    # tool prompt 496 + tool 42 ("get_weather" 2, description 4, schema 36) | system +4 |
    # "user hi" +2 | "assistant" + "grep" + '{"q":"x"}' +7 | "user" "found" +2
    assert [p.cumulative for p in positions] == [538, 542, 544, 551, 553]
    assert [p.section for p in positions] == ["tools", "system", "messages", "messages", "messages"]
    assert positions[-1].cumulative == features.raw + features.fixed
    forced = dataclasses.replace(call, tool_choice={"type": "any"})
    assert serialise(forced).fixed == 588 and serialise(forced).forced_tool


def test_previous_thinking_kept_only_by_newer_models() -> None:
    thinking = Message(
        "assistant", (ThinkingBlock("Let me think about this carefully."), TextBlock("ok"))
    )
    older = Call(
        flavour=Flavour.ANTHROPIC_MESSAGES,
        model="claude-sonnet-4-5",
        provenance=HERE,
        messages=(thinking,),
    )
    newer = dataclasses.replace(older, model="claude-opus-4-5")
    assert serialise(newer).raw > serialise(older).raw


def test_weighted_fit_recovers_a_known_model() -> None:
    # prompt = 300 (rule tokens, given) + 1.2 raw + 40 per round trip + 15, exactly.
    samples = []
    for raw in (10, 100, 1000, 5000):
        for trips in (0, 1, 3):
            features = Features(raw, 2, trips, 1, False, False, 0, 0, fixed=300)
            samples.append((features, round(300 + 1.2 * raw + 40 * trips + 15)))
    coefficients = fit("claude", samples)
    values = coefficients.as_dict()
    assert values["raw"] == pytest.approx(1.2, abs=1e-3)
    assert values["tool_round_trips"] == pytest.approx(40, abs=0.5)
    predicted = coefficients.predict(Features(2000, 2, 2, 1, False, False, 0, 0, fixed=300))
    assert predicted == pytest.approx(300 + 1.2 * 2000 + 80 + 15, rel=1e-3)


def test_openai_fit_keeps_the_exact_count() -> None:
    # OpenAI's count is the tokenizer's: only round trips and tools' presence are fitted.
    samples = [
        (Features(raw, 3, trips, 1, False, False, 0, 0), raw + 5 * trips + 2)
        for raw in (50, 200, 800)
        for trips in (0, 1, 2)
    ]
    values = fit("openai-chat/gpt-4o", samples).as_dict()
    assert values["raw"] == 1.0 and values["messages"] == 0.0
    assert values["tool_round_trips"] == pytest.approx(5, abs=0.05)
    assert values["has_tools"] == pytest.approx(2, abs=0.05)


def test_normal_equations_leave_one_out_is_subtraction() -> None:
    whole, part = NormalEquations(), NormalEquations()
    rest = NormalEquations()
    for i, raw in enumerate((10, 20, 30, 40, 50, 60, 70, 80)):
        features = Features(raw, 1 + i % 3, i % 2, 0, i % 2 == 0, False, 0, 0, fixed=i)
        y = i + 1.1 * raw + 5 * (i % 3)
        whole.add(features, y)
        (part if i < 3 else rest).add(features, y)
    assert whole.minus(part).solve() == pytest.approx(rest.solve())
    assert part.plus(rest).solve() == pytest.approx(whole.solve())
    assert len(IDENTITY) == len(vector(Features(1, 1, 0, 0, False, False, 0, 0)))


def test_serialiser_counts_each_message_once() -> None:
    calls = []
    history: tuple[Message, ...] = ()
    for turn in range(30):
        history = (*history, Message("user", (TextBlock(f"question number {turn}"),)))
        calls.append(_chat(*history))
        history = (*history, Message("assistant", (TextBlock(f"answer number {turn}"),)))
    serialiser = Serialiser()
    for call in calls:
        serialiser.features(call)
    assert len(serialiser._messages) == 59  # every distinct message counted once


def test_a_request_is_counted_once_and_the_memo_stays_bounded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    call = _chat(Message("user", (TextBlock("what is the capital of France?"),)))
    serialiser = Serialiser()
    counted: list[Call] = []
    real = serialiser._features
    monkeypatch.setattr(serialiser, "_features", lambda c: counted.append(c) or real(c))
    first = serialiser.features(call)
    assert serialiser.features(call) is first and counted == [call]
    # an equal request that is another object is counted again, to the same features
    twin = dataclasses.replace(call)
    assert serialiser.features(twin) == first and counted == [call, twin]
    assert first == Serialiser().features(call)
    monkeypatch.setattr(Serialiser, "_CALLS", 2)
    serialiser.features(_chat(Message("user", (TextBlock("another"),))))
    assert len(serialiser._calls) == 1  # full at two: forgotten, then the new one kept


def test_transformed_prompt_is_anchored_on_recorded() -> None:
    meter = Meter()
    base = _chat(Message("user", (TextBlock("hi"),)))
    longer = _chat(Message("user", (TextBlock("hi there, how are you doing today?"),)))
    assert meter.transformed_prompt(base, base, 1000) == 1000
    grown = meter.transformed_prompt(base, longer, 1000)
    assert grown == 1000 + serialise(longer).raw - serialise(base).raw  # chat recipe: slope 1


def test_estimated_usage_is_flagged(tmp_path: Path) -> None:
    text = (EXAMPLES / "openai_chat_streaming.yaml").read_text()
    (tmp_path / "nousage.yaml").write_text(
        text.replace('\\"usage\\":{\\"prompt', '\\"nousage\\":{\\"prompt')
    )
    traces, _ = load_traces([tmp_path])
    report = build_report(traces)
    assert report.totals.estimated_calls == 1 and report.totals.calls_with_usage == 0
    assert report.totals.prompt_tokens == 31  # the cookbook recipe is exact for this chat
    assert report.totals.cost_usd is not None and report.estimator
    estimate = Meter().estimated_usage(traces[0].calls[0])
    assert estimate.source is UsageSource.ESTIMATED and estimate.output > 0
    result = CliRunner().invoke(cli, ["report", str(tmp_path)])
    assert "their tokens are estimated" in " ".join(result.stdout.split())


def test_calibrate_cli_on_examples() -> None:
    result = CliRunner().invoke(cli, ["calibrate", str(EXAMPLES), "--format", "json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["format_version"] == 2 and document["mode"] == "refit"
    names = {f["family"] for f in document["families"]}
    assert "claude" in names and not any(name.endswith("+tools") for name in names)
    cells = {(c["flavour"], c["class"]) for c in document["flavours"]}
    assert ("anthropic-messages", "tools") in cells and ("anthropic-messages", "all") in cells
    for cell in document["flavours"]:
        for key in ("calibrated_median_ape", "calibrated_p90_ape", "loco_median_ape",
                    "increment_median_error_pct", "increment_p90_error_pct"):  # fmt: skip
            assert key in cell
    table = CliRunner().invoke(cli, ["calibrate", str(EXAMPLES)])
    assert "leave-one-source-out" in table.stdout and "leave-one-cassette-out" in table.stdout
    assert " ".join(table.stdout.split()).startswith(
        "Prompt-total error of requests without images or documents (leave-one-cassette-out: "
    )


def test_usage_defaults_are_recorded() -> None:
    assert Usage().source is UsageSource.RECORDED
