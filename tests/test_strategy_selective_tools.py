"""``selective_tools``: exact savings of unsent tool definitions, divergence, oracle mode,
valid requests, the cached tools prefix, and a run over the real corpus."""

from __future__ import annotations

import dataclasses
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from costsim.engine import Engine, Variant, make_step
from costsim.errors import ConfigError
from costsim.metering.meter import Meter
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
    ToolDef,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
)
from costsim.pricing.prices import price

WHEN = datetime(2025, 11, 3, 10, 0, tzinfo=UTC)
PATH_SCHEMA = {
    "type": "object",
    "properties": {"path": {"type": "string", "description": "Path to the file."}},
    "required": ["path"],
}
DIFF_SCHEMA = {
    "type": "object",
    "properties": {
        "staged": {"type": "boolean"},
        "paths": {"type": "array", "items": {"type": "string"}},
    },
}
QUERY_SCHEMA = {
    "type": "object",
    "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}},
    "required": ["query"],
}
TOOLS = (
    ToolDef("read_file", "Read a file.", PATH_SCHEMA),
    ToolDef("git_diff", "Show the working-tree diff.", DIFF_SCHEMA),
    ToolDef("web_search", "Search the web.", QUERY_SCHEMA),
    ToolDef("ask_user", "Ask the user a question.", QUERY_SCHEMA),  # no category: general
)
# How OpenAI shows each function to the model (the TypeScript-like rendering that
# serialise.py's ``_chat_tool_tokens`` documents), written out by hand.
RENDERED = {
    "read_file": "// Read a file.\ntype read_file = (_: {\n// Path to the file.\npath: string,\n})"
    " => any;\n",
    "git_diff": "// Show the working-tree diff.\ntype git_diff = (_: {\nstaged?: boolean,\n"
    "paths?: string[],\n}) => any;\n",
    "web_search": "// Search the web.\ntype web_search = (_: {\nquery: string,\nlimit?: number,\n"
    "}) => any;\n",
    "ask_user": "// Ask the user a question.\ntype ask_user = (_: {\nquery: string,\n"
    "limit?: number,\n}) => any;\n",
}


def _namespace(*names: str) -> str:
    """OpenAI's functions namespace, written out by hand."""
    body = "\n".join(RENDERED[name] for name in names)
    return f"namespace functions {{\n\n{body}\n}} // namespace functions"


def _chat(user: str, *called: str, tools: tuple[ToolDef, ...] = TOOLS, **kw: Any) -> Call:
    call = Call(
        flavour=Flavour.OPENAI_CHAT,
        model="gpt-4o",
        provenance=Provenance(Path("s.yaml"), 0),
        messages=(Message("user", (TextBlock(user),)),),
        tools=tools,
        response=tuple(ToolUseBlock(f"c{i}", name, {}) for i, name in enumerate(called)),
        recorded_at=WHEN,
        **kw,
    )
    return dataclasses.replace(call, usage=Usage(uncached_input=serialise(call).raw + 5, output=12))


def _trace(*calls: Call) -> CassetteTrace:
    numbered = tuple(
        dataclasses.replace(
            c,
            provenance=Provenance(Path("s.yaml"), i),
            recorded_at=WHEN + timedelta(minutes=i),
        )
        for i, c in enumerate(calls)
    )
    return CassetteTrace(Path("s.yaml"), numbered, 0, 0)


def _run(trace: CassetteTrace, params: dict[str, Any] | None = None) -> Any:
    return Engine([trace]).run(Variant("s", (make_step("selective_tools", params),)))


def _sent(result: Any, index: int = 0) -> list[str]:
    return [t.name for t in result.traces[0].calls[index].call.tools]


def test_heuristic_saves_the_unsent_definitions_exactly() -> None:
    trace = _trace(_chat("Please read src/app.py and explain it.", "read_file"))
    result = _run(trace)
    assert _sent(result) == ["read_file", "ask_user"]  # file + general, recorded order
    item = result.traces[0].calls[0]
    original = trace.calls[0]
    recorded = original.usage
    assert recorded is not None and item.usage is not None
    count = counter("o200k_base")
    every = _namespace("read_file", "git_diff", "web_search", "ask_user")
    saved = count(every) - count(_namespace("read_file", "ask_user"))
    assert serialise(original).raw - serialise(item.call).raw == saved
    assert next(e for e in result.events if e.kind == "change").tokens == saved
    # OpenAI counts are exact (slope 1): only tool round trips and tools' presence are fitted,
    # and both requests carry tools, so the saving is the unsent definitions exactly
    coefficients = Meter().coefficients(original).as_dict()
    assert coefficients["raw"] == 1.0 and coefficients["tools"] == 0.0
    assert item.usage.prompt_total == recorded.prompt_total - saved
    assert item.usage.uncached_input == item.usage.prompt_total  # below 1,024: no caching
    assert item.usage.output == 12
    expected = price(item.usage, model="gpt-4o", provider="openai", at=WHEN).amount
    assert result.totals().cost_usd == expected
    assert result.divergences == 0


