"""``routing``: per-agent and complexity routing, repricing, and a broken warm cache."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import pytest

from costsim.engine import Engine, Variant, make_step
from costsim.errors import ConfigError
from costsim.model import (
    CacheControl,
    Call,
    CassetteTrace,
    Flavour,
    Message,
    Platform,
    Provenance,
    TextBlock,
    ToolDef,
    ToolUseBlock,
    Usage,
)
from costsim.pricing.ledger import meter
from costsim.pricing.prices import price
from costsim.strategies.registry import AgentSpec

WHEN = datetime(2025, 11, 3, 10, 0, tzinfo=UTC)
SYSTEM = "You are the orchestrator of a build pipeline. " + "Follow the runbook exactly. " * 900


def _call(index: int, messages: tuple[Message, ...], usage: Usage, *, system: str = SYSTEM) -> Call:
    return Call(
        flavour=Flavour.ANTHROPIC_MESSAGES,
        model="claude-sonnet-4-5",
        provenance=Provenance(Path("r.yaml"), index),
        system=(TextBlock(system),),
        messages=messages,
        cache_control=CacheControl("5m"),  # automatic caching: a breakpoint on the last block
        response=(TextBlock("ok"),),
        usage=usage,
        recorded_at=WHEN.replace(second=index * 10),
    )


def _warm_trace() -> CassetteTrace:
    first = Message("user", (TextBlock("Analyze the failing build and plan a fix."),))
    reply = Message("assistant", (TextBlock("The linker step fails; rerun with cache cleared."),))
    thanks = Message("user", (TextBlock("thanks!"),))
    t0, t1 = 6000, 6040
    calls = (
        _call(0, (first,), Usage(uncached_input=3, cache_write_5m=t0, output=40)),
        _call(
            1,
            (first, reply, thanks),
            Usage(uncached_input=3, cache_read=t0, cache_write_5m=t1 - t0, output=5),
        ),
    )
    return CassetteTrace(Path("r.yaml"), calls, 0, 0)


def test_routing_a_short_message_breaks_the_warm_cache() -> None:
    trace = _warm_trace()
    engine = Engine([trace])
    variant = Variant(
        "route",
        (make_step("routing", {"tiers": {"light": "claude-haiku-4-5"}, "complexity": True}),),
    )
    result = engine.run(variant)
    first, second = (item.usage for item in result.traces[0].calls)
    assert first == dataclasses.replace(trace.calls[0].usage, source=first.source)  # type: ignore[arg-type]
    assert second is not None
    assert result.traces[0].calls[1].call.model == "claude-haiku-4-5"
    # same prompt (same calibration family) and the same 3 tokens after the breakpoint as
    # recorded, but the model changed: nothing read, the whole breakpoint prefix written
    assert (
        second.prompt_total,
        second.cache_read,
        second.cache_write_5m,
        second.uncached_input,
    ) == (6043, 0, 6040, 3)
    haiku = price(second, model="claude-haiku-4-5", provider="anthropic", at=WHEN).amount
    assert haiku == (Decimal(6040) * Decimal("1.25") + 3 + 5 * 5) / 1_000_000
    sonnet = price(
        trace.calls[0].usage, model="claude-sonnet-4-5", provider="anthropic", at=WHEN
    ).amount  # type: ignore[arg-type]
    assert result.totals().cost_usd == sonnet + haiku  # type: ignore[operator]
    assert [e.kind for e in result.events] == ["change"]


def test_agent_tier_and_override_precedence() -> None:
    search = _call(
        0,
        (Message("user", (TextBlock("find docs"),)),),
        Usage(uncached_input=100, output=10),
        system="You are the search agent.",
    )
    code = _call(
        1,
        (Message("user", (TextBlock("fix it"),)),),
        Usage(uncached_input=100, output=10),
        system="You are the code agent.",
    )
    trace = CassetteTrace(Path("a.yaml"), (search, code), 0, 0)
    agents = {
        "search": AgentSpec("^You are the search agent", "light"),
        "code": AgentSpec("^You are the code agent", "standard"),
    }
    engine = Engine([trace], agents=agents)
    tiers = {"light": "claude-haiku-4-5", "standard": "claude-sonnet-4-5"}
    routed = engine.run(Variant("r", (make_step("routing", {"tiers": tiers}),)))
    assert [i.call.model for i in routed.traces[0].calls] == [
        "claude-haiku-4-5",
        "claude-sonnet-4-5",
    ]
    override = engine.run(
        Variant(
            "o", (make_step("routing", {"tiers": tiers, "agents": {"search": "claude-opus-4-1"}}),)
        )
    )
    assert override.traces[0].calls[0].call.model == "claude-opus-4-1"


def test_downgrade_of_a_tool_call_is_a_divergence() -> None:
    call = dataclasses.replace(
        _call(0, (Message("user", (TextBlock("hi?"),)),), Usage(uncached_input=50, output=5)),
        response=(ToolUseBlock("t1", "grep", {}),),
    )
    trace = CassetteTrace(Path("d.yaml"), (call,), 0, 0)
    result = Engine([trace]).run(
        Variant("r", (make_step("routing", {"default": "claude-haiku-4-5"}),))
    )
    assert result.divergences == 1


@pytest.mark.parametrize(
    ("recorded", "routed", "down"),
    [
        pytest.param("claude-sonnet-4-5", "claude-opus-4-5", False, id="sonnet-to-opus-is-up"),
        pytest.param("claude-opus-4-5", "claude-sonnet-4-5", True, id="opus-to-sonnet-is-down"),
    ],
)
def test_the_direction_of_a_route_is_judged_below_the_long_context_tier(
    recorded: str, routed: str, down: bool
) -> None:
    """Sonnet 4.5 is $3 a million input tokens ($6 above 200K in a request that enables the
    1M window), Opus 4.5 $5. Priced at a million tokens, Sonnet read $6: a route to Opus was
    a tool call's downgrade, and one from Opus a dearer route without a divergence."""
    call = dataclasses.replace(
        _call(0, (Message("user", (TextBlock("hi?"),)),), Usage(uncached_input=50, output=5)),
        model=recorded,
        response=(ToolUseBlock("t1", "grep", {}),),
    )
    trace = CassetteTrace(Path("d.yaml"), (call,), 0, 0)
    result = Engine([trace]).run(Variant("r", (make_step("routing", {"default": routed}),)))
    dearer = [e.message for e in result.events if "whose input price is higher" in e.message]
    assert result.divergences == (1 if down else 0)
    assert dearer == ([] if down else [f"1 call routed from {recorded} to {routed}, whose "
                                       "input price is higher"])  # fmt: skip


