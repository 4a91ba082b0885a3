"""Recalled output (:mod:`costsim.api.recall`): ``costsim compare`` run again on the same
inputs prints, byte for byte, what the full run printed (stdout, warnings, exit code), and any
change to what the output depends on runs it again."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from costsim import api
from costsim.cli import cli
from costsim.render import paths
from tests.conftest import EXAMPLES

DATA = Path(__file__).parent / "data"
SCENARIO = DATA / "examples_scenario.yaml"


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("COSTSIM_CACHE_DIR", str(folder))
    monkeypatch.setenv("COLUMNS", "100")
    return folder


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A scenario over copies of the example cassettes (so that a test may change them)."""
    folder = tmp_path / "project"
    shutil.copytree(EXAMPLES, folder / "cassettes")
    text = SCENARIO.read_text().replace("../../cassettes", "cassettes")
    (folder / "scenario.yaml").write_text(text)
    return folder / "scenario.yaml"


class Runs:
    """Counts the comparisons actually computed (not recalled)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        real = api.compare_scenarios

        def counted(*args: Any, **kwargs: Any) -> Any:
            self.count += 1
            return real(*args, **kwargs)

        monkeypatch.setattr(api, "compare_scenarios", counted)


@pytest.fixture
def runs(monkeypatch: pytest.MonkeyPatch) -> Runs:
    return Runs(monkeypatch)


def _compare(*args: str | Path) -> Any:
    return CliRunner().invoke(cli, ["compare", *map(str, args)])


def _outputs(folder: Path) -> list[Path]:
    return sorted(folder.rglob("*.out"))


@pytest.mark.parametrize("fmt", ["table", "json", "markdown", "html"])
def test_a_second_run_prints_what_the_first_printed(
    cache_dir: Path, project: Path, runs: Runs, fmt: str
) -> None:
    plain = _compare(project, "--format", fmt, "--no-cache")
    first = _compare(project, "--format", fmt)
    second = _compare(project, "--format", fmt)
    assert runs.count == 2  # the --no-cache run and the first: the second is recalled
    assert plain.exit_code == first.exit_code == second.exit_code == 0
    assert second.stdout == first.stdout == plain.stdout
    assert len(_outputs(cache_dir)) == 1


def test_broken_gates_and_warnings_are_recalled(cache_dir: Path, project: Path, runs: Runs) -> None:
    (project.parent / "cassettes" / "broken.yaml").write_text("interactions: [{request: 1}]\n")
    first = _compare(project, "--fail-over", "1", "--lenient")
    second = _compare(project, "--fail-over", "1", "--lenient")
    assert runs.count == 1
    assert first.exit_code == second.exit_code == 1
    assert "over the limit of +1%" in second.stderr
    assert "warning: skipped " in second.stderr and "broken.yaml" in second.stderr
    assert (second.stdout, second.stderr) == (first.stdout, first.stderr)


def test_every_input_of_the_output_is_in_its_key(
    cache_dir: Path, project: Path, runs: Runs, monkeypatch: pytest.MonkeyPatch
) -> None:
    _compare(project)
    cassette = sorted((project.parent / "cassettes").glob("*.yaml"))[0]
    cassette.write_bytes(cassette.read_bytes() + b"\n# re-recorded\n")
    _compare(project)  # a cassette's bytes
    (project.parent / "cassettes" / "new.yaml").write_bytes(cassette.read_bytes())
    _compare(project)  # a new cassette the patterns match
    project.write_text(project.read_text().replace("rolling: 2", "rolling: 1"))
    wide = _compare(project)  # the scenario
    _compare(project, "--by", "model")  # an option
    _compare(project, "-v")  # the layout
    monkeypatch.setenv("COLUMNS", "60")
    narrow = _compare(project)
    assert runs.count == 7
    assert narrow.stdout != wide.stdout
    assert narrow.stdout == _compare(project, "--no-cache").stdout
    assert runs.count == 8


def test_a_corrupt_or_foreign_entry_is_ignored_and_replaced(
    cache_dir: Path, project: Path, runs: Runs
) -> None:
    first = _compare(project, "--format", "json")
    (entry,) = _outputs(cache_dir)
    good = entry.read_bytes()
    header, _, text = good.partition(b"\n")
    for bad in (b"", b"{}\n", header + b"\n" + text[:-1] + b"!", b"\x00" * 100):
        entry.write_bytes(bad)
        again = _compare(project, "--format", "json")
        assert again.exit_code == 0
        assert again.stdout == first.stdout
        assert entry.read_bytes() == good
    assert runs.count == 5


def test_a_strategy_from_elsewhere_is_never_recalled(
    cache_dir: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from costsim.strategies import registry

    class Outside:
        name = "outside"

    assert api.comparison_key([project], options=(), layout=()) is not None
    monkeypatch.setitem(registry.STRATEGIES, "outside", Outside())
    assert api.comparison_key([project], options=(), layout=()) is None


def test_a_scenario_that_does_not_read_cleanly_is_reported_by_the_full_run(
    cache_dir: Path, tmp_path: Path
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: bad\ncassettes: [nothing/*.yaml]\nvariants: {a: [caching]}\n")
    assert api.comparison_key([bad], options=(), layout=()) is None
    result = _compare(bad)
    assert result.exit_code == 2
    assert "matches no file" in result.stderr
    assert not _outputs(cache_dir)


def test_a_link_pointed_elsewhere_is_not_recalled(
    cache_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Output shows resolved paths and agent roles match by them: a symbolic link moved to
    another folder (or to another agent file) changes the output, so it is in the key."""
    folder = tmp_path / "linked"
    folder.mkdir()
    # paths are shown relative to the working folder when near it (else as written): work
    # beside the files, whatever folder the test run started in
    monkeypatch.chdir(folder)
    for name in ("v1", "v2"):
        shutil.copytree(EXAMPLES, folder / name)
    (folder / "cur").symlink_to("v1")
    scenario = folder / "s.yaml"
    scenario.write_text("name: linked\ncassettes: [cur/*.yaml]\nvariants: {a: [caching]}\n")
    args = ("--by", "cassette", "--format", "json")
    before = _compare(scenario, *args)
    (folder / "cur").unlink()
    (folder / "cur").symlink_to("v2")
    paths._display.cache_clear()  # display paths are resolved once per process
    after = _compare(scenario, *args)
    assert after.stdout == _compare(scenario, *args, "--no-cache").stdout
    assert "v2/" in after.stdout and "v2/" not in before.stdout

    first, second = sorted(EXAMPLES.glob("*.yaml"))[:2]
    (folder / "roles").mkdir()
    (folder / "roles" / "support.yaml").symlink_to(f"../v1/{first.name}")
    agents = folder / "agents.yaml"
    agents.write_text(
        "name: roles\ncassettes: [v1/*.yaml]\n"
        "agents: {support: {cassettes: [roles/support.yaml]}}\nvariants: {a: [caching]}\n"
    )
    by_agent = _compare(agents, "--by", "agent")
    (folder / "roles" / "support.yaml").unlink()
    (folder / "roles" / "support.yaml").symlink_to(f"../v1/{second.name}")
    moved = _compare(agents, "--by", "agent")
    assert moved.stdout == _compare(agents, "--by", "agent", "--no-cache").stdout
    assert moved.stdout != by_agent.stdout