def test_tools_dropped_ahead_of_a_breakpoint_shorten_its_write_not_what_follows_it() -> None:
    """Anthropic, a breakpoint at the end of the system prompt: recorded 30 uncached tokens
    after it and 1,700 written. Unsent definitions come off the write; the 30 tokens after
    the breakpoint are the same as recorded (they were 10: a share of the prompt's change
    taken from them too, which made the saving about 4% too large)."""
    system = (TextBlock("You are a careful coding agent. " * 150, cache_control=CacheControl()),)
    call = Call(
        flavour=Flavour.ANTHROPIC_MESSAGES,
        model="claude-sonnet-4-5",
        provenance=Provenance(Path("s.yaml"), 0),
        system=system,
        messages=(Message("user", (TextBlock("Please read src/app.py."),)),),
        tools=TOOLS,
        response=(ToolUseBlock("c0", "read_file", {}),),
        recorded_at=WHEN,
        usage=Usage(uncached_input=30, cache_write_5m=1700, output=40),
    )
    result = _run(_trace(call))
    usage = result.traces[0].calls[0].usage
    assert _sent(result) == ["read_file", "ask_user"]
    assert usage is not None
    removed = 1730 - usage.prompt_total
    assert removed > 0
    assert (usage.uncached_input, usage.cache_write_5m) == (30, 1700 - removed)


def test_the_breakpoint_on_the_last_tool_moves_to_the_last_tool_sent() -> None:
    """Code that marks its last tool marks the last it sends: dropping the marked tool had
    dropped the breakpoint, and with it the cache of the tools."""
    mark = CacheControl()
    tools = (*TOOLS[:-1], dataclasses.replace(TOOLS[-1], cache_control=mark))
    call = _chat("Please read src/app.py.", "read_file", tools=tools)
    result = _run(_trace(call), {"mode": "oracle"})
    sent = result.traces[0].calls[0].call.tools
    assert [t.name for t in sent] == ["read_file"]
    assert sent[0].cache_control == mark


def test_the_tokens_after_a_moved_breakpoint_stay_as_recorded() -> None:
    """Seven tools, the breakpoint on the last, 3,480 tokens read up to it and 252 after it;
    the oracle keeps two (the marked one dropped, its breakpoint moved to the last kept). The
    kept tools' positions are the recorded request's, scaled from raw counts: they reached
    past where the 252 recorded tokens after the breakpoint begin in the shorter request,
    which left 19 of them uncached (a re-trial's hand count: 252, and 1,150 written)."""
    topics = ("read a file", "run the tests", "search the web", "send an email",
              "create an event", "query the database", "commit to git")  # fmt: skip
    tools = tuple(
        ToolDef(
            f"tool_{i}",
            " ".join(
                f"Use this tool to {topic} step {k}, taking care to respect the workspace "
                "rules and report errors verbosely."
                for k in range(14)
            ),
            QUERY_SCHEMA,
        )
        for i, topic in enumerate(topics)
    )
    tools = (*tools[:-1], dataclasses.replace(tools[-1], cache_control=CacheControl()))
    use = ToolUseBlock("c0", "tool_0", {"query": "src/app.py"})
    call = Call(
        flavour=Flavour.ANTHROPIC_MESSAGES,
        model="claude-sonnet-4-5",
        provenance=Provenance(Path("s.yaml"), 0),
        system=(TextBlock("You are a coding assistant working in /srv/app. Answer briefly."),),
        messages=(
            Message("user", (TextBlock("Please read src/app.py and then run its tests."),)),
            Message("assistant", (use,)),
            Message(
                "user", (ToolResultBlock("c0", (TextBlock("def main():\n    return 42\n" * 20),)),)
            ),
        ),
        tools=tools,
        response=(ToolUseBlock("c1", "tool_1", {"query": "tests/test_app.py"}),),
        recorded_at=WHEN,
        usage=Usage(uncached_input=252, cache_read=3480, output=45),
    )
    result = _run(_trace(call), {"mode": "oracle"})
    usage = result.traces[0].calls[0].usage
    assert _sent(result) == ["tool_0", "tool_1"]
    assert usage is not None and usage.prompt_total < 3732
    # the kept tools' prefix is warm, as the recorded one was (steady state): read, the 252
    # after it uncached as recorded
    assert (usage.uncached_input, usage.cache_read) == (252, usage.prompt_total - 252)


