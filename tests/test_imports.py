"""Importing costsim is cheap: heavy modules load only when a command needs them."""

from __future__ import annotations

import subprocess
import sys


def _printed(code: str) -> str:
    """What ``code`` prints in a fresh interpreter (what is imported is the point)."""
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    return result.stdout.strip()


HEAVY = ("genai_prices", "tiktoken", "anthropic", "openai", "vcr", "yaml", "tabulate", "pydantic")


def test_import_costsim_pulls_no_heavy_modules() -> None:
    code = (
        "import sys, costsim\n"
        f"heavy = [m for m in {HEAVY!r} if m in sys.modules]\n"
        "print(','.join(heavy))"
    )
    assert _printed(code) == ""


def test_the_command_collects_garbage_less_often_and_a_test_process_is_left_alone() -> None:
    """costsim's own processes raise the collector's thresholds (7% of a comparison went to
    collections); a process it does not own (pytest's, with the plugin loaded and the
    testing API imported) keeps the thresholds it had."""
    code = (
        "import gc, sys\n"
        "print(gc.get_threshold())\n"
        "import costsim.plugin, costsim.api.testing\n"
        "print(gc.get_threshold())\n"
        "sys.argv = ['costsim', '--version']\n"
        "from costsim.cli import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print(gc.get_threshold())"
    )
    lines = _printed(code).splitlines()
    assert lines[0] == lines[1]
    assert lines[-1] == "(200000, 30, 30)"


def test_the_command_line_starts_without_the_analysis() -> None:
    """Every command (a recalled comparison in 0.3 s) starts by importing the CLI: it loads
    no engine, analysis or renderer of results until a command needs one (an import of the
    result formats at the top of ``cache`` added 0.26 s to every run)."""
    code = (
        "import sys, costsim.cli\n"
        "heavy = ('analysis', 'engine', 'strategies', 'metering', 'providers')\n"
        "loaded = [m for m in sys.modules if m.startswith('costsim.')\n"
        "          and (m.split('.')[1] in heavy or m.startswith('costsim.render.formats'))]\n"
        "print(','.join(sorted(loaded)))"
    )
    assert _printed(code) == ""
