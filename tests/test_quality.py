"""Lint, format and type checks run with the tests, so they cannot rot."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=ROOT, capture_output=True, text=True, check=False)


def _tool(name: str) -> str:
    found = shutil.which(name, path=str(Path(sys.executable).parent))
    if found is None:
        pytest.fail(f"{name} is not installed: install the project with its dev extra (.[dev])")
    return found


def test_ruff_lint() -> None:
    result = _run(_tool("ruff"), "check", "src", "tests", "benchmarks", "scripts", "examples")
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_format() -> None:
    result = _run(
        _tool("ruff"), "format", "--check", "src", "tests", "benchmarks", "scripts", "examples"
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_strict() -> None:
    result = _run(sys.executable, "-m", "mypy")
    assert result.returncode == 0, result.stdout + result.stderr


def test_import_contracts() -> None:
    """Layers, doors and no cycles (``[tool.importlinter]`` in pyproject.toml)."""
    result = _run(_tool("lint-imports"), "--no-cache")
    assert result.returncode == 0, result.stdout + result.stderr


def test_modules_stay_small_and_in_their_layer() -> None:
    """No module over 400 lines; at the top of the package only its face, the errors, the
    entry point of ``python -m`` and the model (the public API is the ``api`` package)."""
    package = ROOT / "src" / "costsim"
    long = {
        str(path.relative_to(package)): count
        for path in package.rglob("*.py")
        if (count := len(path.read_text(encoding="utf-8").splitlines())) > 400
    }
    assert long == {}
    loose = sorted(path.name for path in package.glob("*.py"))
    assert loose == ["__init__.py", "__main__.py", "errors.py"]
