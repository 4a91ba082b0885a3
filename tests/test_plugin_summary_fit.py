"""The plugin's summary on a terminal: long test ids cut where they keep what tells them apart,
headers stacked before figures are cut, and tests vcrpy could not serve named."""

from __future__ import annotations

import json
import shutil
from types import SimpleNamespace

import pytest

from costsim.plugin.ids import cut_test_ids
from costsim.plugin.run import SummaryOptions
from costsim.plugin.unserved import unserved_lines, unserved_tests
from costsim.render.text import fit_table
from tests.conftest import EXAMPLES, REPLAY

pytest_plugins = ["pytester"]

LONG = "tests/agents/test_support.py::test_support_agent_answers_customer_question_end_to_end"


def test_a_long_test_keeps_its_function_and_its_parameters() -> None:
    names = [f"{LONG}[refund_request_with_long_customer_history]", f"{LONG}[simple]"]
    assert cut_test_ids(names, 42) == [
        "test_support_age…th_long_customer_history]",  # 16 + … + 25
        "test_support_age…estion_end_to_end[simple]",
    ]


def test_a_test_whose_function_fits_loses_its_path_from_the_left() -> None:
    name = "tests/agents/deep/test_support.py::test_refund[a]"
    assert cut_test_ids([name], 30) == ["…st_support.py::test_refund[a]"]


def test_ids_that_would_read_alike_are_cut_from_the_left() -> None:
    # the middle cut keeps the start of the name and the end of the parameters: these two
    # differ only in the middle of theirs, so both are cut from the left, as before
    names = [f"{LONG}[case_one_with_a_long_tail_that_is_the_same]",
             f"{LONG}[case_two_with_a_long_tail_that_is_the_same]"]  # fmt: skip
    cut = cut_test_ids(names, 40)
    assert len(set(cut)) == 2 and all(c.startswith("…") for c in cut)


def test_short_ids_stay_whole() -> None:
    assert cut_test_ids(["test_a.py::test_x", "test_b.py::test_y"], 40) == [
        "test_a.py::test_x",
        "test_b.py::test_y",
    ]


def test_headers_are_stacked_before_the_first_column_is_cut() -> None:
    headers = ["test", "calls", "hit rate", "cache read", "cost"]
    rows = [["test_a.py::test_abcdefghijklmnop", "3", "38.9%", "1,024", "$0.0107"]]
    whole = fit_table(headers, rows, width=200)
    assert len(whole) == 3 and "hit rate" in whole[0]
    narrower = max(map(len, whole)) - 4
    stacked = fit_table(headers, rows, width=narrower)
    assert stacked[0].split() == ["hit", "cache"] and stacked[1].split()[1:3] == ["calls", "rate"]
    assert "test_a.py::test_abcdefghijklmnop" in stacked[3]  # nothing cut
    assert max(map(len, stacked)) <= narrower


def _report(nodeid: str, text: str) -> SimpleNamespace:
    return SimpleNamespace(nodeid=nodeid, longreprtext=text)


def test_tests_vcrpy_refused_are_named_once_each() -> None:
    refusal = "vcr.errors.CannotOverwriteExistingCassetteException: Can't overwrite ..."
    stats = {
        "failed": [_report("t.py::a", refusal), _report("t.py::b", "AssertionError")],
        "error": [_report("t.py::a", refusal), _report("t.py::c", refusal)],
        "passed": [_report("t.py::d", refusal)],
    }
    assert unserved_tests(stats) == ["t.py::a", "t.py::c"]
    lines = unserved_lines(stats, SummaryOptions(width=60))
    assert lines[0].startswith("not replayed: 2 tests failed on a request")
    assert all(len(line) <= 60 for line in lines)
    assert lines[-2:] == ["  t.py::a", "  t.py::c"]
    assert unserved_lines({"failed": [_report("t.py::b", "boom")]}, SummaryOptions()) == []


