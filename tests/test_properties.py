"""Invariants every simulation keeps, on generated conversations (hypothesis):

- a strategy that changes nothing changes no number;
- no saving exceeds the baseline's cost, and no variant bills a negative count;
- a trace split in two and summed equals the whole;
- a variant's totals equal the sum of its cassettes.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from costsim.analysis.comparison import compare_variants
from costsim.analysis.report import build_report
from costsim.engine import Engine, Variant, make_step
from costsim.model import (
    Call,
    CassetteTrace,
    Flavour,
    Message,
    Provenance,
    TextBlock,
    ToolDef,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
)
from costsim.pricing.ledger import Totals

WORDS = st.sampled_from(
    ["the", "agent", "reads", "file", "error", "retry", "cache", "tool", "result", "line"]
)
TEXT = st.lists(WORDS, min_size=1, max_size=400).map(" ".join)
START = datetime(2025, 11, 3, 10, 0, tzinfo=UTC)
TOOLS = (
    ToolDef(
        "read_file", "Read a file.", {"type": "object", "properties": {"path": {"type": "string"}}}
    ),
    ToolDef(
        "grep", "Search files.", {"type": "object", "properties": {"pattern": {"type": "string"}}}
    ),
)


@st.composite
def conversations(draw: st.DrawFn, name: str = "t") -> CassetteTrace:
    """A recorded agent conversation: a system prompt, tools, turns with tool round trips,
    and usage that grows with the history like a real one."""
    model = draw(st.sampled_from(["claude-sonnet-4-5", "claude-haiku-4-5"]))
    system = (TextBlock(draw(TEXT)),)
    path = Path(f"{name}.yaml")
    messages: list[Message] = [Message("user", (TextBlock(draw(TEXT)),))]
    calls = []
    prompt = draw(st.integers(300, 3000))
    for index in range(draw(st.integers(1, 6))):
        tool_turn = draw(st.booleans())
        response = (
            (ToolUseBlock(f"tu_{index}", "grep", {"pattern": "x"}),)
            if tool_turn
            else (TextBlock(draw(TEXT)),)
        )
        output = draw(st.integers(1, 800))
        read = draw(st.integers(0, prompt // 2))
        usage = Usage(uncached_input=prompt - read, cache_read=read, output=output)
        calls.append(
            Call(
                flavour=Flavour.ANTHROPIC_MESSAGES,
                model=model,
                provenance=Provenance(path, index),
                system=system,
                messages=tuple(messages),
                tools=TOOLS,
                response=response,
                usage=usage,
                recorded_at=START + timedelta(seconds=30 * index),
            )
        )
        messages.append(Message("assistant", response))
        result = ToolResultBlock(f"tu_{index}", (TextBlock(draw(TEXT)),))
        messages.append(Message("user", (result,) if tool_turn else (TextBlock(draw(TEXT)),)))
        prompt += output + draw(st.integers(20, 4000))
    return CassetteTrace(path, tuple(calls), 0, 0)


RUNS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
VARIANTS = {
    "caching": ("caching", {}),
    "caching-1h": ("caching", {"ttl": "1h"}),
    "truncation": ("truncation", {"max_chars": 400, "head": 100, "tail": 100}),
    "compaction": ("compaction", {"max_messages": 4, "keep_last": 2}),
    "selective_tools": ("selective_tools", {"mode": "oracle"}),
}


def _figures(totals: Totals) -> tuple[object, ...]:
    return (
        totals.llm_calls, totals.prompt_tokens, totals.uncached_input_tokens,
        totals.cache_read_tokens, totals.cache_write_tokens, totals.output_tokens,
        totals.cost_usd,
    )  # fmt: skip


@RUNS
@given(conversations())
def test_a_strategy_that_changes_nothing_changes_no_number(trace: CassetteTrace) -> None:
    engine = Engine([trace])
    nothing = Variant("nothing", (make_step("truncation", {"max_chars": 10**9}),))
    assert _figures(engine.run(nothing).totals()) == _figures(engine.run(Variant("base")).totals())


@RUNS
@given(conversations(), st.sampled_from(sorted(VARIANTS)))
def test_no_saving_exceeds_the_baseline(trace: CassetteTrace, name: str) -> None:
    strategy, params = VARIANTS[name]
    engine = Engine([trace])
    comparison = compare_variants(engine, [Variant(name, (make_step(strategy, params),))])
    baseline, variant = comparison.baseline, comparison.variants[0].totals
    for figure in _figures(variant)[:-1]:
        assert isinstance(figure, int) and figure >= 0
    assert variant.cost_usd is not None and baseline.cost_usd is not None
    assert Decimal(0) <= variant.cost_usd
    assert baseline.cost_usd - variant.cost_usd <= baseline.cost_usd


@RUNS
@given(conversations("a"), conversations("b"))
def test_a_trace_split_in_two_sums_to_the_whole(
    first: CassetteTrace, second: CassetteTrace
) -> None:
    whole = build_report([first, second]).totals
    parts = Totals()
    parts.merge(build_report([first]).totals)
    parts.merge(build_report([second]).totals)
    assert _figures(parts) == _figures(whole)


@RUNS
@given(conversations("a"), conversations("b"), st.sampled_from(sorted(VARIANTS)))
def test_a_variants_totals_are_the_sum_of_its_cassettes(
    first: CassetteTrace, second: CassetteTrace, name: str
) -> None:
    strategy, params = VARIANTS[name]
    result = Engine([first, second]).run(Variant(name, (make_step(strategy, params),)))
    summed = Totals()
    for totals in result.totals_by_trace().values():
        summed.merge(totals)
    assert _figures(summed) == _figures(result.totals())


def test_merging_totals_adds_every_field() -> None:
    """``Totals.merge`` names its fields one by one (for speed): none may be forgotten."""
    import dataclasses

    from costsim.pricing.ledger import Totals
    from costsim.pricing.split import ClassCost

    one = Totals()
    for item in dataclasses.fields(Totals):
        value = getattr(one, item.name)
        if isinstance(value, bool):
            continue
        if isinstance(value, int | Decimal):
            setattr(one, item.name, type(value)(1))
    one.split = ClassCost(*(Decimal(1) for _ in range(5)))
    merged = Totals()
    merged.merge(one)
    merged.merge(one)
    for item in dataclasses.fields(Totals):
        value = getattr(merged, item.name)
        if isinstance(value, int | Decimal) and not isinstance(value, bool):
            assert value == 2, item.name
    assert merged.split.total == 10


def test_cache_rule_overrides_and_gaps_keep_every_other_rule() -> None:
    """``with_overrides`` and ``with_gap`` change what they name and nothing else."""
    import dataclasses
    from datetime import date

    import pytest

    from costsim.cache.rules import CacheRules, default_rules
    from costsim.errors import ConfigError

    rules = dataclasses.replace(default_rules(), session_gap_seconds=7, openai_increment=64)
    changed = rules.with_overrides([("anthropic_minimum", "claude-x", 99, date(2026, 1, 1))])
    for item in dataclasses.fields(CacheRules):
        if item.name != "anthropic_minimum":
            assert getattr(changed, item.name) == getattr(rules, item.name), item.name
    assert changed.anthropic_minimum[-1].value == 99
    assert rules.with_gap(None) is rules
    assert rules.with_gap(12.5).default_gap_seconds == 12.5
    assert rules.with_gap(12.5).session_gap_seconds == 7
    for bad in (-1.0, float("nan"), float("inf")):
        with pytest.raises(ConfigError, match="0 seconds or more"):
            rules.with_gap(bad)
