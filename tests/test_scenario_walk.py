"""A scenario's cassette patterns and folders it cannot read: a glob (``**`` or not) and a
folder's walk passed over such a folder in silence, so a comparison left its cassettes out
and said nothing. It is now what ``report`` says of it: an error, or with ``--lenient`` a
warning (the listing is refused here as the file system refuses it to a user, whoever runs
the tests)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from costsim import api
from costsim.errors import WalkError
from tests.conftest import EXAMPLES

ONE = EXAMPLES / "anthropic_support_agent.yaml"
OTHER = EXAMPLES / "openai_chat_streaming.yaml"


def _refuse(monkeypatch: pytest.MonkeyPatch, closed: Path) -> None:
    listing = os.scandir

    def refused(path: Any = ".") -> Any:
        if Path(os.fsdecode(path)).resolve() == closed.resolve():
            raise PermissionError(13, "Permission denied", os.fsdecode(path))
        return listing(path)

    monkeypatch.setattr(os, "scandir", refused)


def _layout(tmp_path: Path) -> Path:
    """cassettes/open/one.yaml and cassettes/closed/other.yaml; returns the closed one."""
    (tmp_path / "cassettes" / "open").mkdir(parents=True)
    (tmp_path / "cassettes" / "closed").mkdir()
    shutil.copy(ONE, tmp_path / "cassettes" / "open" / "one.yaml")
    shutil.copy(OTHER, tmp_path / "cassettes" / "closed" / "other.yaml")
    return tmp_path / "cassettes" / "closed"


@pytest.mark.parametrize(
    "pattern",
    [
        pytest.param("cassettes", id="a-folder"),
        pytest.param("cassettes/**/*.yaml", id="a-recursive-glob"),
        pytest.param("cassettes/*/*.yaml", id="a-glob-through-folders"),
        pytest.param("cassettes/*", id="a-glob-matching-folders"),
    ],
)
def test_a_folder_a_scenario_cannot_read_is_an_error_or_a_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pattern: str
) -> None:
    closed = _layout(tmp_path)
    scenario = tmp_path / "s.yaml"
    scenario.write_text(f'name: s\ncassettes: ["{pattern}"]\nvariants: {{a: [caching]}}\n')
    whole = api.compare(scenario, jobs=1, cache=False)
    assert whole.data.comparison.baseline.llm_calls == 4  # readable: both cassettes (3 + 1 calls)
    _refuse(monkeypatch, closed)
    with pytest.raises(WalkError, match=r"closed: the folder cannot be read \(Permission denied"):
        api.compare(scenario, jobs=1, cache=False)
    lenient = api.compare(scenario, jobs=1, cache=False, lenient=True)
    assert lenient.data.comparison.baseline.llm_calls == 3
    assert lenient.warnings == (
        f"{closed}: the folder cannot be read (Permission denied): any cassettes in it are "
        "left out",
    )


def test_a_glob_in_a_folder_it_cannot_read_says_so_not_that_nothing_matches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``closed/*.yaml`` matched nothing: the scenario was refused as matching no file."""
    closed = _layout(tmp_path)
    scenario = tmp_path / "s.yaml"
    scenario.write_text(
        'name: s\ncassettes: ["cassettes/open/*.yaml", "cassettes/closed/*.yaml"]\n'
        "variants: {a: [caching]}\n"
    )
    _refuse(monkeypatch, closed)
    with pytest.raises(WalkError, match="closed: the folder cannot be read"):
        api.compare(scenario, jobs=1, cache=False)
    assert (
        api.compare(scenario, jobs=1, cache=False, lenient=True).data.comparison.baseline.llm_calls
        == 3
    )


def test_readable_folders_add_nothing_to_what_a_scenario_reads(tmp_path: Path) -> None:
    """Hidden folders stay out of ``**`` (as glob leaves them) and no folder is listed."""
    _layout(tmp_path)
    (tmp_path / "cassettes" / ".hidden").mkdir()
    shutil.copy(ONE, tmp_path / "cassettes" / ".hidden" / "h.yaml")
    scenario = tmp_path / "s.yaml"
    scenario.write_text('name: s\ncassettes: ["cassettes/**/*.yaml"]\nvariants: {a: [caching]}\n')
    compared = api.compare(scenario, jobs=1, cache=False)
    assert compared.data.comparison.baseline.llm_calls == 4
    assert compared.warnings == ()


def test_an_error_names_a_cassette_by_its_path_not_through_the_scenario_s_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``Error: scenarios/../tests/cassettes/x.yaml: ...`` named the file through the folder
    of the scenario that listed it."""
    from click.testing import CliRunner

    from costsim.cli import cli

    (tmp_path / "scenarios").mkdir()
    (tmp_path / "cassettes").mkdir()
    (tmp_path / "cassettes" / "bad.yaml").write_text("interactions: [\n")
    (tmp_path / "scenarios" / "s.yaml").write_text(
        'name: s\ncassettes: ["../cassettes/*.yaml"]\nvariants: {a: [caching]}\n'
    )
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["compare", "scenarios", "--no-cache", "-j1"])
    assert result.exit_code == 2
    assert result.stderr.startswith("Error: cassettes/bad.yaml: line 2: is not valid YAML")
