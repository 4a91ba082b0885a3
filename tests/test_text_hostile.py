"""What recordings name, as costsim shows it: a control character is an escape (never a
terminal's title, a bell or a row split in two), HTML in Markdown is text, a wide letter takes
its two columns, and a name of 10,000 characters is quoted cut, once a note."""

from __future__ import annotations

import json
import re
import unicodedata
from pathlib import Path

import pytest
from click.testing import CliRunner

from costsim.cli import cli
from tests.conftest import REPLAY, recorded_as

pytestmark = pytest.mark.usefixtures("columns_100")
pytest_plugins = ["pytester"]

HOSTILE = "x\x1b]0;pwned\x07\r\ny"
"""A model name that sets the terminal's title (OSC ... BEL) and splits its line (CR LF)."""
SHOWN = "x\\x1b]0;pwned\\x07\\r\\ny"
"""How costsim shows it."""
RAW = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
"""What a line of output never holds (its line feeds aside)."""
CJK = "claude-" + "日本語モデル名" * 8
"""A model name of 63 characters taking 103 columns."""


def _run(*args: str | Path, code: int = 0) -> str:
    result = CliRunner().invoke(cli, [str(arg) for arg in args])
    assert result.exit_code == code, result.output
    assert not RAW.search(result.stderr), repr(result.stderr)
    out: str = result.stdout
    return out


def _columns(line: str) -> int:
    """How many columns a terminal gives ``line`` (counted apart from costsim's own count)."""
    return sum(
        0
        if unicodedata.category(c) in ("Mn", "Me", "Cf")
        else 2
        if unicodedata.east_asian_width(c) in "WF"
        else 1
        for c in line
    )


def _cells(line: str) -> list[str]:
    """A Markdown table row's cells, split where a renderer splits them (an unescaped |)."""
    return re.split(r"(?<!\\)\|", line.strip().strip("|"))


# control characters


COMMANDS = {
    "report by model": ("report", "{}", "--by", "model", "-v"),
    "cassettes list": ("cassettes", "list", "{}"),
    "cassettes list --wide": ("cassettes", "list", "{}", "--wide"),
    "simulate": ("simulate", "{}", "-s", "routing:default=claude-haiku-4-5", "-v"),
}


@pytest.mark.parametrize("name", list(COMMANDS))
def test_control_characters_of_a_model_name_are_escapes_and_its_row_one_line(
    tmp_path: Path, name: str
) -> None:
    """OSC 0 (the terminal's title), BEL, CR and LF in a recorded model name reached the
    terminal raw: the title was set and the table's row split in two."""
    recorded_as(tmp_path, HOSTILE)
    args = [str(tmp_path) if arg == "{}" else arg for arg in COMMANDS[name]]
    out = _run(*args, "--no-cache")
    assert not RAW.search(out), repr(out)
    assert not any(line.startswith("y") for line in out.splitlines()), out  # no split row
    assert "x\\x1b]0;pwned" in out
    if name == "report by model":
        assert re.search(rf"^{re.escape(SHOWN)}\s+3\s", out, re.MULTILINE), out


def test_control_characters_of_a_file_name_are_escapes(tmp_path: Path) -> None:
    recorded_as(tmp_path, "no-such-model", name="a\x1b]0;t\x07\nb.yaml")  # check: unpriced
    for args in (("report",), ("cassettes", "list"), ("cassettes", "check", "--show-info")):
        out = _run(*args, tmp_path, "--no-cache", code=1 if "check" in args else 0)
        assert not RAW.search(out), repr(out)
        assert "a\\x1b]0;t\\x07\\nb.yaml" in out, out
        assert not any(line.startswith("b.yaml") for line in out.splitlines()), out


def test_a_markdown_row_holding_a_line_feed_stays_one_row(tmp_path: Path) -> None:
    recorded_as(tmp_path, HOSTILE)
    out = _run("report", tmp_path, "--by", "model", "--format", "markdown", "--no-cache")
    assert not RAW.search(out), repr(out)
    header = next(line for line in out.splitlines() if line.startswith("| model"))
    row = next(line for line in out.splitlines() if line.startswith("| x"))
    assert len(_cells(row)) == len(_cells(header)), row
    assert SHOWN.replace("]", "\\]") in row  # a bracket escaped: Markdown shows it as written


def test_baseline_compare_refuses_control_characters_and_escapes_markup(tmp_path: Path) -> None:
    """A saved baseline whose test id holds a control character is refused (pytest never
    writes one), in a sentence that shows it escaped; a test id with markup is an entity in
    Markdown, each regression one line."""

    def saved(path: Path, cost: str, name: str) -> Path:
        figures = {"calls": 1, "prompt_tokens": 10, "output_tokens": 1}
        figures |= {"priced_cost_usd": cost, "cost_usd": cost}
        document = {"format_version": 2, "kind": "costsim.baseline", "tests": {name: figures}}
        path.write_text(json.dumps(document))
        return path

    hostile = f"t.py::test_x[{HOSTILE}]"
    old, new = (
        saved(tmp_path / "old.json", "1.0", hostile),
        saved(tmp_path / "new.json", "2.0", hostile),
    )
    result = CliRunner().invoke(cli, ["baseline", "compare", str(old), str(new)])
    assert result.exit_code == 2 and "control character" in result.stderr
    assert not RAW.search(result.stderr), repr(result.stderr)
    markup = "t.py::test_<b>bold</b>"
    old, new = saved(tmp_path / "a.json", "1.0", markup), saved(tmp_path / "b.json", "2.0", markup)
    markdown = _run("baseline", "compare", old, new, "--format", "markdown", code=1)
    assert "<b>" not in markdown and "t.py::test_&lt;b&gt;bold&lt;/b&gt;: cost rose" in markdown


