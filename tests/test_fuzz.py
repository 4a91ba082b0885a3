"""Fuzzing in the suite: a few hundred seeded mutants, every command, no failure of any kind.

Mutants come from the project's own seed cassettes and, when the real corpus is present, a
fixed sample of it. Each mutant is run through ``report``, ``cassettes check`` and
``simulate -s caching``: the outcome must be a report or a one-sentence refusal, never a
traceback, and never a silently wrong total (see tests/fuzz/check.py). The long run (10,000
mutants, with crash and hang detection in subprocesses) is benchmarks/fuzz_cassettes.py.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from tests.conftest import CORPUS
from tests.fuzz.check import baseline_totals, check_mutant
from tests.fuzz.mutate import MUTATORS, mutants, sample_sources
from tests.fuzz.seeds import write_seeds

SEED = 1414
MUTANTS = 400


@pytest.fixture(scope="module")
def sources(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    seeds = write_seeds(tmp_path_factory.mktemp("seeds"))
    if (CORPUS / "MANIFEST.tsv").is_file():
        seeds += sample_sources(CORPUS, 24, SEED, max_bytes=60_000)
    return seeds


def test_mutants_never_crash_or_go_silently_wrong(sources: list[Path], tmp_path: Path) -> None:
    baselines = {path: baseline_totals(path) for path in sources}
    failures: list[str] = []
    classes: Counter[str] = Counter()
    for mutant in mutants(sources, MUTANTS, SEED):
        path = tmp_path / mutant.name
        path.write_bytes(mutant.data)
        commands = ("report", "check", "simulate") if mutant.index % 2 == 0 else ("report",)
        outcome = check_mutant(path, baselines[mutant.source], commands)
        classes[mutant.mutator] += 1
        if outcome.status != "ok":
            failures.append(
                f"{mutant.name} from {mutant.source.name}: {outcome.status} in "
                f"{outcome.command}: {outcome.detail}"
            )
        path.unlink()
    assert failures == []
    assert set(classes) == set(MUTATORS)  # every class of mutation was exercised
