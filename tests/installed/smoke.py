"""Smoke test of costsim as a user installs it: run it with any Python that has costsim.

    python3 tests/installed/smoke.py --python VENV/bin/python [--with recording,xdist,async]

Checks, one line each (exit 1 if any fails):
- plain ``pytest`` on a trivial suite passes and prints nothing from costsim;
- ``pytest --costsim`` on that suite passes;
- ``pytest --costsim`` on a project that replays cassettes through the anthropic SDK (plain
  vcrpy; plus pytest-recording's ``@pytest.mark.vcr``, pytest-xdist ``-n 2`` and pytest-asyncio
  with an async streaming client when named in ``--with``) passes and meters every call with
  exactly the recorded usage;
- a budget the replay exceeds fails that run with exit 1, saying so, without a traceback;
- ``costsim --version`` and ``python -m costsim --help`` run.

Standard library only: it runs outside the environment it tests.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

PROJECT = Path(__file__).parent / "project"

EXPECTED = {
    "test_vcrpy.py::test_message": (14, 5),
    "test_vcrpy.py::test_stream": (21, 11),
}
"""Each replay test: (prompt tokens, output tokens) its cassette recorded."""
OPTIONAL = {
    "recording": {"test_recording.py::test_marked": (14, 5)},
    "async": {"test_async.py::test_async_stream": (21, 11)},
    "openai": {"test_openai.py::test_responses_stream": (17, 4)},
}


class Smoke:
    def __init__(self, python: Path) -> None:
        self.python = python.absolute()  # not resolved: a venv's python is a symlink
        self.failed = False

    def check(self, name: str, problem: str | None) -> None:
        print(f"{name:<44} {'ok' if problem is None else 'FAILS: ' + problem}")
        self.failed = self.failed or problem is not None

    def run(self, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.python), *args], cwd=cwd, capture_output=True, text=True, check=False
        )


def _tail(result: subprocess.CompletedProcess[str]) -> str:
    lines = (result.stdout + result.stderr).strip().splitlines()
    found = [line for line in lines if "INTERNALERROR" in line or "Error" in line]
    return f"exit {result.returncode}: " + ((found or lines or [""])[-1])[:200]


def trivial_suite(smoke: Smoke, folder: Path) -> None:
    folder.mkdir()
    (folder / "test_ok.py").write_text("def test_ok():\n    assert True\n")
    (folder / "pytest.ini").write_text("[pytest]\n")
    plain = smoke.run("-m", "pytest", "-q", "-p", "no:cacheprovider", cwd=folder)
    problem = None if plain.returncode == 0 else _tail(plain)
    if problem is None and "costsim" in plain.stdout + plain.stderr:
        problem = "costsim printed something in a run without --costsim"
    smoke.check("plain pytest, costsim installed", problem)
    on = smoke.run("-m", "pytest", "-q", "-p", "no:cacheprovider", "--costsim", cwd=folder)
    smoke.check("pytest --costsim, no LLM calls", None if on.returncode == 0 else _tail(on))


def replay_suite(smoke: Smoke, folder: Path, extras: set[str], *args: str) -> None:
    label = " ".join(["pytest --costsim", *args]).strip()
    shutil.copytree(PROJECT, folder)
    result = smoke.run(
        "-m", "pytest", "-p", "no:cacheprovider", "--costsim", "--costsim-report",
        "out.json", *args, cwd=folder,
    )  # fmt: skip
    if result.returncode != 0:
        smoke.check(label, _tail(result))
        return
    expected = dict(EXPECTED)
    for extra in extras:
        expected.update(OPTIONAL.get(extra, {}))
    tests = json.loads((folder / "out.json").read_text())["tests"]
    problems = []
    for test, (prompt, output) in expected.items():
        entry = tests.get(test)
        if entry is None:
            problems.append(f"{test} not metered")
            continue
        got = (entry["calls"], entry["prompt_tokens"], entry["output_tokens"])
        if got != (1, prompt, output) or entry["drifted_calls"] or entry["cost_usd"] is None:
            problems.append(f"{test}: {got}, drifted {entry['drifted_calls']}, {entry['cost_usd']}")
    smoke.check(label, "; ".join(problems) or None)


def gate_suite(smoke: Smoke, folder: Path) -> None:
    """A budget the replay goes over fails the run (exit 1), saying so, without a traceback
    (pytest 7 has no ``Config.get_verbosity``: the failure lines used to raise there)."""
    shutil.copytree(PROJECT, folder)
    (folder / "pyproject.toml").write_text(
        '[tool.costsim]\nbudgets = [{ pattern = "*::test_message", prompt_tokens = 1 }]\n'
    )
    result = smoke.run(
        "-m", "pytest", "-p", "no:cacheprovider", "--costsim", "test_vcrpy.py", cwd=folder
    )  # fmt: skip
    said = result.stdout + result.stderr
    ok = (
        result.returncode == 1
        and "costsim: the run fails" in said
        and "prompt_tokens 14 over the budget of 1" in said
        and "Traceback" not in said
        and "INTERNALERROR" not in said
    )
    smoke.check("pytest --costsim, a budget exceeded", None if ok else _tail(result))


def cli(smoke: Smoke, folder: Path) -> None:
    script = smoke.python.parent / "costsim"
    version = subprocess.run(
        [str(script), "--version"], capture_output=True, text=True, check=False
    )
    ok = version.returncode == 0 and "version" in version.stdout
    smoke.check("costsim --version", None if ok else _tail(version))
    module = smoke.run("-m", "costsim", "--help", cwd=folder)
    ok = module.returncode == 0 and "Usage: costsim" in module.stdout
    smoke.check("python -m costsim --help", None if ok else _tail(module))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", type=Path, default=Path(sys.executable))
    parser.add_argument("--with", dest="extras", default="", help="recording,xdist,async,openai")
    options = parser.parse_args()
    extras = {name for name in options.extras.split(",") if name}
    smoke = Smoke(options.python)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        trivial_suite(smoke, root / "trivial")
        replay_suite(smoke, root / "replay", extras)
        gate_suite(smoke, root / "gate")
        if "xdist" in extras:
            replay_suite(smoke, root / "replay-xdist", extras, "-n", "2")
        cli(smoke, root)
    return 1 if smoke.failed else 0


if __name__ == "__main__":
    sys.exit(main())
