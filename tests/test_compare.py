"""Scenarios and ``costsim compare``: validation, formats (golden files), gates, attribution."""

from __future__ import annotations

import dataclasses
import json
import os
import re
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from costsim.analysis.comparison import compare_variants
from costsim.analysis.report import load_traces
from costsim.analysis.spread import Spread, difference, marginal_band
from costsim.cli import cli
from costsim.engine import Engine, Event, SimTrace, Variant, make_step
from costsim.errors import ConfigError
from costsim.model import TextBlock
from costsim.scenario import load_scenario
from costsim.strategies.registry import STRATEGIES, Context, Params, register
from tests.conftest import EXAMPLES, ROOT, said

DATA = Path(__file__).parent / "data"
GOLDEN = Path(__file__).parent / "golden"
SCENARIO = DATA / "examples_scenario.yaml"


def _run(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args))


def _golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("COSTSIM_UPDATE_GOLDEN"):
        path.write_text(text)
    assert text == path.read_text(), (
        f"{name} changed; review and rerun with COSTSIM_UPDATE_GOLDEN=1"
    )


@pytest.fixture(autouse=True)
def _in_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # paths in the output are relative to the working directory
    monkeypatch.setenv("COLUMNS", "100")


def test_compare_table_golden() -> None:
    result = _run("compare", str(SCENARIO.relative_to(ROOT)))
    assert result.exit_code == 0, result.output
    _golden("compare_table.txt", result.stdout)


