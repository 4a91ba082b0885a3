"""Each piece of a comparison's work is done once per run: every cassette read and hashed
once, every set of steps simulated once per cassette (attribution reuses the variants it
has), and the results are those of doing it all again."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from costsim import api
from costsim.api import work
from costsim.cli import cli
from costsim.engine import Engine
from costsim.io import store

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "cassettes"
SCENARIO = """\
name: once
cassettes: [cassettes/*.yaml]
variants:
  cut: [{truncation: {max_chars: 400, head: 100, tail: 100}}]
  cache: [caching]
  both:
    - {truncation: {max_chars: 400, head: 100, tail: 100}}
    - caching
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("COSTSIM_CACHE_DIR", str(tmp_path / "cache"))
    folder = tmp_path / "project"
    shutil.copytree(EXAMPLES, folder / "cassettes")
    (folder / "s.yaml").write_text(SCENARIO)
    return folder / "s.yaml"


def test_attribution_reuses_the_variants_it_has(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs: list[tuple[str, int]] = []
    real = Engine.run

    def counted(self: Engine, variant: Any, **kwargs: Any) -> Any:
        runs.append((variant.describe(), len(self.traces)))
        return real(self, variant, **kwargs)

    monkeypatch.setattr(Engine, "run", counted)
    result = api.compare(project, jobs=1, cache=False)
    # per batch (cut by the paths' names), each variant run once over all its cassettes: the
    # recording, cut, cache, both; "both" without a step is cut or cache, whose runs it reuses
    names = {name for name, _ in runs}
    assert len(names) == 4
    assert all(sum(n for name, n in runs if name == one) == 3 for one in names)
    variants = {v.variant.name: v for v in result.data.comparison.variants}
    both, cut, cache = variants["both"], variants["cut"], variants["cache"]
    assert both.delta.value is not None and cut.delta.value is not None
    assert cache.delta.value is not None
    # leave-one-out: each marginal is the delta without that step (another variant's own)
    assert list(both.attribution.values()) == [
        cache.delta.value - both.delta.value,  # without truncation: "cache" alone
        cut.delta.value - both.delta.value,  # without caching: "cut" alone
    ]


def test_each_cassette_is_read_parsed_and_hashed_once(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    parsed: list[Path] = []
    real_parse = work.trace_from_bytes

    def parse(path: Path, data: bytes) -> Any:
        parsed.append(path)
        return real_parse(path, data)

    hashed: list[int] = []
    real_digest = store.content_digest

    def digest(data: bytes) -> str:
        hashed.append(len(data))
        return real_digest(data)

    monkeypatch.setattr(work, "trace_from_bytes", parse)
    monkeypatch.setattr(store, "content_digest", digest)
    result = CliRunner().invoke(cli, ["compare", str(project), "--format", "json", "-j", "1"])
    assert result.exit_code == 0, result.output
    assert sorted(parsed) == sorted((project.parent / "cassettes").glob("*.yaml"))
    sizes = sorted(p.stat().st_size for p in (project.parent / "cassettes").glob("*.yaml"))
    # every cassette hashed once (the recalled output's check and key hash other things)
    assert all(hashed.count(size) == 1 for size in sizes)
    assert json.loads(result.stdout)["scenarios"][0]["variants"]