def test_latest_user_text_skips_tool_results_and_older_turns() -> None:
    first = _chat("Read the README.md file.", "read_file")
    history = (
        *first.messages,
        Message("assistant", (TextBlock("Done."),)),
        Message("user", (TextBlock("Now search the web for the answer."),)),
        Message("assistant", (ToolUseBlock("c1", "web_search", {"query": "x"}),)),
        Message("user", (ToolResultBlock("c1", (TextBlock("a/b/c.py results"),)),)),
    )
    later = dataclasses.replace(first, messages=history, response=(TextBlock("ok"),))
    result = _run(_trace(first, later))
    assert _sent(result, 0) == ["read_file", "ask_user"]
    assert _sent(result, 1) == ["web_search", "ask_user"]


def test_unsent_tools_in_the_response_are_one_divergence_naming_them() -> None:
    trace = _trace(_chat("Please read src/app.py.", "web_search", "git_diff", "read_file"))
    result = _run(trace)
    assert result.divergences == 1
    message = next(e.message for e in result.events if e.kind == "divergence")
    assert "git_diff, web_search" in message and "read_file" not in message


def test_oracle_sends_the_tools_the_trace_uses_on_every_call() -> None:
    first = _chat("Anything at all.", "git_diff")
    later = dataclasses.replace(
        first,
        messages=(
            *first.messages,
            Message("assistant", (ToolUseBlock("h1", "web_search", {}),)),
            Message("tool", (ToolResultBlock("h1", (TextBlock("r"),)),)),
        ),
        response=(TextBlock("done"),),
    )
    trace = _trace(first, later)
    result = _run(trace, {"mode": "oracle"})
    assert _sent(result, 0) == _sent(result, 1) == ["git_diff", "web_search"]
    assert result.divergences == 0
    base = Engine([trace]).run(Variant("b")).totals()
    assert result.totals().prompt_tokens < base.prompt_tokens


def test_requests_stay_valid() -> None:
    server = ToolDef("web_fetch", "", None, type="web_fetch_20250910")
    named = _chat(
        "Nothing relevant.",
        "git_diff",
        tool_choice={"type": "function", "function": {"name": "git_diff"}},
    )
    required = _chat("Nothing relevant.", "git_diff", tool_choice="required")
    result = _run(_trace(named, required), {"core": [], "categories": {"x": ["*"]}})
    assert _sent(result, 0) == ["git_diff"]  # the tool tool_choice names
    assert _sent(result, 1) == [t.name for t in TOOLS]  # some tool is required: all kept
    assert result.divergences == 0

    anthropic = Call(
        flavour=Flavour.ANTHROPIC_MESSAGES,
        model="claude-sonnet-4-5",
        provenance=Provenance(Path("s.yaml"), 0),
        messages=(
            Message("user", (TextBlock("Nothing relevant."),)),
            Message("assistant", (ToolUseBlock("t1", "read_file", {"path": "a"}),)),
            Message("user", (ToolResultBlock("t1", (TextBlock("text"),)),)),
        ),
        tools=TOOLS,
        response=(TextBlock("done"),),
        usage=Usage(uncached_input=900, output=5),
        recorded_at=WHEN,
    )
    with_server = dataclasses.replace(anthropic, tools=(*TOOLS, server))
    result = _run(_trace(anthropic, with_server), {"core": [], "categories": {"x": ["*"]}})
    # the API rejects tool blocks in the history when no tool is defined
    assert _sent(result, 0) == ["read_file"]
    assert any(e.kind == "note" and "Anthropic" in e.message for e in result.events)
    assert _sent(result, 1) == ["web_fetch"]  # a server tool is always sent