def test_no_cross_provider_routing_and_validation() -> None:
    call = _call(0, (Message("user", (TextBlock("hi"),)),), Usage(uncached_input=50, output=5))
    trace = CassetteTrace(Path("x.yaml"), (call,), 0, 0)
    result = Engine([trace]).run(Variant("r", (make_step("routing", {"default": "gpt-4o-mini"}),)))
    assert result.traces[0].calls[0].call.model == "claude-sonnet-4-5"
    assert result.totals().cost_usd == Engine([trace]).run(Variant("b")).totals().cost_usd
    with pytest.raises(ConfigError, match="tiers"):
        make_step("routing", {"tiers": {"cheap": "claude-haiku-4-5"}})


def test_routing_over_the_corpus(corpus: Path) -> None:
    from costsim.analysis.report import load_traces

    traces, _ = load_traces([corpus])
    engine = Engine(traces)
    base = engine.run(Variant("b")).totals()
    result = engine.run(Variant("r", (make_step("routing", {"default": "claude-haiku-4-5"}),)))
    totals = result.totals()
    assert totals.llm_calls == base.llm_calls
    assert (
        base.cost_usd is not None
        and totals.cost_usd is not None
        and totals.cost_usd < base.cost_usd
    )
    assert result.divergences > 0


CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
IMAGE_CALLS = (
    CORPUS
    / "crewAIInc__crewAI"
    / "lib__crewai__tests__cassettes__TestAgentMultimodalOpenAI.test_image_file"
    "[openai-gpt-4o-mini].yaml"
)


