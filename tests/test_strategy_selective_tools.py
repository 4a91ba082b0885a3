"""``selective_tools``: exact savings of unsent tool definitions, divergence, oracle mode."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from pathlib import Path

import pytest

from costsim.engine import Engine, Variant, make_step
from costsim.errors import ConfigError
from costsim.metering.meter import Meter
from costsim.metering.serialise import serialise
from costsim.metering.tokenizers import counter
from costsim.model import (
    Call,
    Flavour,
    Message,
    Provenance,
    TextBlock,
    ToolDef,
    ToolUseBlock,
    Usage,
)
from costsim.normalise import CassetteTrace
from costsim.pricing import price

WHEN = datetime(2025, 11, 3, 10, 0, tzinfo=UTC)
EMPTY = {"type": "object", "properties": {}}
TOOLS = (
    ToolDef("read_file", "Read a file.", EMPTY),
    ToolDef("git_diff", "Show the diff.", EMPTY),
    ToolDef("web_search", "Search the web.", EMPTY),
)


def _rendered(tool: ToolDef) -> int:
    # how OpenAI shows a function without parameters to the model
    return counter("o200k_base")(f"// {tool.description}\ntype {tool.name} = (_: {{}}) => any;")


def _trace(user: str, response_tool: str) -> CassetteTrace:
    call = Call(
        flavour=Flavour.OPENAI_CHAT,
        model="gpt-4o",
        provenance=Provenance(Path("s.yaml"), 0),
        messages=(Message("user", (TextBlock(user),)),),
        tools=TOOLS,
        response=(ToolUseBlock("c1", response_tool, {}),),
        recorded_at=WHEN,
    )
    return CassetteTrace(
        Path("s.yaml"),
        (
            dataclasses.replace(
                call, usage=Usage(uncached_input=serialise(call).raw + 5, output=12)
            ),
        ),
        0,
        0,
    )


def test_heuristic_sends_matching_categories_and_saves_their_tokens_exactly() -> None:
    trace = _trace("Please read src/app.py and explain it.", "read_file")
    result = Engine([trace]).run(Variant("s", (make_step("selective_tools"),)))
    item = result.traces[0].calls[0]
    assert [t.name for t in item.call.tools] == ["read_file"]
    recorded = trace.calls[0].usage
    assert recorded is not None and item.usage is not None
    saved = _rendered(TOOLS[1]) + _rendered(TOOLS[2])
    # tool calls are calibrated: slope on the offline count plus a term per tool definition
    coefficients = Meter().coefficients(trace.calls[0]).as_dict()
    delta = -saved * coefficients["raw"] - 2 * coefficients["tools"]
    assert item.usage.prompt_total == round(recorded.prompt_total + delta)
    assert (
        result.totals().cost_usd
        == price(item.usage, model="gpt-4o", provider="openai", at=WHEN).amount
    )
    assert result.divergences == 0


def test_unsent_tool_in_the_response_is_a_divergence() -> None:
    trace = _trace("Please read src/app.py and explain it.", "web_search")
    result = Engine([trace]).run(Variant("s", (make_step("selective_tools"),)))
    assert result.divergences == 1
    assert "web_search" in next(e.message for e in result.events if e.kind == "divergence")


def test_oracle_keeps_only_used_tools() -> None:
    trace = _trace("Anything at all.", "git_diff")
    result = Engine([trace]).run(Variant("o", (make_step("selective_tools", {"mode": "oracle"}),)))
    assert [t.name for t in result.traces[0].calls[0].call.tools] == ["git_diff"]
    assert result.divergences == 0


def test_sending_every_category_changes_no_number() -> None:
    trace = _trace("Anything at all.", "git_diff")
    engine = Engine([trace])
    every = make_step(
        "selective_tools", {"core": ["general", "file", "code", "web", "git", "shell"]}
    )
    assert (
        engine.run(Variant("a", (every,))).totals().cost_usd
        == engine.run(Variant("b")).totals().cost_usd
    )
    with pytest.raises(ConfigError, match="mode='psychic'"):
        make_step("selective_tools", {"mode": "psychic"})


def test_selective_tools_over_the_corpus(corpus: Path) -> None:
    from costsim.report import load_traces

    traces, _ = load_traces([corpus])
    engine = Engine(traces)
    base = engine.run(Variant("b")).totals()
    oracle = engine.run(Variant("o", (make_step("selective_tools", {"mode": "oracle"}),)))
    heuristic = engine.run(Variant("h", (make_step("selective_tools"),)))
    assert oracle.totals().prompt_tokens <= base.prompt_tokens
    assert oracle.divergences == 0
    assert heuristic.totals().prompt_tokens <= base.prompt_tokens
    assert heuristic.divergences >= 0