@pytest.mark.parametrize(
    "params",
    [
        {"core": ["general", "file", "code", "web", "git", "shell"]},
        {"categories": {}},  # every tool is general, and general is core
        {"mode": "oracle"},
    ],
)
def test_parameters_that_send_every_tool_change_no_number(params: dict[str, Any]) -> None:
    calls = [_chat("Anything at all.", *[t.name for t in TOOLS])]
    trace = _trace(*calls)
    engine = Engine([trace])
    result = engine.run(Variant("a", (make_step("selective_tools", params),)))
    base = engine.run(Variant("b"))
    assert [c.usage for c in result.traces[0].calls] == [c.usage for c in base.traces[0].calls]
    assert result.totals() == base.totals()
    assert not result.events


@pytest.mark.parametrize(
    ("params", "named"),
    [
        ({"mode": "psychic"}, "mode='psychic'"),
        ({"keywords": {"file": ["(unclosed"]}}, "keywords="),
        ({"core": ["genral"]}, "core names unknown category 'genral'"),
        ({"categories": {"file": "read_*"}}, "categories.file="),
        ({"tools": ["read_file"]}, "tools="),
    ],
)
def test_invalid_parameters_are_config_errors_naming_them(
    params: dict[str, Any], named: str
) -> None:
    with pytest.raises(ConfigError, match="selective_tools") as error:
        make_step("selective_tools", params)
    assert named in str(error.value)


@settings(max_examples=25, deadline=None)
@given(
    core=st.lists(st.sampled_from(["general", "file", "code", "web", "git", "shell"])),
    user=st.sampled_from(["hi", "read a.py", "git diff please", "search the web", "fix the bug"]),
    oracle=st.booleans(),
)
def test_prompt_never_negative_and_savings_never_exceed_the_baseline(
    core: list[str], user: str, oracle: bool
) -> None:
    trace = _trace(_chat(user, "git_diff"), _chat(user, "read_file"))
    engine = Engine([trace])
    params = {"core": core, "mode": "oracle" if oracle else "heuristic"}
    result = engine.run(Variant("v", (make_step("selective_tools", params),)))
    base = engine.run(Variant("b")).totals()
    totals = result.totals()
    assert all(u.usage is not None and u.usage.prompt_total >= 0 for u in result.traces[0].calls)
    assert 0 <= totals.prompt_tokens <= base.prompt_tokens
    assert totals.cost_usd is not None and base.cost_usd is not None
    assert 0 <= base.cost_usd - totals.cost_usd <= base.cost_usd


def _anthropic_session() -> CassetteTrace:
    """One conversation: read a file (file tools), then a new request about git."""
    schema = {"type": "object", "properties": {"path": {"type": "string"}}}
    manual = "Use this tool carefully and only when the task needs it. " * 40
    tools = tuple(
        ToolDef(name, f"{name}: {manual}", schema)
        for name in ("read_file", "write_file", "git_diff", "git_commit")
    )
    system = (TextBlock("You are a careful coding agent. " * 20),)
    ask = Message("user", (TextBlock("Read src/app.py please."),))
    use = Message("assistant", (ToolUseBlock("t1", "read_file", {"path": "src/app.py"}),))
    result = Message("user", (ToolResultBlock("t1", (TextBlock("print('hi')"),)),))
    answer = Message("assistant", (TextBlock("It prints hi."),))
    commit = Message("user", (TextBlock("Now commit it on a new branch."),))
    histories = [(ask,), (ask, use, result), (ask, use, result, answer, commit)]
    responses = [use.content, answer.content, (ToolUseBlock("t2", "git_commit", {}),)]
    calls = []
    for index, (history, response) in enumerate(zip(histories, responses, strict=True)):
        call = Call(
            flavour=Flavour.ANTHROPIC_MESSAGES,
            model="claude-sonnet-4-5",
            provenance=Provenance(Path("a.yaml"), index),
            system=system,
            messages=history,
            tools=tools,
            response=response,
            recorded_at=WHEN + timedelta(minutes=index),
        )
        tokens = round(serialise(call).raw * 1.1)
        calls.append(dataclasses.replace(call, usage=Usage(uncached_input=tokens, output=20)))
    return CassetteTrace(Path("a.yaml"), tuple(calls), 0, 0)


