"""The install smoke test (run by CI on the wheel in fresh environments) also runs here, on the
development environment, so the smoke driver and its project cannot rot."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SMOKE = Path(__file__).parent / "installed" / "smoke.py"


def test_the_smoke_suite_passes_in_this_environment() -> None:
    result = subprocess.run(
        [
            sys.executable,
            str(SMOKE),
            "--python",
            sys.executable,
            "--with",
            "recording,xdist,openai",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 7 and all(line.endswith(" ok") for line in lines), result.stdout


def _floor(requirement: str) -> tuple[str, str] | None:
    match = re.fullmatch(r"([A-Za-z0-9_.-]+)>=([0-9.]+)", requirement.strip())
    return (match.group(1).lower(), match.group(2)) if match else None


def test_the_matrix_tests_the_declared_lowest_versions() -> None:
    """The ``lowest`` row of the compatibility matrix pins exactly the floors pyproject.toml
    declares, so the supported range the README states is the range CI installs."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    floors = dict(filter(None, (_floor(r) for r in project["dependencies"])))
    rows = {
        line.split()[0]: line.split()[2:]
        for line in (SMOKE.parent / "matrix.txt").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    }
    lowest = dict(pin.split("==") for pin in rows["lowest"])

    def bare(version: str) -> str:  # 7.0.0 and 7 are the same floor
        return re.sub(r"(\.0)+$", "", version)

    for name in ("pytest", "pluggy", "vcrpy", "anthropic"):
        assert bare(floors[name]) == bare(lowest[name]), name
