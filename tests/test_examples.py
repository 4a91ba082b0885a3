"""The synthetic agent examples: deterministic, committed as generated, self-consistent."""

from __future__ import annotations

import filecmp
import sys
from pathlib import Path

import pytest

from costsim.metering.meter import Meter
from costsim.normalise import load_trace
from tests.conftest import ROOT

EXAMPLES_DIR = ROOT / "scenarios" / "cassettes"
EXPECTED_CALLS = {
    "browser_mcp/shopping_session.yaml": 15,
    "coding_agent/refactor_session.yaml": 17,
    "orchestrator/rate_limiting_project.yaml": 25,
    "side_calls/assistant_with_side_calls.yaml": 13,
}


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    sys.path.insert(0, str(ROOT))
    try:
        from examples.generate import main
    finally:
        sys.path.remove(str(ROOT))
    output = tmp_path_factory.mktemp("examples")
    main(output)
    return output


def _files(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*.yaml"))


def test_generator_is_deterministic_and_matches_the_committed_files(
    generated: Path, tmp_path: Path
) -> None:
    from examples.generate import main

    main(tmp_path)
    assert _files(tmp_path) == _files(generated) == sorted(EXPECTED_CALLS)
    for name in _files(generated):
        assert filecmp.cmp(tmp_path / name, generated / name, shallow=False), name
        assert filecmp.cmp(EXAMPLES_DIR / name, generated / name, shallow=False), (
            f"{name} drifted from examples/generate.py; rerun it"
        )


@pytest.mark.parametrize("name", sorted(EXPECTED_CALLS))
def test_example_is_synthetic_and_self_consistent(name: str) -> None:
    path = EXAMPLES_DIR / name
    assert path.read_text().startswith("# SYNTHETIC")
    trace = load_trace(path)
    assert len(trace.calls) == EXPECTED_CALLS[name]
    meter = Meter()
    for call in trace.calls:
        assert call.usage is not None
        assert call.usage.prompt_total == round(meter.estimate_prompt(call))