def test_json_keeps_the_name_exact_and_escapes_what_a_terminal_acts_on(tmp_path: Path) -> None:
    """JSON writes C0 as escapes itself; DEL, C1 (U+009B starts a sequence as ESC [ does) and
    a bidirectional override were written raw. Now as \\u escapes: the same strings."""
    name = HOSTILE + "\x7f\x9b31m\u202e"
    recorded_as(tmp_path, name)
    out = _run("report", tmp_path, "--by", "model", "--format", "json", "--no-cache")
    assert not RAW.search(out), repr(out)
    assert "\\u009b31m" in out
    assert [u["model"] for u in json.loads(out)["unpriced"]] == [name] * 2


def test_a_warning_on_stderr_shows_a_file_name_s_control_characters_as_escapes(
    tmp_path: Path,
) -> None:
    recorded_as(tmp_path, "claude-sonnet-4-5")
    (tmp_path / "bad\x1b]0;t\x07.yaml").write_text("interactions: [1, 2")
    result = CliRunner().invoke(cli, ["report", str(tmp_path), "--lenient", "--no-cache"])
    assert result.exit_code == 0, result.output
    assert "bad\\x1b]0;t\\x07.yaml" in result.stderr and not RAW.search(result.stderr)


# Markdown


def test_markdown_shows_html_of_a_recording_as_text(tmp_path: Path) -> None:
    """A Markdown report pasted into a pull request ran a recorded <script>; a | split its
    cell; a recorded &lt; showed as <."""
    recorded_as(tmp_path, "<script>alert(1)</script>|&lt;x")
    out = _run("report", tmp_path, "--by", "model", "--format", "markdown", "--no-cache")
    assert "<script>" not in out and "</script>" not in out
    shown = "&lt;script&gt;alert(1)&lt;/script&gt;\\|&amp;lt;x"
    row = next(line for line in out.splitlines() if shown in line)
    header = next(line for line in out.splitlines() if line.startswith("| model"))
    assert len(_cells(row)) == len(_cells(header)), row
    assert f"model '{shown.replace(chr(92), '')}'" in out  # the note too (| is no cell there)


def test_markdown_shows_a_recorded_link_or_image_as_text(tmp_path: Path) -> None:
    """A model name ``[docs](https://evil.example)`` was a link in the pasted report, and
    ``![x](https://evil.example/pixel.png)`` an image fetched by everyone who read it."""
    recorded_as(tmp_path, "m![x](https://evil.example/p.png)[docs](https://evil.example)")
    out = _run("report", tmp_path, "--by", "model", "--format", "markdown", "--no-cache")
    shown = "m!\\[x\\](https://evil.example/p.png)\\[docs\\](https://evil.example)"
    assert shown in next(line for line in out.splitlines() if line.startswith("| m!"))
    assert f"model '{shown}'" in out  # the note too
    assert re.search(r"(?<!\\)\]\(", out) is None  # no bracket left to open a link


def test_markdown_brackets_stay_as_written_in_code_spans() -> None:
    from costsim.render.visible import markdown_lines

    assert markdown_lines("| `[]` | [1] |") == "| `[]` | \\[1\\] |"
    assert markdown_lines("\\[x\\](u)") == "\\\\\\[x\\\\\\](u)"  # a backslash cannot undo it
    # an escaped backtick opens no code span (CommonMark): the link in it was left active
    assert markdown_lines("\\`![x](http://e/i.png)\\`") == "\\`!\\[x\\](http://e/i.png)\\`"
    assert markdown_lines("\\\\`[k]`") == "\\\\`[k]`"  # an escaped backslash: a span
    assert markdown_lines("`open [x](u)") == "`open \\[x\\](u)"  # never closed: text


def test_markdown_keeps_a_stack_of_strategies_as_it_is_written(tmp_path: Path) -> None:
    """A label pastes back into -s: its & is not an entity."""
    recorded_as(tmp_path, "claude-sonnet-4-5")
    scenario = tmp_path / "s.yaml"
    scenario.write_text(
        f"name: s\ncassettes: [{tmp_path}/agent.yaml]\nvariants: {{both: [truncation, caching]}}\n"
    )
    out = _run("compare", scenario, "--format", "markdown", "--no-cache")
    assert "both = truncation & caching" in out


