"""The install smoke test (run by CI on the wheel in fresh environments) also runs here, on the
development environment, so the smoke driver and its project cannot rot."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SMOKE = Path(__file__).parent / "installed" / "smoke.py"


def test_the_smoke_suite_passes_in_this_environment() -> None:
    result = subprocess.run(
        [sys.executable, str(SMOKE), "--python", sys.executable, "--with", "recording,xdist"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 6 and all(line.endswith(" ok") for line in lines), result.stdout