@pytest.mark.skipif(not IMAGE_CALLS.is_file(), reason="the real-cassette corpus is absent")
def test_a_band_is_never_wider_than_estimating_the_routed_prompt_afresh() -> None:
    """gpt-4o-mini bills a 640x480 image as 14,214 tokens, gpt-4o as about 470: routing moves
    the prompt by 13,742 tokens, all by the providers' image rules. The band must follow the
    prompt it leads to, not the size of the move (it was ±$1.53 on a $0.0036 cost)."""
    from costsim.api import simulate

    result = simulate(IMAGE_CALLS, "routing:default=gpt-4o", cache=False)
    summary = result.data.variants[0]
    cost = summary.cost
    assert cost.value is not None and summary.totals.prompt_tokens == 944
    assert cost.half <= 5 * cost.value  # a wide band, for a weak table, but not a runaway one


def test_routing_says_when_no_rule_can_route_and_when_a_route_is_dearer() -> None:
    import costsim
    from tests.conftest import EXAMPLES

    nothing = costsim.simulate(str(EXAMPLES), "routing")
    (variant,) = nothing.data.variants
    notes = {event.message for event in variant.events if event.kind == "note"}
    assert any(message.startswith("no rule routes any call") for message in notes)
    # Sonnet 4.5 ($3 input) to Opus 4.1 ($15): dearer, said once per cassette
    dearer = costsim.simulate(str(EXAMPLES), "routing:default=claude-opus-4-1")
    (variant,) = dearer.data.variants
    said = [e.message for e in variant.events if "whose input price is higher" in e.message]
    assert said == [  # the errored request (billed nothing) is not counted
        "2 calls routed from claude-sonnet-4-5 to claude-opus-4-1, whose input price is higher"
    ]
    text = " ".join(nothing.render("table", width=100).split())
    assert "(and 1 more cassette)" in text or "(and 2 more cassettes)" in text  # said once
    # an override for an agent no call can be recognised as: the note says what is missing
    unmatched = costsim.simulate(str(EXAMPLES), "routing:agents.summariser=claude-haiku-4-5")
    (variant,) = unmatched.data.variants
    notes = {event.message for event in variant.events if event.kind == "note"}
    assert any(m.startswith("agents.summariser routes an agent with no pattern") for m in notes)


def test_a_dearer_route_counts_billed_calls_by_the_model_billed() -> None:
    """A response naming the dated model and a request naming its alias are one model (as
    --by model names it); an errored request, billed nothing, is not a dearer call."""
    base = _warm_trace().calls
    dated = dataclasses.replace(base[0], response_model="claude-sonnet-4-5-20250929")
    errored = dataclasses.replace(
        base[1], provenance=Provenance(Path("r.yaml"), 2), usage=None, error="overloaded"
    )
    trace = CassetteTrace(Path("r.yaml"), (dated, base[1], errored), 0, 0)
    variant = Variant("opus", (make_step("routing", {"default": "claude-opus-4-1"}),))
    result = Engine([trace]).run(variant)
    said = [e.message for e in result.events if "whose input price is higher" in e.message]
    assert said == [
        "2 calls routed from claude-sonnet-4-5 to claude-opus-4-1, whose input price is higher"
    ]


