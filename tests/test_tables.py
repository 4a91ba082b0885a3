"""The tables every command prints, as a user at a terminal of 100 columns sees them.

Snapshots (``tests/__snapshots__/test_tables/``) make a format change a reviewed change:
``pytest tests/test_tables.py --snapshot-update`` rewrites them. On the real corpus, every
command's lines fit 100 columns, measured in bytes as ``awk`` measures them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from syrupy.assertion import SnapshotAssertion
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode

from costsim.cli import cli
from tests.conftest import ROOT

WIDTH = 100


class TextSnapshot(SingleFileSnapshotExtension):
    """One plain-text file per snapshot, readable in a diff."""

    _write_mode = WriteMode.TEXT
    file_extension = "txt"


@pytest.fixture
def text(snapshot: SnapshotAssertion) -> SnapshotAssertion:
    return snapshot.use_extension(TextSnapshot)


@pytest.fixture(autouse=True)
def _terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # paths are printed relative to the working folder
    monkeypatch.setenv("COLUMNS", str(WIDTH))


def _run(*args: str, code: int = 0) -> str:
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == code, result.output
    widest = max((len(line.encode()) for line in result.stdout.splitlines()), default=0)
    fits = "--wide" not in args and "markdown" not in args  # those are not cut, by design
    assert widest <= WIDTH or not fits, f"a line of {widest} bytes in costsim {' '.join(args)}"
    out: str = result.stdout
    return out


TABLES = {
    "compare_scenarios": ("compare", "scenarios"),
    "compare_by_agent": ("compare", "scenarios/orchestrator.yaml", "--by", "agent"),
    "compare_verbose": ("compare", "scenarios/bundled_examples.yaml", "-v"),
    "compare_wide": ("compare", "scenarios/bundled_examples.yaml", "--wide"),
    "simulate": ("simulate", "cassettes", "-s", "routing:default=claude-haiku-4-5 & caching"),
    "report": ("report", "cassettes"),
    "report_by_model": ("report", "cassettes", "--by", "model"),
    "cassettes_list": ("cassettes", "list", "cassettes"),
    "cassettes_check": ("cassettes", "check", "cassettes"),
    "check_cache": ("check-cache", "scenarios/cassettes"),
    "calibrate": ("calibrate", "cassettes"),
    "strategies": ("strategies",),
    "strategies_routing": ("strategies", "routing"),
}


@pytest.mark.parametrize("name", list(TABLES))
def test_table(name: str, text: SnapshotAssertion) -> None:
    assert _run(*TABLES[name]) == text


def test_markdown(text: SnapshotAssertion) -> None:
    assert _run("compare", "scenarios/bundled_examples.yaml", "--format", "markdown") == text


CORPUS_COMMANDS: dict[str, tuple[tuple[str, ...], int]] = {
    "report": (("report",), 0),
    "cassettes list": (("cassettes", "list"), 0),
    "cassettes check": (("cassettes", "check"), 1),
    "check-cache": (("check-cache",), 0),
    "calibrate": (("calibrate",), 0),
    "advise caching": (("advise", "caching"), 0),
}


@pytest.mark.parametrize("name", list(CORPUS_COMMANDS))
def test_corpus_output_fits_100_columns(name: str, corpus: Path, text: SnapshotAssertion) -> None:
    args, code = CORPUS_COMMANDS[name]
    out = _run(*args, "../shared/corpus", code=code)
    if name in ("check-cache", "calibrate"):  # short enough to review whole
        assert out == text


NARROW = [(name, width) for name in CORPUS_COMMANDS for width in (80, 60)]


@pytest.mark.parametrize(("name", "width"), NARROW)
def test_corpus_output_fits_narrow_terminals(
    name: str, width: int, corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Narrow, tables leave out or cut their least needed columns (calibrate: LOCO, pair
    counts, exact matches, then the increments' error; check-cache: the call's path from the
    left, then the model; report: hit rate and output) and a finding's file goes on its own
    line, rather than overflow (in bytes too)."""
    monkeypatch.setenv("COLUMNS", str(width))
    args, code = CORPUS_COMMANDS[name]
    result = CliRunner().invoke(cli, [*args, "../shared/corpus"])
    assert result.exit_code == code, result.output
    assert max(len(line.encode()) for line in result.stdout.splitlines()) <= width


