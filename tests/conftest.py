from __future__ import annotations

# Imported before any in-process pytester run: pytester removes the modules a run imported
# once it ends, and what outlives the run (a process pool's pickling, libyaml's C parser)
# then meets a second copy of their classes ("it's not the same object as ...", "could not
# determine a constructor for the tag None").
import concurrent.futures.process  # noqa: F401
import os
from pathlib import Path

import pytest
import vcr.serializers.yamlserializer  # noqa: F401
import yaml  # noqa: F401

import costsim.api.pipeline  # the run functions a pool pickles (in api.work), as above
import costsim.api.work  # noqa: F401
from costsim.strategies.registry import strategies

strategies()  # every strategy module, with the classes a pool pickles (a test's order no
# longer decides whether an in-process pytester run imports them first, and takes them away)

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus"
EXAMPLES = ROOT / "cassettes"

REPLAY = """
import json

import requests
import vcr
import yaml

with open("agent.yaml") as f:
    RECORDED = [json.loads(i["request"]["body"]) for i in yaml.safe_load(f)["interactions"]]

def _replay(n, change=None):
    with vcr.use_cassette("agent.yaml", record_mode="none"):
        for body in RECORDED[:n]:
            requests.post("https://api.anthropic.com/v1/messages", json=(change or dict)(body))
"""
"""A test module's head that replays the bundled agent cassette's first ``n`` calls through vcrpy
and requests (``change`` rewrites each request body first)."""


@pytest.fixture(scope="session")
def corpus() -> Path:
    """The real-cassette corpus beside the project; tests using it skip when it is absent."""
    if not (CORPUS / "MANIFEST.tsv").is_file():
        pytest.skip(f"real cassette corpus not found at {CORPUS} (only present in development)")
    return CORPUS


collect_ignore = ["installed"]
"""A user's project for the install smoke test (tests/installed/smoke.py runs it)."""


@pytest.fixture(autouse=True, scope="session")
def _cache_folder(tmp_path_factory: pytest.TempPathFactory) -> None:
    """costsim's cache (.costsim_cache) goes to a folder of the test session, not the repo."""
    os.environ.setdefault("COSTSIM_CACHE_DIR", str(tmp_path_factory.mktemp("costsim_cache")))


@pytest.fixture
def columns_100(monkeypatch: pytest.MonkeyPatch) -> None:
    """A terminal of 100 columns, whatever the one running the tests (CLI output fits it)."""
    monkeypatch.setenv("COLUMNS", "100")


def said(output: str, pattern: str) -> bool:
    """``output`` holds ``pattern`` (an fnmatch pattern) once its lines are joined: costsim
    wraps what it says to the terminal, so a sentence may span lines."""
    import fnmatch

    return fnmatch.fnmatchcase(" ".join(output.split()), pattern)


def recorded_as(folder: Path, model: str, name: str = "agent.yaml") -> Path:
    """The bundled agent cassette (three calls, the last an error) recorded with ``model``,
    written to ``folder / name``: a model name as a hostile recording may hold it."""
    import json

    def escaped(text: str) -> str:  # inside a JSON string inside a single-quoted YAML one
        return json.dumps(text)[1:-1].replace("'", "''")

    text = (EXAMPLES / "anthropic_support_agent.yaml").read_text()
    text = text.replace("claude-sonnet-4-5-20250929", escaped(model))
    text = text.replace('"claude-sonnet-4-5"', f'"{escaped(model)}"')
    path = folder / name
    path.write_text(text)
    return path