def test_a_call_another_providers_host_served_is_routed_only_to_what_it_lists(
    tmp_path: Path,
) -> None:
    """A call Mistral served (OpenAI's Chat Completions shape on api.mistral.ai) was routed to
    gpt-4o-mini and priced from OpenAI's list: an invented saving. Now it stays as recorded,
    with a note; a model the host lists is still routed."""
    from tests.test_providers import _cassette

    response = {"model": "magistral-medium-latest", "choices": [],
                "usage": {"prompt_tokens": 1000, "completion_tokens": 100}}  # fmt: skip
    request = {"model": "magistral-medium-latest", "messages": [{"role": "user", "content": "x"}]}
    trace = _cassette(tmp_path, "https://api.mistral.ai/v1/chat/completions", request, response)
    engine = Engine([trace])
    for model, routed in (("gpt-4o-mini", False), ("mistral-small-latest", True)):
        variant = Variant("r", (make_step("routing", {"default": model}),))
        result = engine.run(variant)
        (call,) = result.traces[0].calls
        assert (call.call.model == model) is routed
        notes = [e.message for e in result.events if e.kind == "note"]
        assert notes == (
            [] if routed else [f"mistral calls not routed to {model}: mistral does not list it"]
        )


def test_a_routed_variants_delta_band_is_no_wider_than_its_cost_band(tmp_path: Path) -> None:
    """The recording's replay re-simulates the recorded request, whose cache read the
    recording shows: a fact, not OpenAI's best effort. Counted as uncertain there, it let a
    routed variant's saving be larger than the routed calls cost (-$0.0130 for -$0.0091). The
    read came from an entry warm before the recording, which does not serve the new model;
    in a deployment that always routed, the new model's own entry was warm in its place
    (steady state): the routed call reads it, no more than the recording read."""
    from costsim.analysis.bands import variant_bands

    usage = {"prompt_tokens": 3000, "completion_tokens": 100,
             "prompt_tokens_details": {"cached_tokens": 2048}}  # fmt: skip
    trace = _chat(tmp_path, "gpt-4.1", usage, 2900)
    engine = Engine([trace])
    result = engine.run(Variant("r", (make_step("routing", {"default": "gpt-4o-mini"}),)))
    bands = variant_bands(result, engine.meter, None)
    (routed,) = result.traces[0].calls
    assert routed.usage is not None and routed.usage.cache_read == 2048
    assert bands.delta.below <= bands.cost.below and bands.delta.above <= bands.cost.above


@pytest.mark.parametrize(
    ("recorded", "routed", "cost"),
    [
        # Bedrock's regional (cross-region, in-region) Haiku 4.5: $1.10 / $5.50 per million
        ("us.anthropic.claude-sonnet-4-5-20250929-v1:0",
         "us.anthropic.claude-haiku-4-5-20251001-v1:0", "0.00165"),
        ("anthropic.claude-sonnet-4-5-20250929-v1:0",
         "anthropic.claude-haiku-4-5-20251001-v1:0", "0.00165"),
        # its global profile: $1 / $5
        ("global.anthropic.claude-sonnet-4-5-20250929-v1:0",
         "global.anthropic.claude-haiku-4-5-20251001-v1:0", "0.0015"),
    ],
)  # fmt: skip
def test_a_bedrock_call_routed_by_plain_name_goes_to_bedrocks_model(
    recorded: str, routed: str, cost: str
) -> None:
    """Routing a Bedrock call to 'claude-haiku-4-5' moves it to Bedrock's Haiku, at Bedrock's
    price (1,000 in and 100 out here): it used to be priced at Anthropic's own list, 10% under
    what the regional endpoint bills, and a trial's saving read 6% high without a word."""
    call = dataclasses.replace(
        _call(0, (Message("user", (TextBlock("Plan the release."),)),), Usage(1000, output=100)),
        model=recorded,
        platform=Platform.BEDROCK,
        cache_control=None,
        system=(),
    )
    trace = CassetteTrace(Path("b.yaml"), (call,), 0, 0)
    step = make_step("routing", {"default": "claude-haiku-4-5"})
    (item,) = Engine([trace]).run(Variant("r", (step,))).traces[0].calls
    assert item.call.model == routed
    assert item.usage is not None
    billed = meter(item.call, usage=item.usage).price
    assert billed is not None and billed.amount == Decimal(cost)


