"""The synthetic agent examples: deterministic, committed as generated, self-consistent."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
import yaml
from examples.generate import expected_calls, main

from costsim.metering.meter import Meter
from costsim.model import Flavour
from costsim.providers.normalise import load_trace
from tests.conftest import ROOT

COMMITTED = ROOT / "scenarios" / "cassettes"
EXPECTED = expected_calls()
MAX_TOTAL_BYTES = 6_000_000


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    output = tmp_path_factory.mktemp("examples")
    main(output)
    return output


def _files(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*.yaml"))


def test_generator_is_deterministic(generated: Path, tmp_path: Path) -> None:
    main(tmp_path)
    assert _files(tmp_path) == _files(generated) == sorted(EXPECTED)
    for name in _files(generated):
        assert (tmp_path / name).read_bytes() == (generated / name).read_bytes(), name


def test_committed_examples_match_a_fresh_generation(generated: Path) -> None:
    assert _files(COMMITTED) == _files(generated), "rerun python examples/generate.py"
    for name in _files(generated):
        assert (COMMITTED / name).read_bytes() == (generated / name).read_bytes(), (
            f"{name} drifted from examples/generate.py; rerun it"
        )


def test_examples_stay_small() -> None:
    total = sum((COMMITTED / name).stat().st_size for name in EXPECTED)
    assert total < MAX_TOTAL_BYTES


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_example_is_synthetic_and_self_consistent(name: str) -> None:
    path = COMMITTED / name
    assert path.read_text(encoding="utf-8").startswith("# SYNTHETIC cassette")
    trace = load_trace(path)
    assert len(trace.calls) == EXPECTED[name]
    assert trace.other_interactions == 0
    meter = Meter()
    for call in trace.calls:
        assert call.usage is not None and not call.usage.estimated, call.provenance
        assert call.usage.prompt_total == round(meter.estimate_prompt(call)), call.provenance
        assert call.usage.output == max(1, meter.estimate_output(call)), call.provenance
        assert call.usage.cache_write == 0
        if call.flavour is Flavour.ANTHROPIC_MESSAGES:
            assert call.usage.cache_read == 0  # the baseline has no caching: strategies add it
    dates = [call.recorded_at for call in trace.calls if call.recorded_at is not None]
    assert len(dates) == len(trace.calls)
    assert all((date.year, date.month) == (2025, 11) for date in dates)
    gaps = [(later - earlier).total_seconds() for earlier, later in itertools.pairwise(dates)]
    assert all(2 <= gap <= 40 for gap in gaps)


def _raw(name: str) -> list[dict[str, object]]:
    return yaml.safe_load((COMMITTED / name).read_text(encoding="utf-8"))["interactions"]


def test_coding_agent_shape() -> None:
    trace = load_trace(COMMITTED / "coding_agent/retry_bugfix_session.yaml")
    assert all(len(call.tools) >= 40 for call in trace.calls)
    systems = {call.system[0].text for call in trace.calls if call.system}  # type: ignore[union-attr]
    assert len(systems) >= 4 and all("## Conversation summary\n" in s for s in systems)
    results = [
        len(block.text)
        for message in trace.calls[-1].messages
        for block in message.content
        if block.kind == "tool_result"
    ]
    assert sum(10_000 <= size <= 40_000 for size in results) >= 3


def test_orchestrator_has_nine_roles() -> None:
    trace = load_trace(COMMITTED / "orchestrator/rate_limiting_project.yaml")
    openings = {
        call.system[0].text.split(" of ")[0].split(".")[0]  # type: ignore[union-attr]
        for call in trace.calls
    }
    assert len(openings) == 9
    assert {call.model for call in trace.calls} == {"claude-sonnet-4-5"}


def test_browser_results_carry_playwright_sections() -> None:
    text = "\n".join(
        json.loads(i["request"]["body"])["messages"][-1]["content"][0]["content"][0]["text"]  # type: ignore[index]
        for i in _raw("browser_mcp/checkout_session.yaml")[1:]
    )
    for marker in ("### Ran Playwright code", "### Page state", "- Page Snapshot:", "[ref=e",
                   "### Console messages", "### Open tabs", "### Downloads", "[ERROR]"):  # fmt: skip
        assert marker in text, marker