def test_a_changed_tool_set_misses_the_cached_prefix() -> None:
    trace = _anthropic_session()
    engine = Engine([trace])
    caching = make_step("caching")
    cached = engine.run(Variant("c", (caching,))).traces[0].calls
    stable = (
        engine.run(Variant("o", (make_step("selective_tools", {"mode": "oracle"}), caching)))
        .traces[0]
        .calls
    )
    selective = engine.run(Variant("s", (make_step("selective_tools"), caching))).traces[0].calls
    assert [t.name for t in selective[1].call.tools] == ["read_file", "write_file"]
    assert [t.name for t in selective[2].call.tools] == ["git_diff", "git_commit"]
    usage = [[c.usage for c in run] for run in (cached, stable, selective)]
    assert all(u is not None for run in usage for u in run)
    (c0, c1, c2), (o0, o1, o2), (s0, s1, s2) = usage
    assert c0 and c1 and c2 and o0 and o1 and o2 and s0 and s1 and s2
    # all tools, or the same subset on every call: each call reads what the previous cached
    # (positions are scaled per call, so a read can differ from the write by rounding)
    assert 0 < c1.cache_read < c2.cache_read and 0 < o1.cache_read < o2.cache_read
    assert o0.prompt_total < c0.prompt_total
    # the same subset twice reads; a different subset changes the first block: no read at all
    # (all but the 3 tokens after the last block, which no breakpoint caches: TURN_CLOSE)
    assert s1.cache_read > 0 and s0.cache_write == s0.prompt_total - 3 and s0.uncached_input == 3
    assert s2.cache_read == 0 and s2.cache_write == s2.prompt_total - 3


def test_selective_tools_over_the_corpus(corpus: Path) -> None:
    from costsim.analysis.report import load_traces

    traces, _ = load_traces([corpus])
    engine = Engine(traces)
    base = engine.run(Variant("b"))
    base_by_trace = base.totals_by_trace()
    for params in ({"mode": "oracle"}, {}):
        result = engine.run(Variant("v", (make_step("selective_tools", params),)))
        totals = result.totals()
        assert totals.prompt_tokens <= base.totals().prompt_tokens
        assert all(
            value >= 0
            for trace in result.traces
            for item in trace.calls
            if item.usage is not None
            for value in (item.usage.uncached_input, item.usage.cache_read, item.usage.output)
        )
        assert result.divergences >= 0
        if params:
            assert result.divergences == 0  # oracle: every called tool was sent
            by_trace = result.totals_by_trace()
            assert all(
                by_trace[path].prompt_tokens <= base_by_trace[path].prompt_tokens
                for path in base_by_trace
            )


def test_the_change_names_the_tokens_the_prompt_loses() -> None:
    """The event said the raw offline count of the definitions (a trial read 2,250 tokens
    removed where the variant's prompt fell by 3,390): it now names the calibrated change
    the variant is billed for."""
    import re

    trace = _anthropic_session()
    result = Engine([trace]).run(Variant("o", (make_step("selective_tools", {"mode": "oracle"}),)))
    said = [e.message for e in result.events if e.kind == "change"]
    assert said
    for message, item, call in zip(said, result.traces[0].calls, trace.calls, strict=False):
        found = re.search(r"; ([\d,]+) prompt tokens of definitions removed", message)
        assert found is not None, message
        assert item.usage is not None and call.usage is not None
        assert int(found[1].replace(",", "")) == call.usage.prompt_total - item.usage.prompt_total


def test_the_default_keywords_read_a_browser_agent_s_tasks() -> None:
    """A trial's browser agent: "Open the cart" chose the file tools only ("open"), and
    "shop.example.com" read as a file name, so its browser tools were dropped (divergences,
    and a net cost). A domain and browser words choose web; "open" chooses both."""
    from costsim.strategies.selective_tools import DEFAULT_KEYWORDS

    def chosen(text: str) -> list[str]:
        return [
            name
            for name, patterns in DEFAULT_KEYWORDS.items()
            if any(re.search(p, text, re.IGNORECASE) for p in patterns)
        ]

    assert chosen("Open the cart and proceed to checkout.") == ["file", "web"]
    assert chosen("Add the kettle to the cart at shop.example.com") == ["web"]
    assert chosen("Click the blue button on the page") == ["web"]
    assert chosen("Fix the failing function in app.py") == ["file", "code"]
    assert chosen("Summarise notes.txt and config.yaml") == ["file"]
    assert chosen("Bump it to v1.2 as in e.g. the changelog") == []