def test_a_bedrock_route_off_bedrocks_list_says_how_it_is_priced() -> None:
    """A plain name genai-prices maps to no single Bedrock model (Claude 3.5 Sonnet has two
    dated ones) stays as named and is priced at Anthropic's own list: a note says so, since
    Bedrock's regional endpoints bill more (it used to pass without a word)."""
    sent = (Message("user", (TextBlock("Plan the release."),)),)
    call = dataclasses.replace(
        _call(0, sent, Usage(1000, output=100)),
        model="us.anthropic.claude-sonnet-4-5-20250929-v1:0",
        platform=Platform.BEDROCK,
        cache_control=None,
        system=(),
    )
    trace = CassetteTrace(Path("b.yaml"), (call,), 0, 0)
    step = make_step("routing", {"default": "claude-3-5-sonnet"})
    result = Engine([trace]).run(Variant("r", (step,)))
    assert result.traces[0].calls[0].call.model == "claude-3-5-sonnet"
    notes = [e.message for e in result.events if e.kind == "note"]
    assert notes == [
        "genai-prices lists no single Bedrock model 'claude-3-5-sonnet': priced at its "
        "provider's own list price, which Bedrock's regional endpoints exceed (about 10% for "
        "recent models)"
    ]
    listed = Engine([trace]).run(
        Variant("h", (make_step("routing", {"default": "claude-haiku-4-5"}),))
    )
    assert not [e for e in listed.events if e.kind == "note"]


def _chat(folder: Path, model: str, usage: dict[str, object], words: int) -> CassetteTrace:
    """One Chat Completions call of ``model`` (``words`` words asked), recorded with
    ``usage``."""
    from tests.test_providers import _cassette

    response = {"model": model, "created": 1762250400,
                "choices": [{"index": 0, "message": {"content": "Done."}}], "usage": usage}  # fmt: skip
    request = {"model": model, "messages": [{"role": "user", "content": "x " * words}]}
    return _cassette(folder, "https://api.openai.com/v1/chat/completions", request, response)


def test_models_routes_the_calls_of_a_recorded_model(tmp_path: Path) -> None:
    """``models`` moves every call of one recorded model (its dated snapshots too), not a
    longer model's name (a trial could only route every model at once with ``default``)."""
    from costsim.strategies.syntax import parse_step

    traces = []
    for index, model in enumerate(("gpt-4o-2024-08-06", "gpt-4o-mini-2024-07-18")):
        folder = tmp_path / str(index)
        folder.mkdir()
        traces.append(_chat(folder, model, {"prompt_tokens": 1000, "completion_tokens": 100}, 990))
    step = parse_step("routing:models.gpt-4o=gpt-4o-mini")
    assert step.params.models == {"gpt-4o": "gpt-4o-mini"}  # type: ignore[attr-defined]
    result = Engine(traces).run(Variant("r", (step,)))
    routed, kept = (trace.calls[0] for trace in result.traces)
    assert routed.call.model == "gpt-4o-mini" and kept.call is kept.sim.origin
    by_trace = result.totals_by_trace()
    # gpt-4o at $2.50 / $10 per million -> gpt-4o-mini at $0.15 / $0.60: 1,000 in, 100 out
    assert (
        by_trace[traces[0].path].cost_usd
        == (1000 * Decimal("0.15") + 100 * Decimal("0.60")) / 1_000_000
    )
    assert (
        by_trace[traces[1].path].cost_usd
        == (1000 * Decimal("0.15") + 100 * Decimal("0.60")) / 1_000_000
    )
    dotted = parse_step("routing:models.gpt-4.1-mini=gpt-4.1-nano")  # a key with a dot
    assert dotted.params.models == {"gpt-4.1-mini": "gpt-4.1-nano"}  # type: ignore[attr-defined]
    assert dotted.describe() == "routing:models.gpt-4.1-mini=gpt-4.1-nano"


