"""``batching``: three tool-only turns become one round trip."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import pytest

from costsim.engine import Engine, Variant, make_step
from costsim.metering.openai_framing import call_tokens, parallel_calls_tokens
from costsim.metering.serialise import serialise
from costsim.metering.tokenizers import counter
from costsim.model import (
    CacheControl,
    Call,
    CassetteTrace,
    Flavour,
    Message,
    Provenance,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
)
from costsim.pricing.prices import price

WHEN = datetime(2025, 11, 3, 10, 0, tzinfo=UTC)
TASK = Message("user", (TextBlock("Open the three pages and report their titles."),))


def _turn(name: str, page: str) -> tuple[ToolUseBlock, Message, Message]:
    use = ToolUseBlock(f"call_{name}", "browser_navigate", {"url": f"https://example.com/{page}"})
    return (
        use,
        Message("assistant", (use,)),
        Message(
            "tool", (ToolResultBlock(use.id, (TextBlock(f"Page title: {page.title()} docs"),)),)
        ),
    )


def _trace(*, final_answer: bool) -> CassetteTrace:
    turns = [_turn(n, p) for n, p in (("a", "alpha"), ("b", "beta"), ("c", "gamma"))]
    history: tuple[Message, ...] = (TASK,)
    calls = []
    responses: list[tuple[object, ...]] = [(use,) for use, _, _ in turns]
    if final_answer:
        responses.append((TextBlock("Alpha, Beta and Gamma docs."),))
    for index, response in enumerate(responses):
        if index:
            _, assistant, result = turns[index - 1]
            history = (*history, assistant, result)
        call = Call(
            flavour=Flavour.OPENAI_CHAT,
            model="gpt-4o",
            provenance=Provenance(Path("b.yaml"), index),
            messages=history,
            response=response,  # type: ignore[arg-type]
            recorded_at=WHEN.replace(second=index * 5),
        )
        calls.append(
            dataclasses.replace(
                call, usage=Usage(uncached_input=serialise(call).raw, output=15 + index)
            )
        )
    return CassetteTrace(Path("b.yaml"), tuple(calls), 0, 0)


def test_batch_of_three_saves_exactly_the_two_removed_prompts() -> None:
    trace = _trace(final_answer=False)
    engine = Engine([trace])
    base = engine.run(Variant("base")).totals()
    result = engine.run(Variant("batch", (make_step("batching"),)))
    totals = result.totals()
    prompts = [c.usage.prompt_total for c in trace.calls]  # type: ignore[union-attr]
    assert totals.llm_calls == 1
    assert totals.prompt_tokens == base.prompt_tokens - prompts[1] - prompts[2]
    assert totals.output_tokens == base.output_tokens == 15 + 16 + 17
    removed = Usage(uncached_input=prompts[1] + prompts[2])
    saved = price(removed, model="gpt-4o", provider="openai", at=WHEN).amount
    assert base.cost_usd is not None and totals.cost_usd is not None and saved is not None
    assert totals.cost_usd == base.cost_usd - saved
    merged = result.traces[0].calls[0].call
    assert [b.id for b in merged.response if isinstance(b, ToolUseBlock)] == [
        "call_a",
        "call_b",
        "call_c",
    ]


def test_later_call_carries_one_merged_turn() -> None:
    trace = _trace(final_answer=True)
    result = Engine([trace]).run(Variant("batch", (make_step("batching"),)))
    final = result.traces[0].calls[-1]
    roles = [m.role for m in final.call.messages]
    assert roles == ["user", "assistant", "tool", "tool", "tool"]
    assert len(final.call.messages[1].content) == 3
    recorded = trace.calls[-1].usage
    assert recorded is not None and final.usage is not None
    # two assistant messages fewer: 2 x (3 per message + 1 for "assistant"); the three calls
    # of one turn reach GPT-4o as one multi_tool_use.parallel call instead of three
    count = counter("o200k_base")
    calls = [b for b in final.call.messages[1].content if isinstance(b, ToolUseBlock)]
    wrapped = parallel_calls_tokens(calls, count) - sum(call_tokens(b, count) for b in calls)
    assert final.usage.prompt_total == recorded.prompt_total - 8 + wrapped


def _rolling(trace: CassetteTrace) -> CassetteTrace:
    """``trace`` as a client with a rolling breakpoint sends it: the last block of every
    request's last message marked, and the message marked before sent again unmarked."""
    calls = []
    for call in trace.calls:
        *head, last = call.messages
        *blocks, end = last.content
        marked = dataclasses.replace(end, cache_control=CacheControl())
        calls.append(
            dataclasses.replace(
                call, messages=(*head, dataclasses.replace(last, content=(*blocks, marked)))
            )
        )
    return dataclasses.replace(trace, calls=tuple(calls))


def test_a_rolling_breakpoint_does_not_hide_the_conversation() -> None:
    """The most common way to cache moves the marker from turn to turn, so a request no longer
    begins with the previous one byte for byte: batching used to see no conversation, merged
    nothing and called the result exact ('saves nothing'). The trial's recording of six
    Sonnet calls saved $0.00248 by hand; here, the same merge as without markers."""
    plain = _trace(final_answer=True)
    rolling = _rolling(plain)
    assert rolling.calls[1].messages[0] != rolling.calls[0].messages[0]  # the marker moved
    batch = Variant("batch", (make_step("batching"),))
    merged = Engine([rolling]).run(batch)
    assert merged.totals().llm_calls == Engine([plain]).run(batch).totals().llm_calls == 2
    (event,) = [e for e in merged.events if e.kind == "change"]
    assert event.message == "merged 3 tool-only round trips into one (2 request(s) removed)"
    final = merged.traces[0].calls[-1].call
    assert [m.role for m in final.messages] == ["user", "assistant", "tool", "tool", "tool"]


