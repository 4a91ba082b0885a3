"""Importing costsim is cheap: heavy modules load only when a command needs them."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("genai_prices", "tiktoken", "anthropic", "openai", "vcr", "yaml", "tabulate", "pydantic")


def test_import_costsim_pulls_no_heavy_modules() -> None:
    code = (
        "import sys, costsim\n"
        f"heavy = [m for m in {HEAVY!r} if m in sys.modules]\n"
        "print(','.join(heavy))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == ""