def test_a_call_routed_to_a_model_that_does_not_reason_sheds_its_reasoning(
    tmp_path: Path,
) -> None:
    """o4-mini billed 500 output tokens, 400 of them reasoning; routed to gpt-4o-mini, which
    does not reason, the answer is kept and the reasoning is not billed (it was, at the new
    model's price). To another reasoning model it is kept."""
    usage = {"prompt_tokens": 1000, "completion_tokens": 500,
             "completion_tokens_details": {"reasoning_tokens": 400}}  # fmt: skip
    trace = _chat(tmp_path, "o4-mini-2025-04-16", usage, 990)
    engine = Engine([trace])
    plain = engine.run(Variant("p", (make_step("routing", {"default": "gpt-4o-mini"}),)))
    (routed,) = plain.traces[0].calls
    assert routed.usage is not None and (routed.usage.output, routed.usage.reasoning) == (100, 0)
    # gpt-4o-mini: $0.15 / $0.60 per million; the prompt re-counted for its family (1,000 +-5)
    prompt = routed.usage.prompt_total
    assert abs(prompt - 1000) <= 5
    assert plain.totals().cost_usd == (prompt * Decimal("0.15") + 100 * Decimal("0.60")) / 1_000_000
    assert any("does not reason" in e.message for e in plain.events)
    thinking = engine.run(Variant("t", (make_step("routing", {"default": "gpt-5-mini"}),)))
    (kept,) = thinking.traces[0].calls
    assert kept.usage is not None and (kept.usage.output, kept.usage.reasoning) == (500, 400)


def test_a_change_says_when_the_prompt_is_counted_again(tmp_path: Path) -> None:
    """GPT-4 counts with cl100k_base, GPT-4o mini with o200k_base: the routed prompt's tokens
    change, not only their price, and the change said nothing of it (a trial's 1,346 -> 1,310)."""
    traces = []
    for index, model in enumerate(("gpt-4-0613", "gpt-4o-2024-08-06")):
        folder = tmp_path / str(index)
        folder.mkdir()
        traces.append(_chat(folder, model, {"prompt_tokens": 1000, "completion_tokens": 100}, 990))
    result = Engine(traces).run(Variant("r", (make_step("routing", {"default": "gpt-4o-mini"}),)))
    changes = [e.message for e in result.events if e.kind == "change"]
    assert len(changes) == 2
    assert changes[0].endswith(
        "; its prompt counted again in o200k_base, the new model's tokenizer)"
    )
    assert "counted again" not in changes[1]  # gpt-4o counts with o200k_base already


def test_a_routed_request_that_also_changed_shape_places_its_blocks_in_the_new_count() -> None:
    """Routed to a model that counts ~30% more tokens, and its unused tools dropped: the
    last blocks kept their distance to the end in the recorded model's tokens, so all the
    growth landed ahead of them and the system prompt's breakpoint wrote 5,583 tokens where
    it holds about 1,200 (routing alone, or the tools alone, cache nothing here)."""
    tools = (
        ToolDef("get_page", "Fetch a page", {"type": "object", "properties": {}}),
        *(ToolDef(f"unused_{i}", "An unused tool. " * 30, {}) for i in range(6)),
    )
    system = (TextBlock("You are a careful shop assistant. " * 120, cache_control=CacheControl()),)
    page = "".join(f"def handler_{i}(request):\n    return {{'id': {i}}}\n" for i in range(700))
    call = Call(
        flavour=Flavour.ANTHROPIC_MESSAGES,
        model="claude-sonnet-4-5-20250929",
        provenance=Provenance(Path("c.yaml"), 0),
        system=system,
        tools=tools,
        messages=(Message("user", (TextBlock("Review this code:\n" + page),)),),
        response=(TextBlock("ok"),),
        usage=Usage(uncached_input=1, output=10),
        recorded_at=WHEN,
    )
    total = round(Engine([]).meter.estimate_prompt(call))
    call = dataclasses.replace(call, usage=Usage(cache_write_5m=2000, uncached_input=total - 2000))
    engine = Engine([CassetteTrace(Path("c.yaml"), (call,), 0, 0)])
    steps = (
        make_step("routing", {"default": "claude-opus-4-7"}),
        make_step("selective_tools", {"mode": "oracle"}),
    )
    item = engine.run(Variant("both", steps)).traces[0].calls[0]
    usage = item.modelled
    assert usage is not None
    blocks = engine.prefix(item.sim, usage.prompt_total).blocks
    system_end = next(b.tokens for b in blocks if b.section == "system")
    assert system_end < 2000  # the system prompt, not the code after it
    assert usage.cache_write_5m < 2000