@pytest.mark.parametrize("width", [60, 80])
def test_advise_leaves_a_column_out_rather_than_cut_a_figure(
    width: int, corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Narrow, advise's table leaves the re-simulated count out, and says so, rather than
    cut its p90 range mid-number ('+$0.2882 (-$3.1313 to …')."""
    monkeypatch.setenv("COLUMNS", str(width))
    result = CliRunner().invoke(cli, ["advise", "caching", "../shared/corpus"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    header = lines.index(next(line for line in lines if line.startswith("placement")))
    rows = lines[header + 2 : header + 7]
    assert [row.split()[0] for row in rows] == ["static", "static", "auto", "auto", "oracle"]
    for row in rows:
        assert "…" not in row and row.count("$") == 4, row  # cost, Δ, and both ends of p90
    after = " ".join(" ".join(lines[header + 7 :]).split())
    assert ("(left out to fit: re-simulated; --wide shows it)" in after) is (width < 80)


def test_compare_bundled_scenarios_fits_100_columns(tmp_path: Any) -> None:
    _run("compare", "scenarios", "-v")


@pytest.mark.parametrize("width", [60, 80])
def test_a_narrow_terminal_leaves_columns_out_and_says_which(
    width: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Below what cutting the variant names can reach, the least needed columns go first
    (calls, prompt, hit rate, Δ %, divergences); the answer's columns stay."""
    monkeypatch.setenv("COLUMNS", str(width))
    result = CliRunner().invoke(cli, ["compare", "scenarios/coding_agent.yaml", "--no-cache"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert max(len(line.encode()) for line in lines) <= width
    header = next(line for line in lines if line.startswith("variant"))
    for kept in ("cost", "Δ cost", "p90 band"):
        assert kept in header
    assert "calls" not in header.split()
    below = " ".join(" ".join(lines[lines.index(header) :]).split())
    assert "(left out to fit: calls, prompt" in below and "; --wide shows them)" in below


def test_a_table_that_fits_leaves_nothing_out() -> None:
    from costsim.render.text import Column, table

    columns = [Column("name", align="left"), Column("a", drop=1), Column("b")]
    rows = [["x", "1", "2"]]
    assert table(columns, rows, width=40) == ["name  a  b", "----  -  -", "x     1  2"]
    # too narrow for all three: "a" (droppable) goes, and the table says so
    assert table(columns, rows, width=8)[:3] == ["name  b", "----  -", "x     2"]
    assert " ".join(" ".join(table(columns, rows, width=8)[3:]).split()) == (
        "(left out to fit: a; --wide shows it)"
    )


def test_a_column_that_fits_is_not_cut_for_an_ellipsis_it_does_not_need() -> None:
    from costsim.render.text import Column, table

    columns = [Column("name", align="left", cut="right", min_width=4), Column("n")]
    rows = [["baseline (recorded)", "6"]]
    assert table(columns, rows, width=22)[2] == "baseline (recorded)  6"  # exactly 22
    cut = table(columns, rows, width=21)[2]  # one short: cut, with room for the ellipsis
    assert cut.endswith("…  6") and len(cut.encode()) <= 21


def test_paths_that_read_alike_cut_are_cut_apart() -> None:
    """Two files whose names end alike would both read ``…mixed_files[x].yaml`` cut from
    the left; they keep the part where they differ, between two ellipses, and still fit."""
    from costsim.render.text import Column, table

    shared = "tests__cassettes__Test{}MultimodalAnthropic.test_mixed_files[claude-haiku].yaml"
    rows = [[shared.format("Agent"), "2"], [shared.format("Crew"), "1"], ["short.yaml", "3"]]
    columns = [Column("cassette", align="left", cut="left", min_width=16), Column("calls")]
    lines = table(columns, rows, width=50)
    body = [line.split("  ")[0] for line in lines[2:]]
    assert len(set(body)) == 3  # apart
    assert "Agent" in body[0] and "Crew" in body[1] and body[2] == "short.yaml"
    assert all(cell.count("…") == 2 and cell.endswith(".yaml") for cell in body[:2])
    assert max(len(line.encode()) for line in lines) <= 50  # the second ellipsis fits too
    # the same paths in two folders: the folder is what parts them
    folders = [["c1/" + shared.format("Agent"), "2"], ["c2/" + shared.format("Agent"), "2"]]
    cut = [line.split("  ")[0] for line in table(columns, folders, width=50)[2:]]
    assert cut[0] != cut[1] and "c1/" in cut[0] and "c2/" in cut[1]


def test_paths_that_differ_in_two_places_are_still_cut_apart() -> None:
    """A trial on the corpus three times over (``c1/``, ``c2/``, ``c3/``): two files of one
    copy both read ``…/c1/pydanti…another_provider.yaml``, the window showing where they
    part from the other copies, not from each other."""
    from costsim.render.text import Column, table

    shared = "tests__cassettes__Test{}MultimodalAnthropic.test_mixed_files[claude-haiku].yaml"
    paths = [f"corpus/{c}/" + shared.format(kind) for c in ("c1", "c2") for kind in ("A", "B")]
    columns = [Column("cassette", align="left", cut="left", min_width=16), Column("calls")]
    lines = table(columns, [[path, "1"] for path in paths], width=50)
    body = [line.split("  ")[0] for line in lines[2:]]
    assert len(set(body)) == 4, body
    assert max(len(line.encode()) for line in lines) <= 50


@pytest.mark.parametrize("width", [70, 80, 90])
def test_alike_paths_with_letters_of_two_bytes_fit_in_bytes(
    width: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A path cut in the middle keeps its own two-byte letters beside its two ellipses: room
    is kept for both (rows were 81-82 bytes at 80), and the cuts still tell the paths apart."""
    from tests.conftest import EXAMPLES

    name = "Test{}MültimodalAnthropic.test_mixed_files[anthropic-claude-3-5-haiku-20241022].yaml"
    for kind in ("Crew", "Ägent"):
        (tmp_path / name.format(kind)).write_bytes(
            (EXAMPLES / "anthropic_support_agent.yaml").read_bytes()
        )
    monkeypatch.setenv("COLUMNS", str(width))
    result = CliRunner().invoke(cli, ["cassettes", "list", str(tmp_path)])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert max(len(line.encode()) for line in lines) <= width, lines
    body = [line.split("  ")[0] for line in lines if line.startswith("…")]
    assert len(body) == 2 and body[0] != body[1], body


def test_a_p90_range_whose_ends_read_alike_is_said_as_the_band_column_says_it() -> None:
    from decimal import Decimal
    from types import SimpleNamespace

    from costsim.analysis.spread import Band, Spread
    from costsim.render.band_text import delta_range

    def said(value: str, below: str, above: str, decimals: int) -> str:
        band = Band(Decimal(value), Spread(Decimal(below), Decimal(above)), estimated=True)
        return delta_range(SimpleNamespace(delta=band), decimals)  # type: ignore[arg-type]

    # a spread too small to show: not '+$0.00355 to +$0.00355'
    assert said("0.00355", "0.0000001", "0.0000002", 5) == "-<$0.00001/+<$0.00001"
    assert said("0.00355", "0", "0", 5) == "±<$0.00001"
    assert said("0.00355", "0.001", "0.002", 5) == "+$0.00255 to +$0.00555"


@pytest.fixture(scope="module")
def corpus_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One cache for the corpus breakdowns: the comparison is simulated once."""
    return tmp_path_factory.mktemp("corpus-cache")


@pytest.mark.parametrize("width", [100, 80, 60])
@pytest.mark.parametrize("by", ["cassette", "model", "tool"])
def test_corpus_breakdowns_fit(
    by: str, width: int, corpus: Path, corpus_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A breakdown of the corpus (902 cassettes, 44 models, tools of every project) lists its
    20 biggest rows and sums the others, in blocks of columns that fit, in bytes too (cut
    paths keep room for two ellipses; the headings and notes wrap); a comparison too long for
    the width cuts its variant names rather than overflow."""
    monkeypatch.setenv("COLUMNS", str(width))
    monkeypatch.setenv("COSTSIM_CACHE_DIR", str(corpus_cache))
    scenario = "benchmarks/corpus_scenario.yaml"
    args = ["compare", scenario, "--variant", "routing", "--variant", "caching-static"]
    result = CliRunner().invoke(cli, [*args, "--by", by])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert max(len(line.encode()) for line in lines) <= width
    assert sum(line.startswith("The ") and " others are the " in line for line in lines) == 1


def test_a_long_label_wraps_between_its_parameters_not_inside_a_name() -> None:
    """A trial: ``...tiers.standard=cl`` / ``aude-sonnet-4-5``: a label has no spaces, so it
    was broken mid-word. It breaks after a comma; a number's comma (1,234) holds."""
    from costsim.render.text import wrap

    label = (
        "r = routing:default=standard,tiers.heavy=claude-opus-4-1,"
        "tiers.light=claude-haiku-4-5,tiers.standard=claude-sonnet-4-5 (1,234,567 notes)"
    )
    assert wrap(label, 60) == [
        "r = routing:default=standard,tiers.heavy=claude-opus-4-1,",
        "  tiers.light=claude-haiku-4-5,",
        "  tiers.standard=claude-sonnet-4-5 (1,234,567 notes)",
    ]
    numbers = wrap("x " + "1,234,567,890 " * 5, 24)
    assert all(line.strip().startswith("1,234,567,890") for line in numbers[1:]), numbers


def test_a_column_with_nothing_to_say_is_left_out_first() -> None:
    """A trial: a lower-bound baseline has no Δ % (every cell ``-``), yet that column stayed
    while calls and prompt were left out to fit."""
    from costsim.render.text import Column, table

    columns = [
        Column("variant", align="left", cut="right", min_width=8),
        Column("calls", drop=5),
        Column("prompt", drop=4),
        Column("Δ %", drop=2),
    ]
    rows = [["baseline", "1,750", "3,584,329", ""], ["routing", "1,750", "4,586,144", "-"]]
    lines = table(columns, rows, width=30)
    assert lines[0].split() == ["variant", "calls", "prompt"]
    assert " ".join(" ".join(lines[4:]).split()) == "(left out to fit: Δ %; --wide shows it)"
    rows[1][3] = "-17.2%"  # something to say: the usual order
    lines = table(columns, rows, width=30)
    assert lines[0].split() == ["variant", "prompt", "Δ", "%"]