def test_a_backslash_before_a_pipe_does_not_end_a_markdown_cell() -> None:
    from costsim.render.visible import markdown_cell

    assert markdown_cell("a|b") == "a\\|b"
    assert markdown_cell("a\\|b") == "a\\\\\\|b"  # \\ is a backslash, \| a pipe
    assert markdown_cell("a\nb") == "a\\nb"


# wide letters


def test_a_wide_model_name_keeps_its_row_aligned(tmp_path: Path) -> None:
    """A model named claude- and 56 CJK letters was cut to 16 characters that took 31
    columns: its row was shifted by 15."""
    recorded_as(tmp_path, CJK)
    recorded_as(tmp_path, "claude-sonnet-4-5", name="b.yaml")
    out = _run("report", tmp_path, "--by", "model", "--no-cache")
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("model"))
    table = lines[start : start + 5]
    assert all(_columns(line) <= 100 and len(line.encode()) <= 100 for line in lines)
    ends = {_columns(line[: line.index(" 3 ") + 2]) for line in table[2:4]}
    assert len(ends) == 1, table  # the calls column ends at the same column on every row
    assert ends == {_columns(table[0][: table[0].index("calls") + 5])}, table
    assert "日本語" in table[2] + table[3]


def test_a_note_quoting_a_wide_name_wraps_to_the_width_not_to_20_characters(
    tmp_path: Path,
) -> None:
    """The note was wrapped to 20 characters a line (room kept for two bytes more a wide
    letter, over the whole note): 8 lines for one name."""
    recorded_as(tmp_path, CJK)
    out = _run("report", tmp_path, "--no-cache")
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if "genai-prices has no price" in line)
    note = lines[start : next(i for i in range(start, len(lines)) if "(2 calls)" in lines[i]) + 1]
    assert len(note) <= 4 and all(len(line.encode()) <= 100 for line in note), note
    assert CJK in "".join(line.strip() for line in note)


def test_a_table_pads_and_cuts_cells_by_their_columns() -> None:
    from costsim.render.text import Column, table

    rows = [[CJK, "1"], ["claude-e\u0301e\u0301", "22"], ["plain", "333"]]
    lines = table([Column("model", align="left", cut="right"), Column("n")], rows, width=30)
    assert {_columns(line) for line in lines[:2] + lines[2:]} == {_columns(lines[1])}
    assert all(len(line.encode()) <= 30 for line in lines)
    assert lines[2].startswith("claude-日本") and "…" in lines[2]


def test_the_plugin_s_table_pads_wide_test_ids_by_their_columns() -> None:
    from costsim.render.text import fit_table

    rows = [["t.py::test_日本語", "1", "$0.01"], ["t.py::test_x", "12", "$1.00"]]
    lines = fit_table(["test", "calls", "cost"], rows, width=100)
    assert len({_columns(line) for line in lines}) == 1, lines


def test_visible_escapes_what_a_terminal_acts_on_and_nothing_else() -> None:
    from costsim.render.visible import visible

    assert visible(HOSTILE) == SHOWN
    assert visible("\x7f\x9b\u202e\u2028\t") == "\\x7f\\x9b\\u202e\\u2028\\t"
    kept = "claude-日本語 é … Δ ≥ \u200d"
    assert visible(kept) == kept


# the pytest plugin


def test_the_plugin_s_summary_and_markdown_report_show_a_recorded_name_as_text(
    pytester: pytest.Pytester,
) -> None:
    """The plugin's Markdown report (pasted into pull requests) ran a recorded <script>; its
    terminal summary rang BEL and set the terminal's title. (In a process of its own: a run
    in this one would leave costsim's modules it imported as second copies.)"""
    recorded_as(pytester.path, "<script>alert(1)</script>" + HOSTILE)
    pytester.makepyfile(test_agent=REPLAY + "\ndef test_日本語():\n    _replay(2)\n")
    result = pytester.runpytest_subprocess("--costsim", "--costsim-report", "out.md")
    result.assert_outcomes(passed=1)
    summary = result.stdout.str()
    assert not RAW.search(summary), repr(summary)
    assert SHOWN in summary
    rows = [line for line in summary.splitlines() if line.startswith(("test_agent.py::", "TOTAL"))]
    assert len(rows) == 2 and _columns(rows[0]) == _columns(rows[1]), rows  # aligned
    markdown = (pytester.path / "out.md").read_text()
    assert not RAW.search(markdown), repr(markdown)
    assert "<script>" not in markdown and "&lt;script&gt;alert(1)&lt;/script&gt;" in markdown


def test_html_shows_a_recorded_control_character_as_its_escape(tmp_path: Path) -> None:
    """An HTML page written to a terminal (``--format html`` without ``-o``) set its title:
    the recorded ESC ] 0 ; ... BEL went into the page as it was."""
    recorded_as(tmp_path, HOSTILE)
    out = _run("report", tmp_path, "--by", "model", "--format", "html", "--no-cache")
    assert not RAW.search(out.replace("\n", "")), repr(RAW.search(out.replace("\n", "")))
    assert SHOWN.replace("\\r\\n", "") in out.replace("\\r\\n", "")