def test_a_long_refused_test_id_is_cut_to_the_width() -> None:
    name = "test_a.py::test_" + "a_really_long_name_" * 4 + "[customer_history_with_a_long_id]"
    stats = {"failed": [_report(name, "CannotOverwriteExistingCassetteException")]}
    lines = unserved_lines(stats, SummaryOptions(width=60))
    assert max(len(line.encode()) for line in lines) <= 60
    assert lines[-1].startswith("  test_a_really") and lines[-1].endswith("long_id]")


def test_many_refused_tests_are_capped_without_verbose() -> None:
    refusal = "CannotOverwriteExistingCassetteException"
    stats = {"failed": [_report(f"t.py::test[{i}]", refusal) for i in range(5)]}
    assert unserved_lines(stats, SummaryOptions())[-1] == "  and 2 more (-v)"
    every = unserved_lines(stats, SummaryOptions(verbose=1))
    assert [line for line in every if line.startswith("  t.py")] == [
        f"  t.py::test[{i}]" for i in range(5)
    ]


def test_a_run_whose_cassette_is_missing_says_which_test(pytester: pytest.Pytester) -> None:
    shutil.copy(EXAMPLES / "anthropic_support_agent.yaml", pytester.path / "agent.yaml")
    missing = (
        "\ndef test_missing():\n"
        "    with vcr.use_cassette('nowhere.yaml', record_mode='none'):\n"
        "        requests.post('https://api.anthropic.com/v1/messages', json={'model': 'x'})\n"
    )
    pytester.makepyfile(test_agent=REPLAY + "\ndef test_two():\n    _replay(2)\n" + missing)
    reports = ("out.json", "out.md", "out.html")
    result = pytester.runpytest("--costsim", *(f"--costsim-report={name}" for name in reports))
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        ["*LLM calls in 1 test*", "not replayed: 1 test failed on a request*", "*::test_missing"]
    )
    # the report files say so too (a trial's CI reader of out.md never learnt of it), and
    # none lists the files written beside it
    document = json.loads((pytester.path / "out.json").read_text())
    assert document["not_replayed"] == ["test_agent.py::test_missing"]
    for name in reports:
        text = (pytester.path / name).read_text()
        assert "not replayed: 1 test failed on a request" in text, name
        assert "test_agent.py::test_missing" in text and "report written" not in text, name
    result.stdout.fnmatch_lines(["report written: out.json", "report written: out.md"])