def test_compare_json_golden() -> None:
    result = _run("compare", str(SCENARIO.relative_to(ROOT)), "--format", "json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["format_version"] == 1
    scenario = document["scenarios"][0]
    assert [v["name"] for v in scenario["variants"]] == [
        "cache-5m",
        "cache-1h",
        "system-then-rolling",
    ]
    _golden("compare.json", result.stdout)


def test_compare_markdown_and_filters() -> None:
    result = _run("compare", str(SCENARIO), "--format", "markdown", "--variant", "cache-1h")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("## bundled examples")
    assert "cache-1h" in result.stdout and "cache-5m" not in result.stdout
    missing = _run("compare", str(SCENARIO), "--variant", "nope")
    assert missing.exit_code == 2 and "no variant named 'nope'" in missing.stderr


@pytest.mark.parametrize("by", ["agent", "tool", "model"])
def test_compare_breakdowns(by: str) -> None:
    result = _run("compare", str(SCENARIO), "--by", by)
    assert result.exit_code == 0, result.output
    expected = {
        "agent": "support",
        "tool": "lookup_runbook",
        "model": "claude-sonnet-4-5",  # the price-list id: request and dated response in one row
    }[by]
    assert expected in result.stdout


def test_fail_over_gates_with_a_sentence() -> None:
    result = _run("compare", str(SCENARIO), "--fail-over", "1")
    assert result.exit_code == 1
    assert "variant 'cache-1h': Δ cost is +" in result.stderr
    assert "over the limit of +1%" in result.stderr
    # the percentage the gate reads is the one the table shows
    said = result.stderr.split("variant 'cache-1h': Δ cost is ", 1)[1].split("%", 1)[0]
    row = next(line for line in result.stdout.splitlines() if line.startswith("cache-1h "))
    assert f"{said}%" in row.split()


def test_budget_gate(tmp_path: Path) -> None:
    text = (
        SCENARIO.read_text()
        .replace("../../cassettes", str(EXAMPLES))
        .replace(
            '"*": {max_regression_pct: 100}',
            "cache-5m: {max_prompt_tokens: 100, max_cost_usd: 0.0001}",
        )
    )
    (tmp_path / "s.yaml").write_text(text)
    result = _run("compare", str(tmp_path))
    assert result.exit_code == 1
    assert "variant 'cache-5m': prompt_tokens is 6,670, over the limit of 100" in result.stderr
    assert "variant 'cache-5m': cost_usd is $" in result.stderr


def _scenario(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "bad.yaml"
    path.write_text(f"name: bad\ncassettes: [{EXAMPLES}/*.yaml]\n{body}")
    return path


def test_validation_wrong_type(tmp_path: Path) -> None:
    path = _scenario(tmp_path, "variants: {a: [caching]}\nbudgets: {a: {max_cost_usd: lots}}\n")
    with pytest.raises(ConfigError) as caught:
        load_scenario(path)
    assert str(caught.value) == (
        f"{path}:4:15: budgets.a.max_cost_usd: expected a number, got 'lots'"
    )


def test_validation_unknown_strategy(tmp_path: Path) -> None:
    path = _scenario(tmp_path, "variants: {a: [{cachng: {ttl: 1h}}]}\n")
    result = _run("compare", str(path))
    assert result.exit_code == 2
    assert f"{path}:3:16: variants.a.0: " in result.stderr
    assert "'cachng' is not a strategy. Did you mean 'caching'? Valid: " in result.stderr
    assert ", caching," in result.stderr


def test_validation_bad_parameter(tmp_path: Path) -> None:
    path = _scenario(tmp_path, "variants: {a: [{caching: {ttl: 2h}}]}\n")
    with pytest.raises(ConfigError, match=r"variants\.a\.0.*ttl='2h'"):
        load_scenario(path)


def test_validation_missing_cassette_path(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text("name: s\ncassettes: [nowhere/*.yaml]\nvariants: {a: [caching]}\n")
    with pytest.raises(ConfigError, match=r"cassettes\.0: 'nowhere/\*\.yaml' matches no file"):
        load_scenario(path)


def test_validation_unknown_key(tmp_path: Path) -> None:
    path = _scenario(tmp_path, "variants: {a: [caching]}\nbudget: {}\n")
    with pytest.raises(
        ConfigError, match=r":4:1: budget: unknown key 'budget'; did you mean 'budgets'\?"
    ):
        load_scenario(path)


# --- attribution ------------------------------------------------------------------------------


class _DropSystemParams(Params):
    keep_chars: int = 0


class _DropSystem:
    """A test strategy: truncate every system prompt to ``keep_chars`` characters."""

    name = "test_drop_system"
    summary = "test only"
    params = _DropSystemParams

    def apply(
        self, trace: SimTrace, params: _DropSystemParams, context: Context
    ) -> tuple[SimTrace, list[Event]]:
        calls = []
        for item in trace.calls:
            system = tuple(
                dataclasses.replace(b, text=b.text[: params.keep_chars])
                if isinstance(b, TextBlock)
                else b
                for b in item.call.system
            )
            calls.append(
                dataclasses.replace(item, call=dataclasses.replace(item.call, system=system))
            )
        return SimTrace(trace.path, tuple(calls)), []


def test_attribution_leave_one_out_rule() -> None:
    register(_DropSystem())
    try:
        traces, _ = load_traces([EXAMPLES / "anthropic_support_agent.yaml"])
        engine = Engine(traces)
        both = Variant("both", (make_step("test_drop_system"), make_step("caching")))
        comparison = compare_variants(engine, [both])
        summary = comparison.variants[0]
        full = summary.totals.cost_usd
        without_drop = engine.run(Variant("x", (make_step("caching"),))).totals().cost_usd
        without_cache = engine.run(Variant("y", (make_step("test_drop_system"),))).totals().cost_usd
        assert full is not None and without_drop is not None and without_cache is not None
        assert summary.attribution == {
            "test_drop_system": without_drop - full,
            "caching": without_cache - full,
        }
        baseline = comparison.baseline.cost_usd
        assert baseline is not None and summary.interaction is not None
        # the documented rule: marginals + interaction = total saving
        assert (
            sum(summary.attribution.values(), start=Decimal(0)) + summary.interaction
            == baseline - full
        )
    finally:
        STRATEGIES.pop("test_drop_system", None)


def test_scenario_over_the_real_corpus(corpus: Path, tmp_path: Path) -> None:
    scenario = tmp_path / "corpus.yaml"
    scenario.write_text(
        "name: real corpus\n"
        f"cassettes: ['{corpus}/pydantic__pydantic-ai/*anthropic*.yaml', '{corpus}/crewAIInc__crewAI/*Planning*.yaml']\n"
        "variants:\n  cache: [caching]\n  cache-1h: [{caching: {ttl: 1h, rolling: 2}}]\n"
    )
    result = _run("compare", str(scenario), "--format", "json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)["scenarios"][0]
    assert document["baseline"]["llm_calls"] > 100
    for variant in document["variants"]:
        assert variant["totals"]["llm_calls"] == document["baseline"]["llm_calls"]
        assert variant["totals"]["prompt_tokens"] > 0


def test_bundled_scenarios_run_and_print_every_scenario() -> None:
    from costsim.scenario import find_scenarios, load_scenario

    names = [load_scenario(p).scenario.name for p in find_scenarios([ROOT / "scenarios"])]
    result = _run("compare", "scenarios")
    assert result.exit_code == 0, result.output
    for name in names:
        assert f"== {name} ==" in result.stdout


def test_a_recording_with_invalid_usage_is_said_to_be_estimated(tmp_path: Path) -> None:
    """The baseline rests on an estimate where a call's recorded usage does not add up:
    compare says so in every format, and bills it at its estimate on both sides."""
    document = yaml.safe_load((EXAMPLES / "anthropic_support_agent.yaml").read_text())
    body = document["interactions"][0]["response"]["body"]
    body["string"] = body["string"].replace('"input_tokens":412', '"input_tokens":-412')
    (tmp_path / "agent.yaml").write_text(yaml.safe_dump(document))
    scenario = tmp_path / "s.yaml"
    scenario.write_text(
        f"name: s\ncassettes: [{tmp_path}/agent.yaml]\nvariants: {{c: [caching]}}\n"
    )
    text = " ".join(_run("compare", str(scenario), "--no-cache").output.split())
    assert "* baseline: 1 call recorded no usage (or usage that does not add up)" in text
    # the estimated call is billed at its estimate on both sides: no gap to name
    assert "billed unknown" not in text and "where the recording billed" not in text
    markdown = _run("compare", str(scenario), "--no-cache", "--format", "markdown").output
    assert "\n- baseline: 1 call recorded no usage" in markdown
    data = json.loads(_run("compare", str(scenario), "--no-cache", "--format", "json").output)
    assert data["scenarios"][0]["baseline"]["estimated_calls"] == 1
    page = tmp_path / "page.html"
    _run("compare", str(scenario), "--no-cache", "--format", "html", "-o", str(page))
    assert "1 call recorded no usage (or usage that does not add up)" in page.read_text()
    clean = tmp_path / "clean.yaml"
    clean.write_text(scenario.read_text().replace(f"{tmp_path}/agent.yaml", f"{EXAMPLES}/*.yaml"))
    assert "* baseline" not in _run("compare", str(clean), "--no-cache").output


def test_a_marginal_is_banded_by_what_the_two_runs_bill_differently() -> None:
    """Hand-computed: only the terms that differ between the run with everything and the
    run without the step count, each by how much it moves."""
    one, two = ("prompt", 1), ("prompt", 2)

    def even(text: str) -> Spread:
        return Spread.even(Decimal(text))

    full = [({one: even("0.010"), two: even("0.004")}, {one: even("0.002")})]
    rest = [({one: even("0.011"), two: even("0.001")}, {one: even("0.003")})]
    band = marginal_band(Decimal("0.5"), full, rest)
    # term one moves each delta alike: (0.011 - 0.003) - (0.010 - 0.002) = 0;
    # term two: (0.001 - 0) - (0.004 - 0) = -0.003
    assert (band.spread, band.estimated) == (even("0.003"), True)
    same = marginal_band(Decimal(0), full, full)
    assert (same.half, same.exact) == (Decimal(0), True)


def test_a_lopsided_term_keeps_its_sides_through_deltas_and_marginals() -> None:
    """Server-tool tokens billed uncached that the provider may have read from the cache
    (0.9 of the input price below) or written (0.25 above), in the run with caching only."""
    hidden = ("hidden", 1)
    lopsided = Spread(Decimal("0.009"), Decimal("0.0025"))
    full = [({hidden: lopsided}, {})]  # caching on: the term; its baseline has no marks
    rest = [({}, {})]  # the run without caching: no breakpoints, nothing to read
    # the delta (variant - baseline) may be 0.009 lower or 0.0025 higher
    assert difference(*full[0]) == lopsided
    # the marginal saving (rest's delta - full's) swaps the sides: 0.0025 lower, 0.009 higher
    band = marginal_band(Decimal("0.1"), full, rest)
    assert band.spread == Spread(Decimal("0.0025"), Decimal("0.009"))
    assert (band.low, band.high) == (Decimal("0.0975"), Decimal("0.109"))
    # a term both runs share alike cancels on both sides
    assert difference({hidden: lopsided}, {hidden: lopsided}) == Spread()


def test_a_step_that_changes_nothing_is_attributed_exactly_nothing() -> None:
    traces, _ = load_traces([EXAMPLES / "anthropic_support_agent.yaml"])
    nothing = make_step("truncation", {"max_chars": 10**9})  # no tool result is that long
    stack = Variant("stack", (nothing, make_step("caching", {"ttl": "1h"})))
    summary = compare_variants(Engine(traces), [stack]).variants[0]
    assert not summary.delta.exact  # caching moves cache boundaries on estimates
    noop = summary.attribution_bands[nothing.describe()]
    assert (noop.value, noop.half, noop.exact) == (Decimal(0), Decimal(0), True)
    # caching's marginal is the whole change: banded as the variant's delta is
    caching = summary.attribution_bands["caching:ttl=1h"]
    assert caching.half == summary.delta.half and caching.value == -summary.delta.value


def test_a_step_that_changes_nothing_beside_one_that_adds_calls_is_exactly_nothing() -> None:
    """Compaction adds summary calls; the same summary in the run with and without the no-op
    step is the same term of the band, so the no-op is still attributed exactly $0."""
    session = ROOT / "scenarios" / "cassettes" / "coding_agent" / "retry_bugfix_session.yaml"
    traces, _ = load_traces([session])
    nothing = make_step("truncation", {"max_chars": 10**9})
    compaction = make_step("compaction", {"max_messages": 20})
    summary = compare_variants(Engine(traces), [Variant("v", (nothing, compaction))]).variants[0]
    assert summary.totals.llm_calls > summary.baseline.llm_calls  # summaries were added
    noop = summary.attribution_bands[nothing.describe()]
    assert (noop.value, noop.half, noop.exact) == (Decimal(0), Decimal(0), True)
    whole = summary.attribution_bands[compaction.describe()]
    assert whole.half == summary.delta.half and not whole.exact


def test_a_variant_costs_the_recording_plus_its_delta(corpus: Path, tmp_path: Path) -> None:
    """The replay of a web search a thinking budget changes is dearer than its bill (the
    search's own cache reads are not the client's): the variant's cost is still the recorded
    cost plus its Δ, and the gap is named under the variant, outside both."""
    cassette = (
        corpus / "pydantic__pydantic-ai" / "tests__cassettes__test_temporal__test_web_search_agent_"
        "run_in_workflow.yaml"
    )
    scenario = tmp_path / "s.yaml"
    scenario.write_text(
        f"name: s\ncassettes: ['{cassette}']\nvariants: {{t: [thinking_budget: {{budget: 1024, effort_as_budget: true}}]}}\n"
    )
    text = " ".join(_run("compare", str(scenario), "--no-cache").output.split())
    data = json.loads(_run("compare", str(scenario), "--no-cache", "--format", "json").output)
    recorded = Decimal(data["scenarios"][0]["baseline"]["cost_usd"])
    (variant,) = data["scenarios"][0]["variants"]
    assert Decimal(variant["like_for_like_baseline"]["cost_usd"]) == recorded
    assert Decimal(variant["totals"]["cost_usd"]) - recorded == Decimal(
        variant["delta"]["cost_usd"]
    )
    assert (
        variant["totals"]["cache_read_tokens"]
        == data["scenarios"][0]["baseline"]["cache_read_tokens"]
    )
    assert said(
        text,
        "*the variant bills 1 recorded call differently (those it keeps, as recorded plus the simulated change): replayed*",
    )
    assert "the variant's numbers move from the bill, not from that replay" in text


def test_an_answer_that_costs_more_still_gives_its_band() -> None:
    """A variant that adds cost may yet save: its answer says how far either way (p90)."""
    import costsim
    from tests.conftest import EXAMPLES

    simulation = costsim.simulate(str(EXAMPLES), "caching:ttl=1h")
    (variant,) = simulation.data.variants
    assert variant.delta.value is not None and variant.delta.value > 0
    assert variant.delta.low is not None and variant.delta.high is not None
    answer = simulation.render("table", width=100).splitlines()[0]
    assert answer.startswith("caching:ttl=1h saves nothing: it adds $")
    found = re.search(r", p90 Δ ([+-])\$([0-9.]+) to ([+-])\$([0-9.]+)\.$", answer)
    assert found is not None, answer
    low = Decimal(found[2]) * (-1 if found[1] == "-" else 1)
    high = Decimal(found[4]) * (-1 if found[3] == "-" else 1)
    half_unit = Decimal(1).scaleb(-len(found[2].split(".")[1])) / 2  # as rounded for the line
    assert abs(low - variant.delta.low) <= half_unit
    assert abs(high - variant.delta.high) <= half_unit


def _overloaded(folder: Path) -> None:
    """A cassette whose only call was refused (529, overloaded): billed nothing."""
    request = {"model": "claude-3-5-haiku-latest", "max_tokens": 100, "messages": []}
    error = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    interaction = {
        "request": {
            "body": json.dumps(request),
            "headers": {},
            "method": "POST",
            "uri": "https://api.anthropic.com/v1/messages",
        },
        "response": {
            "body": {"string": json.dumps(error)},
            "headers": {"date": ["Mon, 01 Sep 2025 10:00:00 GMT"]},
            "status": {"code": 529, "message": "Overloaded"},
        },
    }
    (folder / "e.yaml").write_text(yaml.safe_dump({"version": 1, "interactions": [interaction]}))


@pytest.mark.parametrize(
    ("calls", "said"),
    [
        (False, "Nothing to save: there are no LLM calls to simulate."),
        (True, "Nothing to save: the recording costs $0 (1 LLM call, 1 errored)."),
    ],
)
def test_a_recording_that_costs_nothing_has_nothing_to_save(
    tmp_path: Path, calls: bool, said: str
) -> None:
    """No calls, or none billed: the answer says so (it said no variant's saving could be
    priced, pointing to unpriced calls there were none of), in the table and the HTML."""
    if calls:
        _overloaded(tmp_path)
    result = _run("simulate", str(tmp_path), "-s", "caching")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[0] == said
    page = _run("simulate", str(tmp_path), "-s", "caching", "--format", "html").stdout
    assert f'<p class="answer">{said}</p>' in page


def test_a_band_that_rounds_to_zero_is_said_as_the_table_says_it(corpus: Path) -> None:
    """Caching changes nothing here, on estimated cache writes: the answer's p90 range is
    said as the band column says it (it read '+$0.000000 to +$0.000000')."""
    cassette = (
        corpus / "crewAIInc__crewAI"
        / "lib__crewai__tests__cassettes__llms__anthropic__test_anthropic_cached_prompt_tokens.yaml"
    )  # fmt: skip
    lines = _run("simulate", str(cassette), "-s", "caching").stdout.splitlines()
    row = next(line for line in lines[1:] if line.startswith("caching "))
    assert lines[0] == (
        "caching saves nothing: it costs the same as the recording, p90 Δ ±<$0.000001."
    )
    assert row.split()[-2] == "±<$0.000001"  # the band column, as the answer says it


def test_a_saving_band_reaches_no_further_than_what_the_changed_calls_cost() -> None:
    """A variant cannot save more than the calls it bills differently cost: the others cost
    the same in both. Truncating the browser session's snapshots changes all but one call;
    the band used to reach down to the whole baseline (a trial saw a truncation's saving band
    reach $0.0598 where the three calls it changed cost $0.0311). Billed twice what the
    offline count says, the cut's size is unsure by more than the cut: each call's prompt
    stops at nothing, and the whole band at what the changed calls cost."""
    traces, _ = load_traces([ROOT / "scenarios" / "cassettes" / "browser_mcp"])
    doubled = [
        dataclasses.replace(
            trace,
            calls=tuple(
                dataclasses.replace(call, usage=dataclasses.replace(
                    call.usage, uncached_input=2 * call.usage.prompt_total, cache_read=0
                ))
                if call.usage is not None
                else call
                for call in trace.calls
            ),
        )
        for trace in traces
    ]  # fmt: skip
    step = make_step("truncation", {"max_chars": 4000, "head": 1500, "tail": 1000})
    (summary,) = compare_variants(Engine(doubled), [Variant("t", (step,))]).variants
    touched = summary.resimulation_gap[1]
    assert touched is not None and summary.baseline.cost_usd
    assert touched < summary.baseline.cost_usd  # one call is left as recorded
    band = summary.delta
    assert band.value is not None and band.low is not None and band.high is not None
    assert band.high == 0  # a cut is no dearer
    assert -touched <= band.low < band.value - band.spread.above  # unsure more below
    # the cost and its change are one band: the cost stops where the change does (at what
    # the call left as recorded costs), not at $0
    cost = summary.cost
    assert cost.low == summary.baseline.cost_usd + band.low
    assert cost.high == summary.baseline.cost_usd + band.high
    wide = Spread.even(summary.baseline.cost_usd)  # both bands reach past their floors
    summary.bands = dataclasses.replace(summary.bands, cost=wide, delta=wide)
    assert summary.delta.low == -touched
    assert summary.cost.low == summary.baseline.cost_usd - touched > 0  # it stopped at $0
    # a call left alone but billed on an estimate (no recorded usage) is unsure both ways
    summary.baseline = dataclasses.replace(summary.baseline, estimated_calls=1)
    assert summary.cost.low == 0


def test_each_cassette_gives_its_recording_beside_its_baseline() -> None:
    """A simulation's per-cassette ``baseline`` was like for like (the recording with the calls
    the variant changes re-simulated), which a trial read as the recording; each cassette gives
    its ``recorded`` totals too (now the same: a variant is measured from the bill); they sum
    to the document's baseline."""
    result = _run("simulate", str(EXAMPLES), "-s", "caching:ttl=1h", "--format", "json")
    document = json.loads(result.stdout)
    cassettes = document["cassettes"]
    recorded = sum(Decimal(c["recorded"]["cost_usd"]) for c in cassettes)
    like = sum(Decimal(c["baseline"]["cost_usd"]) for c in cassettes)
    assert recorded == Decimal(document["baseline"]["cost_usd"])
    assert like == Decimal(document["like_for_like_baseline"]["cost_usd"])


def test_the_answer_is_a_variant_a_client_can_deploy(tmp_path: Path) -> None:
    """A trial asked what prompt caching saves and read 'Saves most: cache-oracle': the
    oracle knows the trace's future, so no client can run it. The answer is the best variant
    a client can deploy; the oracle bounds it. An oracle alone is named as one."""
    scenario = tmp_path / "s.yaml"
    body = (
        f"name: s\ncassettes: [{EXAMPLES}/*.yaml]\nvariants:\n"
        "  cache: [caching]\n  oracle: [{caching: {policy: oracle}}]\n"
    )
    scenario.write_text(body)
    answer = " ".join(_run("compare", str(scenario)).stdout.split("\n\n")[0].split()[3:])
    assert answer.startswith("Saves most: cache, $0.000716 (5.9%) of $0.012051")
    assert answer.endswith("; the oracle oracle, which knows the future, saves $0.000798.")
    document = json.loads(_run("compare", str(scenario), "--format", "json").stdout)
    assert document["scenarios"][0]["cheapest"]["variant"] == "cache"
    scenario.write_text(body.replace("  cache: [caching]\n", ""))
    only = " ".join(_run("compare", str(scenario)).stdout.split("\n\n")[0].split()[3:])
    assert only.startswith(
        "oracle, an oracle (it knows the trace's future: a bound, not a plan), saves"
    )


def test_by_tool_counts_a_screenshot_result_at_what_the_provider_bills() -> None:
    """A browser tool's screenshot was 0 result tokens (only text was counted)."""
    from costsim.analysis.groups import tool_tokens
    from costsim.metering.media import image_tokens
    from costsim.model import (
        Call,
        Flavour,
        ImageBlock,
        Message,
        Provenance,
        ToolResultBlock,
        ToolUseBlock,
    )
    from costsim.pricing.ledger import meter

    shot = ImageBlock("image/png", "sha256:ab", 90_000, width=1280, height=800)
    use = ToolUseBlock("t1", "browser_take_screenshot", {})
    call = Call(
        flavour=Flavour.ANTHROPIC_MESSAGES,
        model="claude-sonnet-4-5",
        provenance=Provenance(Path("v.yaml"), 0),
        messages=(
            Message("assistant", (use,)),
            Message("user", (ToolResultBlock("t1", (shot,)),)),
        ),
    )
    (metered,) = [meter(call)]
    table = tool_tokens([metered])
    expected = image_tokens(shot, Flavour.ANTHROPIC_MESSAGES, "claude-sonnet-4-5")
    assert expected > 1000  # 1280 x 800 / 750
    assert table["browser_take_screenshot"].result_tokens >= expected