def test_dependent_input_is_a_divergence_and_non_batchable_tools_stay() -> None:
    trace = _trace(final_answer=False)
    calls = list(trace.calls)
    # the second navigation uses a URL only the first result mentioned
    first_result = Message(
        "tool", (ToolResultBlock("call_a", (TextBlock("see https://example.com/beta-next"),)),)
    )
    second = calls[1]
    calls[1] = dataclasses.replace(
        second,
        messages=(*second.messages[:-1], first_result),
        response=(
            ToolUseBlock("call_b", "browser_navigate", {"url": "https://example.com/beta-next"}),
        ),
    )
    calls[2] = dataclasses.replace(calls[2], messages=(*calls[1].messages, *calls[2].messages[3:]))
    dependent = CassetteTrace(Path("d.yaml"), tuple(calls), 0, 0)
    result = Engine([dependent]).run(Variant("batch", (make_step("batching"),)))
    assert result.divergences == 1
    none = Engine([trace]).run(Variant("n", (make_step("batching", {"tools": ["read_*"]}),)))
    assert none.totals().llm_calls == 3
    assert none.totals().cost_usd == Engine([trace]).run(Variant("b")).totals().cost_usd


def test_a_field_name_an_earlier_result_mentions_is_no_dependency() -> None:
    """``{"element": ...}``: the tool's field, not a value taken from a result that says
    "element" (a trial saw ``browser_hover uses 'element' from an earlier result``)."""
    trace = _trace(final_answer=False)
    calls = list(trace.calls)
    first_result = Message(
        "tool", (ToolResultBlock("call_a", (TextBlock("every element is visible"),)),)
    )
    hover = ToolUseBlock("call_b", "browser_navigate", {"element": "Help", "ref": "e7"})
    calls[1] = dataclasses.replace(
        calls[1], messages=(*calls[1].messages[:-1], first_result), response=(hover,)
    )
    calls[2] = dataclasses.replace(calls[2], messages=(*calls[1].messages, *calls[2].messages[3:]))
    result = Engine([CassetteTrace(Path("d.yaml"), tuple(calls), 0, 0)]).run(
        Variant("batch", (make_step("batching"),))
    )
    assert result.totals().llm_calls == 1 and result.divergences == 0


@pytest.mark.parametrize(
    ("result", "used", "dependent"),
    [
        pytest.param('- button "Pay" [ref=e7]', {"ref": "e7"}, True, id="a-short-reference"),
        pytest.param('- button "Pay" [ref=e77]', {"ref": "e7"}, False, id="not-inside-another"),
        pytest.param(
            "Navigated to https://example.com/alpha",
            {"text": "https://example.com/alpha"},
            False,
            id="echo-of-its-own-input",
        ),
    ],
)
def test_a_dependency_is_a_value_only_a_result_gave(
    result: str, used: dict[str, str], dependent: bool
) -> None:
    """A click on ``e7`` from the page's snapshot depends on it (values under six characters
    were never looked at); a URL the page echoes back after the model asked for it does not
    (it was found in the result and called a dependency)."""
    trace = _trace(final_answer=False)
    calls = list(trace.calls)
    first_result = Message("tool", (ToolResultBlock("call_a", (TextBlock(result),)),))
    uses = ToolUseBlock("call_b", "browser_click", used)
    calls[1] = dataclasses.replace(
        calls[1], messages=(*calls[1].messages[:-1], first_result), response=(uses,)
    )
    calls[2] = dataclasses.replace(calls[2], messages=(*calls[1].messages, *calls[2].messages[3:]))
    result_run = Engine([CassetteTrace(Path("d.yaml"), tuple(calls), 0, 0)]).run(
        Variant("batch", (make_step("batching"),))
    )
    assert result_run.divergences == (1 if dependent else 0)


def test_batching_over_the_corpus(corpus: Path) -> None:
    from costsim.analysis.report import load_traces

    traces, _ = load_traces([corpus])
    engine = Engine(traces)
    base = engine.run(Variant("b")).totals()
    result = engine.run(Variant("batch", (make_step("batching"),)))
    totals = result.totals()
    assert totals.llm_calls < base.llm_calls
    assert totals.prompt_tokens < base.prompt_tokens
    assert (
        base.cost_usd is not None
        and totals.cost_usd is not None
        and totals.cost_usd <= base.cost_usd
    )
    assert totals.output_tokens == base.output_tokens
    assert Decimal(0) <= base.cost_usd - totals.cost_usd <= base.cost_usd


def test_events_are_told_in_the_traces_order() -> None:
    """Runs are merged last first (so earlier indices stay put); their events came out last
    first too (#11 before #7 before #1 in the bundled browser scenario)."""
    from costsim.providers.normalise import load_trace

    path = Path(__file__).parents[1] / "scenarios/cassettes/browser_mcp/checkout_session.yaml"
    result = Engine([load_trace(path)]).run(
        Variant("batch", (make_step("batching", {"tools": ["browser_*"]}),))
    )
    changes = [e.provenance.index for e in result.events if e.kind == "change" and e.provenance]
    assert len(changes) >= 3 and changes == sorted(changes)
    kinds = [e.kind for e in result.events]
    assert kinds.index("divergence") == 1  # each run's divergence follows its change