def test_an_errored_call_is_not_routed() -> None:
    """A trial: a 429 the SDK retried was routed, one of the variant's "19 changes", though an
    errored call is unbilled whichever model it was sent to."""
    first = Message("user", (TextBlock("Analyze the failing build and plan a fix."),))
    refused = dataclasses.replace(
        _call(0, (first,), Usage()), usage=None, response=(), error="HTTP 429", status=429
    )
    billed = _call(1, (first,), Usage(uncached_input=6003, output=40))
    trace = CassetteTrace(Path("r.yaml"), (refused, billed), 0, 0)
    variant = Variant("route", (make_step("routing", {"default": "claude-haiku-4-5"}),))
    result = Engine([trace]).run(variant)
    assert [item.call.model for item in result.traces[0].calls] == [
        "claude-sonnet-4-5",
        "claude-haiku-4-5",
    ]
    assert [e.kind for e in result.events] == ["change"]


def test_a_tier_no_rule_names_and_complexity_that_matches_nothing_are_said() -> None:
    """A trial: complexity=true with light, standard and heavy tiers saved nothing without a
    word (no rule sends a call to 'standard', and no message matched a pattern)."""
    trace = _warm_trace()  # "Analyze ..." (heavy), then "thanks!" (light)
    step = {
        "complexity": True,
        "tiers": {
            "light": "claude-haiku-4-5",
            "standard": "claude-sonnet-4-5",
            "heavy": "claude-opus-4-1",
        },
    }
    result = Engine([trace]).run(Variant("route", (make_step("routing", step),)))
    idle = [e.message for e in result.events if "routes nothing" in e.message]
    assert [n.split(" routes nothing")[0] for n in idle] == ["tiers.standard (claude-sonnet-4-5)"]
    step["default"] = "standard"  # named now: not said
    result = Engine([trace]).run(Variant("route", (make_step("routing", step),)))
    assert not [e for e in result.events if e.kind == "note" and "routes nothing" in e.message]
    quiet = dataclasses.replace(
        trace,
        calls=tuple(
            dataclasses.replace(c, messages=(Message("user", (TextBlock("Summarise the log."),)),))
            for c in trace.calls
        ),
    )
    del step["default"]
    result = Engine([quiet]).run(Variant("route", (make_step("routing", step),)))
    notes = [e.message for e in result.events if e.kind == "note"]
    assert any(n.startswith("complexity=true routes nothing") for n in notes)


def test_a_shorter_ttl_does_not_keep_a_warm_start_the_recording_read_from_a_1h_entry() -> None:
    """A CI-gate trial: each test's cassette opened by reading a 1h entry written before it
    (sessions more than 5 minutes apart: why the team chose 1h). ``caching:ttl=5m`` kept those
    reads, so advise recommended it as a 13.5% saving that would have cost more. When the
    earlier request was sent is unknown: a shorter TTL now bills the read as a write, and
    says why; the TTL kept keeps the read."""
    from costsim.engine.warm import SHORTER_TTL

    first = Message("user", (TextBlock("Analyze the failing build and plan a fix."),))
    warm = dataclasses.replace(
        _call(0, (first,), Usage(uncached_input=3, cache_read=6000, output=40)),
        cache_control=CacheControl("1h"),
    )
    trace = CassetteTrace(Path("r.yaml"), (warm,), 0, 0)
    engine = Engine([trace])
    assert engine.warm_starts()  # it reads what it never wrote
    short = engine.run(Variant("5m", (make_step("caching", {"ttl": "5m"}),)))
    (item,) = short.traces[0].calls
    assert item.usage is not None and item.usage.cache_read == 0
    assert item.usage.cache_write_5m > 5900
    assert [e.message for e in short.events if e.message.startswith(SHORTER_TTL)]
    kept = engine.run(Variant("1h", (make_step("caching", {"ttl": "1h"}),)))
    (item,) = kept.traces[0].calls
    assert item.usage is not None and item.usage.cache_read == 6000
    assert not [e for e in kept.events if e.message.startswith(SHORTER_TTL)]


