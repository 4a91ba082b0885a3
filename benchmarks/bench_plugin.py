"""Overhead of ``pytest --costsim`` on a suite that replays LLM calls from cassettes.

    python benchmarks/bench_plugin.py [TESTS]

Writes a throwaway suite of TESTS tests (default 300), each replaying the bundled three-call
Anthropic cassette through vcrpy and requests, then times the suite with and without
``--costsim`` (best of three runs each), and once more with every request changed so that each
call is metered as sent (through the engine's cache simulation).
"""

from __future__ import annotations

import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SUITE = """
import json

import pytest
import requests
import vcr
import yaml

with open("agent.yaml") as f:
    RECORDED = [json.loads(i["request"]["body"]) for i in yaml.safe_load(f)["interactions"]]
CHANGE = {change}

@pytest.mark.parametrize("n", range({tests}))
def test_replay(n):
    with vcr.use_cassette("agent.yaml", record_mode="none"):
        for body in RECORDED:
            if CHANGE:
                body = {{**body, "system": body["system"] + [{{"type": "text", "text": "v2"}}]}}
            requests.post("https://api.anthropic.com/v1/messages", json=body)
"""


def _best_of(folder: Path, *args: str, runs: int = 3) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
            cwd=folder,
            check=True,
            capture_output=True,
        )
        times.append(time.perf_counter() - start)
    return min(times)


IMPORT = "import pytest; import costsim.plugin.hooks"


def import_ms(runs: int = 7) -> float:
    """Median cumulative import time (ms) of the plugin module pytest loads through its entry
    point, measured with ``python -X importtime`` after pytest itself is imported."""
    times = []
    for _ in range(runs):
        result = subprocess.run(
            [sys.executable, "-X", "importtime", "-c", IMPORT],
            check=True,
            capture_output=True,
            text=True,
        )
        for line in result.stderr.splitlines():
            parts = [part.strip() for part in line.split("|")]
            if len(parts) == 3 and parts[2] == "costsim.plugin.hooks":
                times.append(int(parts[1]) / 1000)
    return statistics.median(times)


def main() -> None:
    tests = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        shutil.copy(ROOT / "cassettes" / "anthropic_support_agent.yaml", folder / "agent.yaml")
        (folder / "test_suite.py").write_text(SUITE.format(tests=tests, change=False))
        plain = _best_of(folder)
        metered = _best_of(folder, "--costsim")
        (folder / "test_suite.py").write_text(SUITE.format(tests=tests, change=True))
        drifted = _best_of(folder, "--costsim")
    calls = tests * 3
    print(f"{tests} tests, {calls} replayed calls")
    print(f"  importing the inactive plugin: {import_ms():.1f} ms (python -X importtime, median)")
    print(f"  --costsim wall overhead: {(metered - plain) / plain:+.1%}")
    print(f"  without --costsim: {plain:.2f} s")
    print(f"  with --costsim:    {metered:.2f} s  (x{metered / plain:.2f}, "
          f"{(metered - plain) / calls * 1000:.2f} ms per call)")  # fmt: skip
    print(f"  every call drifted: {drifted:.2f} s  (x{drifted / plain:.2f}, "
          f"{(drifted - plain) / calls * 1000:.2f} ms per call)")  # fmt: skip


if __name__ == "__main__":
    main()
