"""Overhead of ``pytest --costsim`` on a suite that replays LLM calls from cassettes.

    python benchmarks/bench_plugin.py [TESTS] [--runs N]

Writes a throwaway suite of TESTS tests (default 300), each replaying the bundled three-call
Anthropic cassette through vcrpy and requests, then times the suite without ``--costsim``, with
it (calls metered in the metering process beside the tests, the default where a second core
is free), with it and ``COSTSIM_METER_PROCESS=0`` (metered in the test process), and with every
request changed so that each call is metered as sent (through the engine's cache simulation).
Runs are interleaved (every variant once, N times over; default 5) and the best of each kept,
so that a slow moment of a shared machine hits every variant alike.
"""

from __future__ import annotations

import argparse
import os
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


def _time(folder: Path, args: tuple[str, ...], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
        cwd=folder,
        check=True,
        capture_output=True,
        env={**USER_ENV, **env},
    )
    return time.perf_counter() - start


USER_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
"""Runs keep Python's bytecode caches, as an installed wheel has them (an environment setting
PYTHONDONTWRITEBYTECODE would compile costsim, and pytest's plugins, afresh at every run)."""


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


VARIANTS: dict[str, tuple[tuple[str, ...], dict[str, str]]] = {
    "plain": ((), {}),
    "metered": (("--costsim",), {}),
    "in-process": (("--costsim",), {"COSTSIM_METER_PROCESS": "0"}),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tests", nargs="?", type=int, default=300)
    parser.add_argument("--runs", type=int, default=5)
    arguments = parser.parse_args()
    tests = arguments.tests
    best: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "same"
        drifted = Path(tmp) / "drifted"
        for where, change in ((folder, False), (drifted, True)):
            where.mkdir()
            shutil.copy(ROOT / "cassettes" / "anthropic_support_agent.yaml", where / "agent.yaml")
            (where / "test_suite.py").write_text(SUITE.format(tests=tests, change=change))
        _time(folder, ("--costsim",), {})  # bytecode caches written once, before timing
        for _ in range(arguments.runs):
            for name, (args, env) in VARIANTS.items():
                took = _time(folder, args, env)
                best[name] = min(best.get(name, took), took)
            took = _time(drifted, ("--costsim",), {})
            best["drifted"] = min(best.get("drifted", took), took)
    plain, calls = best["plain"], tests * 3
    print(f"{tests} tests, {calls} replayed calls (best of {arguments.runs} interleaved runs)")
    print(f"  importing the inactive plugin: {import_ms():.1f} ms (python -X importtime, median)")
    print(f"  --costsim wall overhead: {(best['metered'] - plain) / plain:+.1%}")
    print(f"  without --costsim: {plain:.2f} s")
    for name, label in (
        ("metered", "with --costsim"),
        ("in-process", "metered in the test process"),
        ("drifted", "every call drifted"),
    ):
        took = best[name]
        print(
            f"  {label + ':':<30} {took:.2f} s  (x{took / plain:.2f}, "
            f"{(took - plain) / calls * 1000:.2f} ms per call)"
        )


if __name__ == "__main__":
    main()