def test_a_routed_call_with_tools_says_the_new_tool_use_system_prompt() -> None:
    """A trial: Sonnet 4 routed to Haiku 4.5 gained 13.5% prompt tokens, with nothing saying
    why. Anthropic documents the tool-use system prompt per model (Sonnet 4.5: 496 tokens,
    Sonnet 4: 313, tool_choice auto): routed the other way, each of the two calls with tools
    loses 183 tokens, of its prompt and of the 5m write that caches it. By hand, Sonnet 4 and
    4.5 both at $3 / $3.75 write / $0.30 read / $15 per million: #0 412 x 3 + 1,447 x 3.75 +
    58 x 15 = 7,532.25 micro-dollars; #1 521 x 3 + 1,447 x 0.30 + 31 x 15 = 2,462.1; #2 an
    overloaded error, unbilled."""
    import costsim
    from tests.conftest import EXAMPLES

    cassette = EXAMPLES / "anthropic_support_agent.yaml"
    result = costsim.simulate(
        str(cassette), "routing:models.claude-sonnet-4-5=claude-sonnet-4-20250514"
    )
    (variant,) = result.data.variants
    assert variant.totals.prompt_tokens == result.data.baseline.prompt_tokens - 2 * 183
    assert variant.totals.cache_write_5m_tokens == 1_630 - 183
    assert variant.totals.priced_cost == Decimal("0.00999435")
    (note,) = [event.message for event in variant.events if event.kind == "note"]
    assert note == (
        "calls with tools routed from claude-sonnet-4-5 to claude-sonnet-4: Anthropic adds a "
        "313-token tool-use system prompt for claude-sonnet-4 where 496 for claude-sonnet-4-5 "
        "(-183 a call, its documented figures)"
    )


def _said(step: str, about: str) -> list[str]:
    """The notes of ``step`` simulated on the bundled cassettes that say ``about``."""
    import costsim
    from tests.conftest import EXAMPLES

    (variant,) = costsim.simulate(str(EXAMPLES), step).data.variants
    return [event.message for event in variant.events if about in event.message]


def test_a_routing_target_without_a_price_says_so_and_what_was_meant() -> None:
    """A trial: ``routing:models.gpt-4o=gpt-4o-mni`` ran, its variant unpriced, exit 0, with
    no word of the typo (every other scenario typo is an error with "did you mean"). A model
    without a price may be real (a gateway's, a fine-tune), so it is a note, not an error."""
    assert _said("routing:models.gpt-5-mini=gpt-4o-mni", "has no price") == [
        "gpt-4o-mni has no price in genai-prices at openai (did you mean gpt-4o-mini?): the "
        "calls routed to it are unpriced"
    ]
    assert _said("routing:models.gpt-5-mini=acme-private-llm", "has no price") == [
        "acme-private-llm has no price in genai-prices at openai: the calls routed to it are "
        "unpriced"
    ]
    assert _said("routing:models.gpt-5-mini=gpt-4o-mini", "has no price") == []


def test_a_routing_key_no_model_is_named_says_what_it_likely_meant() -> None:
    """A trial: ``models.gpt4o`` routed nothing with no hint; a real model the run lacks
    (``gpt-4.1``) gets none."""
    (typo,) = _said("routing:models.gpt4o=gpt-4o-mini", "routes nothing")
    assert typo.endswith("; did you mean gpt-4o?")
    (absent,) = _said("routing:models.gpt-4.1=gpt-4o-mini", "routes nothing")
    assert "did you mean" not in absent