def test_an_input_changed_during_the_run_is_not_kept(
    cache_dir: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The key is worked out again after the run: output made from a cassette that changed
    meanwhile is printed, but not kept for the inputs as they were before."""
    cassette = sorted((project.parent / "cassettes").glob("*.yaml"))[0]
    original = cassette.read_bytes()
    real = api.compare_scenarios

    def rerecorded_meanwhile(*args: Any, **kwargs: Any) -> Any:
        cassette.write_bytes(original + b"\n# re-recorded meanwhile\n")
        return real(*args, **kwargs)

    monkeypatch.setattr(api, "compare_scenarios", rerecorded_meanwhile)
    _compare(project)
    assert not _outputs(cache_dir)


@pytest.mark.parametrize("fmt", ["table", "json"])
def test_text_kept_on_disk_in_small_blocks_is_written_and_recalled_whole(
    cache_dir: Path, project: Path, runs: Runs, monkeypatch: pytest.MonkeyPatch, fmt: str
) -> None:
    from costsim.io import spool

    plain = _compare(project, "--format", fmt, "--no-cache").stdout
    assert "Δ" in plain or fmt == "json"  # a character of two bytes, cut between blocks
    monkeypatch.setattr(spool, "_IN_MEMORY", 64)  # on disk, read back 7 bytes at a time
    monkeypatch.setattr(spool, "_BLOCK", 7)
    written = project.parent / f"out.{'json' if fmt == 'json' else 'txt'}"
    first = _compare(project, "--format", fmt, "-o", written)
    assert first.exit_code == 0 and written.read_text() == plain
    assert _compare(project, "--format", fmt).stdout == plain  # recalled, block by block
    assert runs.count == 2


def test_an_entry_sealed_with_another_length_is_ignored(
    cache_dir: Path, project: Path, runs: Runs
) -> None:
    from costsim.io.seal import SEAL_LENGTH, sealed

    first = _compare(project)
    (entry,) = _outputs(cache_dir)
    header, _, text = entry.read_bytes()[:-SEAL_LENGTH].partition(b"\n")
    entry.write_bytes(sealed(header + b"\n" + text + b" more"))  # sealed, but longer
    assert _compare(project).stdout == first.stdout
    assert runs.count == 2