def test_too_narrow_for_an_id_beside_its_figures_puts_it_above(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three what-if columns at 60 columns left 12 characters of each test id; each id now
    has a line of its own above its figures, and every line fits, counted in bytes."""
    monkeypatch.setenv("COLUMNS", "60")
    shutil.copy(EXAMPLES / "anthropic_support_agent.yaml", pytester.path / "agent.yaml")
    pytester.makepyfile(
        test_agent_module=REPLAY
        + "\ndef test_all_three_calls_of_the_support_agent_end_to_end():\n    _replay(3)\n"
    )
    strategies = (
        "caching:ttl=1h, truncation:max_chars=6000&caching, routing:default=claude-haiku-4-5"
    )
    result = pytester.runpytest("--costsim", "--costsim-strategies", strategies)
    lines = result.stdout.lines
    start = next(i for i, line in enumerate(lines) if "costsim: LLM calls replayed" in line)
    end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("="))
    section = lines[start + 1 : end]
    assert max(len(line.encode()) for line in section) <= 60, "\n".join(section)
    at = next(i for i, line in enumerate(section) if "support_agent_end_to_end" in line)
    # the id keeps its whole function name (only the file is cut), its figures under it
    assert section[at] == "….py::test_all_three_calls_of_the_support_agent_end_to_end"
    assert section[at + 1].split() == ["4,193", "$0.010736", "$0.014853", "$0.010020", "$0.004638"]
    assert section[at + 1].startswith(" ")
    assert any(line.startswith("TOTAL ") for line in section)


def test_a_failure_of_a_long_test_id_fits_the_terminal() -> None:
    """A long parametrised id is one word, which wrapping never cuts: the line ran to 145
    bytes at 100 columns, with FAILED alone on the line before it."""
    from costsim.plugin.run import failure_lines

    test = "tests/test_channels.py::test_reply[" + "a_really_long_parameter_id_" * 4 + "x]"
    lines = failure_lines([f"{test}: cost_usd $0.0185 over the budget of $0.0100"], 60, every=False)
    assert max(len(line.encode()) for line in lines) <= 60
    assert lines[0].startswith("FAILED test_reply[") and lines[0].endswith("_x]:")
    assert " ".join(lines).endswith("cost_usd $0.0185 over the budget of $0.0100")


def test_a_money_column_has_one_number_of_decimals() -> None:
    """A trial's rows read $0.569573 and their TOTAL $1.9117: each money column now writes
    every amount with the same decimals (six while any is below a dollar)."""
    from decimal import Decimal

    from costsim.api.testing import TestCost
    from costsim.plugin.ranking import Listing
    from costsim.plugin.render import _rows

    costs = {
        "t.py::a": TestCost(calls=1, priced_cost_usd=Decimal("0.569573")),
        "t.py::b": TestCost(calls=1, priced_cost_usd=Decimal("1.342096")),
    }
    state = SimpleNamespace(what_if_costs={})
    rows = _rows(state, costs, Listing(list(costs), []), ["cost"], [], markdown=False)  # type: ignore[arg-type]
    assert [row[-1] for row in rows] == ["$0.569573", "$1.342096", "$1.911669"]
    big = {name: TestCost(calls=1, priced_cost_usd=Decimal("2.5")) for name in costs}
    rows = _rows(state, big, Listing(list(big), []), ["cost"], [], markdown=False)  # type: ignore[arg-type]
    assert [row[-1] for row in rows] == ["$2.5000", "$2.5000", "$5.0000"]


def test_the_html_reports_cost_columns_have_one_number_of_decimals() -> None:
    """The HTML report wrote each test's cost alone: $0.569573 above $1.3421."""
    from decimal import Decimal

    from costsim.api.testing import TestCost
    from costsim.render.html.testrun import TestRun, WhatIf, _tests_figure

    tests = {
        "t.py::a": TestCost(calls=1, priced_cost_usd=Decimal("0.569573")),
        "t.py::b": TestCost(calls=1, priced_cost_usd=Decimal("1.342096")),
    }
    what_if = {name: {"v": WhatIf(cost.priced_cost_usd * 2)} for name, cost in tests.items()}
    figure = _tests_figure(TestRun(tests, what_if, ["v"]))
    assert figure.table is not None
    costs = sorted((row[8].text, row[9].text) for row in figure.table.rows)
    assert costs == [("$0.569573", "$1.1391"), ("$1.342096", "$2.6842")]  # a column each


def test_a_what_if_change_is_said_as_compare_says_a_variant_s() -> None:
    """The legend's band of a saving: its ends written as compare writes them (a saving's
    band that reaches below nothing reads ``-$0.100000``, not ``$-0.100000``); it saves no
    more than the calls it changes cost (not the whole run); with an unpriced call its
    divergences are still said."""
    from dataclasses import replace
    from decimal import Decimal

    from costsim.analysis.spread import Spread
    from costsim.api.testing import TestCost, WhatIfCost
    from costsim.plugin.cells import what_if_change

    tests = TestCost(calls=4, priced_cost_usd=Decimal("1.000000"))
    wide = WhatIfCost(
        Decimal("0.900000"),
        change=Spread(Decimal("0.3"), Decimal("0.2")),
        divergences=2,
        change_estimated=True,
        touched=Decimal("0.5"),
    )
    assert what_if_change(wide, tests) == (
        ": saves $0.100000 (10.0%) of $1.000000, p90 band -$0.100000 to $0.400000; 2 divergences"
    )
    # the calls it changes cost $0.2: it cannot save more than that
    narrow = WhatIfCost(
        Decimal("0.900000"), change=wide.change, change_estimated=True, touched=Decimal("0.2")
    )
    assert what_if_change(narrow, tests).endswith("p90 band -$0.100000 to $0.200000")
    unpriced = WhatIfCost(Decimal("0.5"), unpriced_calls=1, divergences=1)
    assert what_if_change(unpriced, tests) == "; 1 divergence"
    # a call without a price in the tests' cost that the what-if bills alike: its unknown
    # cost cancels, the change is known (its share of an unknown cost is not)
    partly = TestCost(calls=4, priced_cost_usd=Decimal("1.000000"), unpriced_calls=1)
    alike = WhatIfCost(Decimal("0.900000"), unpriced_calls=1, delta=Decimal("-0.100000"))
    assert what_if_change(alike, partly) == ": saves $0.100000 of ≥$1.000000*, exact"
    assert what_if_change(replace(alike, delta=None), partly) == ""
    adds = WhatIfCost(
        Decimal("1.100000"),
        change=Spread(Decimal("0.05"), Decimal("0.05")),
        change_estimated=True,
    )
    assert what_if_change(adds, tests) == (
        ": adds $0.100000 (+10.0%), p90 Δ +$0.050000 to +$0.150000"
    )
    assert what_if_change(WhatIfCost(Decimal("1.000000")), tests) == (
        ": costs the same as the tests"
    )


def test_a_test_id_longer_than_a_line_is_cut_where_it_must_be() -> None:
    """Drift lines name whole test ids, wrapped between words; an id longer than the line
    itself is cut across lines (it ran 5 columns past a 100-column terminal)."""
    from costsim.plugin.run import wrap

    long_id = "test_replay.py::test_" + "a_rather_long_name_" * 5
    lines = wrap(f"  messages #0 changed (+2 chars): 2 calls (e.g. {long_id} (c.yaml #0))", 100)
    assert all(len(line) <= 100 for line in lines)
    assert "".join(line.strip() for line in lines).count("a_rather_long_name_") == 5
    short = wrap("  system changed: 2 calls in 1 test (e.g. tests/test_x.py::test_y (c #0))", 60)
    assert any(line.strip().startswith("tests/test_x.py::test_y") for line in short)


def test_the_total_row_counts_calls_without_flags() -> None:
    """A TOTAL of '19 (1 drifted, 1 errored)' made the calls column 25 wide and cut every
    test id at 100 columns (a trial's); the notes under the table count those calls, so the
    TOTAL writes the count alone, and a test's row keeps its flags."""
    from decimal import Decimal

    from costsim.api.testing import TestCost
    from costsim.plugin.cells import cells

    cost = TestCost(calls=19, drifted_calls=1, errored_calls=1, priced_cost_usd=Decimal("0.05"))
    assert cells(cost)["calls"] == "19 (1 drifted, 1 errored)"
    assert cells(cost, flags=False)["calls"] == "19"


def test_a_markdown_note_keeps_its_star() -> None:
    """'- * partial cost' rendered as a list in a list, its star lost."""
    from costsim.plugin.report_file import _literal_star

    assert (
        f"- {_literal_star('* partial cost: 1 call unpriced')}"
        == "- \\* partial cost: 1 call unpriced"
    )
    assert _literal_star("errored: 1 call") == "errored: 1 call"


def test_the_what_if_total_band_stops_at_nothing() -> None:
    """A trial's cut of 85% printed ``TOTAL p90 ±$0.571`` on a $0.193 total."""
    from decimal import Decimal

    from costsim.analysis.spread import Spread
    from costsim.api.testing import WhatIfCost
    from costsim.plugin.render import _what_if_band

    wide = WhatIfCost(Decimal("0.193"), spread=Spread.even(Decimal("0.571")))
    assert _what_if_band(wide) == "; TOTAL p90 -$0.193/+$0.571"
    even = WhatIfCost(Decimal("0.193"), spread=Spread.even(Decimal("0.05")))
    assert _what_if_band(even) == "; TOTAL p90 ±$0.0500"
