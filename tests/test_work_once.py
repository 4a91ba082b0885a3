"""Each piece of a comparison's work is done once per run: every cassette read and hashed
once, every set of steps simulated once per cassette (attribution reuses the variants it
has), and the results are those of doing it all again."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from costsim import api
from costsim.api import work
from costsim.cli import cli
from costsim.engine import Engine
from costsim.io import store

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "cassettes"
SCENARIO = """\
name: once
cassettes: [cassettes/*.yaml]
variants:
  cut: [{truncation: {max_chars: 400, head: 100, tail: 100}}]
  cache: [caching]
  both:
    - {truncation: {max_chars: 400, head: 100, tail: 100}}
    - caching
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("COSTSIM_CACHE_DIR", str(tmp_path / "cache"))
    folder = tmp_path / "project"
    shutil.copytree(EXAMPLES, folder / "cassettes")
    (folder / "s.yaml").write_text(SCENARIO)
    return folder / "s.yaml"


def test_attribution_reuses_the_variants_it_has(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs: list[tuple[str, int]] = []
    real = Engine.run

    def counted(self: Engine, variant: Any, **kwargs: Any) -> Any:
        runs.append((variant.describe(), len(self.traces)))
        return real(self, variant, **kwargs)

    monkeypatch.setattr(Engine, "run", counted)
    result = api.compare(project, jobs=1, cache=False)
    # per batch (cut by the paths' names), each variant run once over all its cassettes: the
    # recording, cut, cache, both; "both" without a step is cut or cache, whose runs it reuses
    names = {name for name, _ in runs}
    assert len(names) == 4
    assert all(sum(n for name, n in runs if name == one) == 3 for one in names)
    variants = {v.variant.name: v for v in result.data.comparison.variants}
    both, cut, cache = variants["both"], variants["cut"], variants["cache"]
    assert both.delta.value is not None and cut.delta.value is not None
    assert cache.delta.value is not None
    # leave-one-out: each marginal is the delta without that step (another variant's own)
    assert list(both.attribution.values()) == [
        cache.delta.value - both.delta.value,  # without truncation: "cache" alone
        cut.delta.value - both.delta.value,  # without caching: "cut" alone
    ]


def test_each_cassette_is_read_parsed_and_hashed_once(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    parsed: list[Path] = []
    real_parse = work.trace_from_bytes

    def parse(path: Path, data: bytes, *, lenient: bool = False) -> Any:
        parsed.append(path)
        return real_parse(path, data, lenient=lenient)

    hashed: list[int] = []
    real_digest = store.content_digest

    def digest(data: bytes) -> str:
        hashed.append(len(data))
        return real_digest(data)

    monkeypatch.setattr(work, "trace_from_bytes", parse)
    monkeypatch.setattr(store, "content_digest", digest)
    result = CliRunner().invoke(cli, ["compare", str(project), "--format", "json", "-j", "1"])
    assert result.exit_code == 0, result.output
    assert sorted(parsed) == sorted((project.parent / "cassettes").glob("*.yaml"))
    sizes = sorted(p.stat().st_size for p in (project.parent / "cassettes").glob("*.yaml"))
    # every cassette hashed once (the recalled output's check and key hash other things)
    assert all(hashed.count(size) == 1 for size in sizes)
    assert json.loads(result.stdout)["scenarios"][0]["variants"]


def test_breakpoints_placed_or_taken_leave_the_rest_of_a_request_the_same_objects() -> None:
    """The engine remembers what it counted of a request, message, block and tool by object;
    a placement that rebuilt all of them had every caching variant count every request
    again. What a placement does not change stays the very object it was."""
    from costsim.providers.normalise import trace_from_bytes
    from costsim.strategies.cache_policies import strip_marks
    from costsim.strategies.caching import CachingParams
    from costsim.strategies.static_marks import marks_in, place

    path = EXAMPLES / "anthropic_support_agent.yaml"
    call = next(c for c in trace_from_bytes(path, path.read_bytes()).calls if len(c.messages) > 2)
    placed, _ = place(call, CachingParams())
    assert marks_in(placed) != marks_in(call)
    assert placed.messages[0] is call.messages[0]  # only the rolling last message is new
    assert placed.messages[-1] is not call.messages[-1]
    again, _ = place(placed, CachingParams())
    assert again is placed  # nothing left to place: the request as it was
    hour, _ = place(placed, CachingParams(ttl="1h"))
    assert hour.messages[0] is call.messages[0]
    stripped = strip_marks(placed)
    assert not any(marks_in(stripped))
    unmarked = [m for m in placed.messages if all(b.cache_control is None for b in m.content)]
    assert unmarked
    assert all(any(s is m for s in stripped.messages) for m in unmarked)


def test_a_cassette_a_variant_leaves_as_recorded_is_summed_once_for_every_run() -> None:
    """A variant changes few cassettes; those it leaves alone are billed as recorded in every
    run, so their totals and band terms are made once (one object in every run's sums), and
    a run's whole is exactly the sum of its cassettes', as summing every call gives it."""
    from costsim.analysis.groups import Grouper
    from costsim.analysis.outcomes import _Runs
    from costsim.pricing.ledger import Totals
    from costsim.providers.normalise import trace_from_bytes
    from costsim.strategies.registry import Variant, make_step

    traces = [trace_from_bytes(p, p.read_bytes()) for p in sorted(EXAMPLES.glob("*.yaml"))]
    runs = _Runs(Engine(traces), None, Grouper())
    made: list[int] = []
    real = Totals.of

    def counted(calls: Any) -> Totals:
        made.append(1)
        return real(calls)

    cut = Variant("cut", (make_step("truncation", {"max_chars": 400, "head": 100, "tail": 100}),))
    first = runs.run(cut).part
    untouched = [p for p, t in first.per_cassette.items() if t is first.baseline_per_cassette[p]]
    assert untouched  # the cut leaves some cassette as recorded
    Totals.of = counted  # type: ignore[method-assign]
    try:
        think = Variant("think", (make_step("thinking_budget", {"budget": 1024}),))
        second = runs.run(think).part
    finally:
        Totals.of = real  # type: ignore[method-assign]
    for path in untouched:
        if second.per_cassette[path] is second.baseline_per_cassette[path]:
            assert second.per_cassette[path] is first.per_cassette[path]
    changed = sum(1 for p, t in second.per_cassette.items() if t is not first.per_cassette.get(p))
    assert len(made) <= 2 * changed + 2  # the changed cassettes' sums, and the gap's
    for variant, item in ((cut, first), (think, second)):
        every_call = real(runs.run(variant).calls)
        assert every_call == item.totals
        assert str(every_call.cost_usd) == str(item.totals.cost_usd)


def test_each_tool_is_rendered_and_counted_once_per_serialiser(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An agent sends the same tools with every request, and the cache layout of every
    request a variant changes counts them: each tool object is counted once."""
    import dataclasses

    from costsim.metering import serialise
    from costsim.model import Flavour
    from costsim.providers.normalise import trace_from_bytes

    path = EXAMPLES / "anthropic_support_agent.yaml"
    calls = [c for c in trace_from_bytes(path, path.read_bytes()).calls if c.tools]
    assert len(calls) > 1
    style = serialise._STYLES[Flavour.ANTHROPIC_MESSAGES]
    counted: list[str] = []

    def tool_tokens(tool: Any, count: Any) -> int:
        counted.append(tool.name)
        return int(style.tool_tokens(tool, count))

    monkeypatch.setitem(
        serialise._STYLES,
        Flavour.ANTHROPIC_MESSAGES,
        dataclasses.replace(style, tool_tokens=tool_tokens),
    )
    serialiser = serialise.Serialiser()
    first = [serialiser.positions(call) for call in calls]
    assert len(counted) == len({id(t) for call in calls for t in call.tools})
    assert first == [serialise.Serialiser().positions(call) for call in calls]


def test_a_block_copied_with_another_marker_is_digested_and_counted_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Placing a breakpoint copies the block it marks, and the message holding it: the copy's
    cache digest is the block's (found without writing its JSON again), and the message's
    other blocks keep the counts they had."""
    import dataclasses

    from costsim.cache import prefix
    from costsim.metering import block_counts
    from costsim.metering.tokenizers import counter
    from costsim.model import (
        CacheControl,
        DocumentBlock,
        Flavour,
        Message,
        OtherBlock,
        TextBlock,
        ToolResultBlock,
        ToolUseBlock,
    )

    big = ToolResultBlock("t1", (TextBlock("tool output " * 2000),))
    server = OtherBlock("web_search_tool_result", {"content": ["result " * 500]})
    marked = dataclasses.replace(big, cache_control=CacheControl("5m"))
    written: list[int] = []
    real = prefix.canonical

    def canonical(value: Any) -> str:
        written.append(1)
        return real(value)

    monkeypatch.setattr(prefix, "canonical", canonical)
    builder = prefix.PrefixBuilder()
    assert builder._digest(marked) == builder._digest(big)
    assert len(written) == 1
    assert builder._digest(server) != builder._digest(big)
    # content JSON tells apart is never one key: 1, true and 1.0; 0.0 and -0.0
    for one, other in (
        (ToolUseBlock("", "check", 1), ToolUseBlock("", "check", True)),
        (ToolUseBlock("x", "f", 2), ToolUseBlock("x", "f", 2.0)),
        (ToolResultBlock("t", (TextBlock("1"),)), ToolResultBlock("t", (TextBlock("1"),), True)),
        (
            DocumentBlock("application/pdf", "s", page_points=((0.0, 1.0),)),
            DocumentBlock("application/pdf", "s", page_points=((-0.0, 1.0),)),
        ),
    ):
        assert builder._digest(one) != builder._digest(other), (one, other)

    counted: list[object] = []
    other = block_counts.BLOCK_COUNTERS[OtherBlock]

    def count_other(block: Any, ctx: Any) -> Any:
        counted.append(block)
        return other(block, ctx)

    monkeypatch.setitem(block_counts.BLOCK_COUNTERS, OtherBlock, count_other)
    ctx = block_counts.CountContext(
        counter("cl100k_base"), False, Flavour.ANTHROPIC_MESSAGES, "claude-sonnet-4-5"
    )
    memo: block_counts.BlockMemo = {}
    before = block_counts.content_stats(Message("user", (server, big)), ctx, memo)
    after = block_counts.content_stats(Message("user", (server, marked)), ctx, memo)
    assert counted == [server]
    assert after == before == block_counts.content_stats(Message("user", (server, big)), ctx)
