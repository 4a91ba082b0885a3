"""Baselines: the file format, tolerances, regression checks and ``costsim baseline compare``."""

from __future__ import annotations

import dataclasses
import json
import re
from decimal import Decimal
from pathlib import Path

import pytest
from click.testing import CliRunner

from costsim.analysis.baseline import (
    TestCost,
    compare_baselines,
    load_baseline,
    parse_tolerances,
    save_baseline,
)
from costsim.cli import cli
from costsim.errors import ConfigError, InputError


def _cost(prompt: int, cost: str | None = "0.10", output: int = 50) -> TestCost:
    """A test's figures; ``cost`` None: one call is unpriced (priced part $0.04)."""
    return TestCost(
        calls=2,
        prompt_tokens=prompt,
        uncached_input_tokens=prompt,
        output_tokens=output,
        priced_cost_usd=Decimal("0.04") if cost is None else Decimal(cost),
        unpriced_calls=1 if cost is None else 0,
    )


def test_save_and_load_round_trip(tmp_path: Path) -> None:
    tests = {"t::a": _cost(1000), "t::b": _cost(5, None)}
    path = tmp_path / ".costsim" / "main.json"
    save_baseline(path, tests)
    document = json.loads(path.read_text())
    assert document["format_version"] == 2 and document["kind"] == "costsim.baseline"
    assert document["tests"]["t::a"]["cost_usd"] == "0.10"  # money stays a decimal string
    assert document["tests"]["t::b"]["cost_usd"] is None  # unpriced: never $0 ...
    assert document["tests"]["t::b"]["priced_cost_usd"] == "0.04"  # ... the priced part kept
    assert document["tests"]["t::b"]["unpriced_calls"] == 1
    assert load_baseline(path) == tests
    assert not list(path.parent.glob("*.tmp*"))  # written atomically, nothing left behind


def test_a_version_2_file_reads_and_a_test_costsim_cannot_meter_writes_version_3(
    tmp_path: Path,
) -> None:
    """The review: a test with calls costsim cannot meter saves ``cost_usd`` null and
    ``unrecognised_calls``; a costsim that reads version 2 called such a file malformed, so
    it is version 3. Version 2 files (no such field) read as they did."""
    path = tmp_path / "b.json"
    entry = {"calls": 1, "cost_usd": "0.10", "priced_cost_usd": "0.10"}
    path.write_text(
        json.dumps({"kind": "costsim.baseline", "format_version": 2, "tests": {"t::a": entry}})
    )
    (read,) = load_baseline(path).values()
    assert read.cost_usd == Decimal("0.10") and read.unrecognised_calls == 0
    unmetered = TestCost(calls=2, priced_cost_usd=Decimal("0.01"), unrecognised_calls=2)
    save_baseline(path, {"t::b": unmetered})
    document = json.loads(path.read_text())
    assert document["format_version"] == 3
    assert document["tests"]["t::b"]["unrecognised_calls"] == 2
    assert document["tests"]["t::b"]["cost_usd"] is None
    assert load_baseline(path) == {"t::b": unmetered}


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (
            "{not json",
            "not valid JSON (Expecting property name enclosed in double quotes at line 1",
        ),
        ('{"kind": "something else"}', "not a costsim baseline file"),
        (
            '{"kind": "costsim.baseline", "format_version": 99, "tests": {}}',
            "format_version 99 was written by a newer costsim (this one reads 1, 2, 3); "
            "upgrade costsim",
        ),
        (
            '{"kind": "costsim.baseline", "format_version": 0, "tests": {}}',
            "format_version 0 is not one costsim reads (1, 2, 3)",
        ),
        (
            '{"kind": "costsim.baseline", "format_version": 1, "tests": []}',
            "no 'tests' mapping",
        ),
        (
            '{"kind": "costsim.baseline", "format_version": 1, "tests": {"t": {"cost_usd": "x"}}}',
            "malformed test entry",
        ),
    ],
)
def test_a_bad_baseline_is_an_input_error_naming_the_file(
    tmp_path: Path, content: str, message: str
) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(InputError, match=re.escape(message)) as error:
        load_baseline(path)
    assert str(path) in str(error.value)


def test_tolerances_parse_and_reject_nonsense() -> None:
    assert parse_tolerances("cost:5%, prompt_tokens:10") == {"cost": 5.0, "prompt_tokens": 10.0}
    # the cost as budgets and reports name it (--costsim-fail cost_usd:5% was refused)
    assert parse_tolerances("cost_usd:5%") == {"cost": 5.0}
    with pytest.raises(ConfigError, match="unknown metric 'tokens'"):
        parse_tolerances("tokens:5%")
    with pytest.raises(ConfigError, match="is not METRIC:PCT"):
        parse_tolerances("cost=5")


def test_compare_regressions_improvements_new_and_gone() -> None:
    old = {"t::grew": _cost(1000), "t::shrank": _cost(1000), "t::gone": _cost(10)}
    new = {
        "t::grew": _cost(1060, "0.11"),
        "t::shrank": _cost(900, "0.09"),
        "t::new": _cost(10),
    }
    result = compare_baselines(old, new, {"prompt_tokens": 5.0, "cost": 20.0})
    assert result.regressions == [
        "t::grew: prompt_tokens rose +6.0% (1,000 -> 1,060), over the tolerance of 5%"
    ]
    assert result.improvements == ["t::shrank: cost $0.100000 -> $0.090000"]
    assert (result.new_tests, result.missing_tests) == (["t::new"], ["t::gone"])
    loose = compare_baselines(
        old, new, {"prompt_tokens": 5.0}, overrides={"t::grew": {"prompt_tokens": 7.0}}
    )
    assert loose.regressions == []


def test_compare_from_zero() -> None:
    old = {"t::a": _cost(0, "0")}
    new = {"t::a": _cost(10, "0.01")}
    result = compare_baselines(old, new, {"prompt_tokens": 5.0, "cost": 5.0})
    assert result.regressions == [
        "t::a: cost rose from 0 to $0.010000",
        "t::a: prompt_tokens rose from 0 to 10",
    ]


def test_an_improvement_resting_on_estimates_says_so() -> None:
    """A drifted call is metered as sent, simulated; a call without usage, estimated: a
    cheaper figure resting on them says so (a trial's TTL change, no token estimated, read
    "within the estimate's error")."""
    old = {"t::a": _cost(1317, "0.001517"), "t::b": _cost(1000, "0.002")}
    drifted = dataclasses.replace(_cost(1337, "0.001490"), drifted_calls=1)
    new = {
        "t::a": drifted,
        "t::b": dataclasses.replace(_cost(1000, "0.0015"), unrecorded_calls=2),
    }
    assert compare_baselines(old, new, {"cost": 5.0}).improvements == [
        "t::a: cost $0.001517 -> $0.001490 (1 call sent changed: simulated)",
        "t::b: cost $0.002000 -> $0.001500 (2 calls recorded without usable usage: estimated)",
    ]


def test_a_regression_resting_on_estimates_says_so() -> None:
    """A trial: a cassette whose usage no longer added up was estimated, and the gate failed
    at +106.6% without a word of it (the table's ``2 (2 est.)`` was far above)."""
    old = {"t::a": _cost(2374, "0.001516")}
    new = {"t::a": dataclasses.replace(_cost(2374, "0.003132"), unrecorded_calls=2)}
    assert compare_baselines(old, new, {"cost": 5.0}).regressions == [
        "t::a: cost rose +106.6% ($0.001516 -> $0.003132), over the tolerance of 5% "
        "(2 calls recorded without usable usage: estimated)"
    ]


def test_a_cost_gate_on_an_unpriced_test_falls_back_to_its_tokens() -> None:
    """+21% prompt tokens on a test whose model has no price: the cost gate cannot see it,
    so it gates the tokens at the same tolerance instead, and says so."""
    old = {"t::u": _cost(1000, None), "t::p": _cost(1000)}
    new = {"t::u": _cost(1210, None), "t::p": _cost(1210)}
    result = compare_baselines(old, new, {"cost": 5.0})
    assert result.regressions == [
        "t::u: prompt_tokens rose +21.0% (1,000 -> 1,210), over the tolerance of 5%"
    ]  # t::p's cost did not change: its cost gate passes
    assert result.notes == [
        "t::u: cost not compared (1 unpriced call); gated on prompt_tokens:5%, "
        "output_tokens:5% instead"
    ]
    custom = compare_baselines(old, new, {"cost": 5.0}, unpriced_fallback={"prompt_tokens": 25})
    assert custom.regressions == []
    assert custom.notes == [
        "t::u: cost not compared (1 unpriced call); gated on prompt_tokens:25% instead"
    ]
    newly = compare_baselines(
        {"t::p": _cost(1000)}, {"t::p": _cost(1000, None, output=60)}, {"cost": 5.0}
    )
    assert newly.regressions == [
        "t::p: output_tokens rose +20.0% (50 -> 60), over the tolerance of 5%"
    ]


def test_version_1_baselines_still_read(tmp_path: Path) -> None:
    path = tmp_path / "old.json"
    entries = {"t::a": {"calls": 1, "cost_usd": "0.5"}, "t::b": {"calls": 1, "cost_usd": None}}
    path.write_text(json.dumps({"kind": "costsim.baseline", "format_version": 1, "tests": entries}))
    loaded = load_baseline(path)
    assert loaded["t::a"].cost_usd == Decimal("0.5")
    assert (loaded["t::b"].cost_usd, loaded["t::b"].unpriced_calls) == (None, 1)


def test_cli_compare_exit_codes(tmp_path: Path) -> None:
    save_baseline(tmp_path / "old.json", {"t::a": _cost(1000)})
    save_baseline(tmp_path / "new.json", {"t::a": _cost(1100)})
    runner = CliRunner()
    args = ["baseline", "compare", str(tmp_path / "old.json"), str(tmp_path / "new.json")]
    passed = runner.invoke(cli, [*args, "--fail", "prompt_tokens:15%"])
    assert passed.exit_code == 0 and "no regression" in passed.output
    failed = runner.invoke(cli, [*args, "--fail", "prompt_tokens:5%"])
    assert failed.exit_code == 1
    assert "t::a: prompt_tokens rose +10.0% (1,000 -> 1,100)" in failed.output
    (tmp_path / "new.json").write_text("[]")
    broken = runner.invoke(cli, args)
    assert broken.exit_code == 2 and "new.json: not a costsim baseline file" in broken.output
    assert "Traceback" not in broken.output


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"cost_usd": "NaN"}, "cost_usd must be a decimal string"),
        ({"cost_usd": 0.1}, "cost_usd must be a decimal string"),
        ({"calls": "abc"}, "calls must be a whole number"),
        ({"prompt_tokens": None}, "prompt_tokens must be a whole number"),
        ({"output_tokens": -3}, "output_tokens must be a whole number"),
        ({"unpriced": "x"}, "unpriced must be a list of strings"),
    ],
)
def test_hostile_baseline_values_name_the_test_and_field(
    tmp_path: Path, entry: dict[str, object], message: str
) -> None:
    path = tmp_path / "base.json"
    document = {"kind": "costsim.baseline", "format_version": 1, "tests": {"t::a": entry}}
    path.write_text(json.dumps(document))
    with pytest.raises(InputError, match=re.escape(f"malformed test entry 't::a': {message}")):
        load_baseline(path)


def test_a_rise_just_over_its_tolerance_does_not_read_as_the_tolerance() -> None:
    """A trial read "rose +2.0% ..., over the tolerance of 2%" for a 2.03% rise."""
    result = compare_baselines(
        {"t::a": _cost(10_000)}, {"t::a": _cost(10_203)}, {"prompt_tokens": 2.0}
    )
    assert result.regressions == [
        "t::a: prompt_tokens rose +2.03% (10,000 -> 10,203), over the tolerance of 2%"
    ]


def _priced(count: int, each: str = "0.004454") -> dict[str, TestCost]:
    return {f"t::{i}": _cost(100, each) for i in range(count)}


def _unpriced_baselines(folder: Path) -> None:
    """11 priced tests and one with an unpriced call, as a new user's trial had them."""
    save_baseline(folder / "main.json", {**_priced(11), "t::u": _cost(100, None)})
    save_baseline(folder / "pr.json", {**_priced(11, "0.004636"), "t::u": _cost(100, None)})


def test_baseline_list_shows_a_partial_cost_as_its_priced_part(tmp_path: Path) -> None:
    """It showed ``unpriced`` for a baseline 11 of whose 12 tests are priced (the plugin had
    shown ``≥$0.049000*``)."""
    _unpriced_baselines(tmp_path)
    save_baseline(tmp_path / "none.json", {"t::u": _cost(100, None)})
    (tmp_path / "none.json").write_text(
        (tmp_path / "none.json").read_text().replace('"0.04"', '"0"')
    )
    result = CliRunner().invoke(cli, ["baseline", "list", "--dir", str(tmp_path)])
    rows = {
        cells[0]: cells[3]
        for line in result.stdout.splitlines()
        if (cells := line.split()) and cells[0] in ("main", "none", "pr")
    }
    assert rows == {"main": "≥$0.088994*", "none": "unpriced", "pr": "≥$0.090996*"}
    text = " ".join(result.stdout.split())
    assert "* partial cost: the priced part, a lower bound" in text
    assert "main has 1 unpriced call in 1 test of 12; pr has 1 unpriced call in 1 test" in text
    listed = CliRunner().invoke(
        cli, ["baseline", "list", "--dir", str(tmp_path), "--format", "json"]
    )
    document = json.loads(listed.stdout)
    main = document["baselines"][0]
    assert (main["cost_usd"], main["priced_cost_usd"], main["unpriced_calls"]) == (
        None,
        "0.088994",
        1,
    )


def test_compare_with_an_unpriced_test_totals_the_tests_priced_in_both(tmp_path: Path) -> None:
    """``baseline compare`` said "total cost unknown -> unknown." when one test of twelve had
    an unpriced call; now it totals the tests priced in both and says how many it left out,
    and its JSON carries that total."""
    _unpriced_baselines(tmp_path)
    args = ["baseline", "compare", "main", "pr", "--dir", str(tmp_path)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    text = " ".join(result.stdout.split())
    assert (
        "no regression beyond tolerance (cost:5%), 0 improvements; the 11 tests priced in both "
        "cost $0.048994 -> $0.050996 (+4.1%); 1 test with unpriced calls left out." in text
    )
    total = json.loads(CliRunner().invoke(cli, [*args, "--format", "json"]).stdout)["total"]
    assert total == {
        "old_cost_usd": None,
        "new_cost_usd": None,
        "compared_tests": 11,
        "unpriced_tests": 1,
        "before_usd": "0.048994",
        "after_usd": "0.050996",
        "change_usd": "0.002002",
        "change_pct": pytest.approx(4.086, abs=1e-3),
    }


def test_a_regression_carries_its_figures_beside_its_sentence(tmp_path: Path) -> None:
    """JSON consumers parsed the prose of ``regressions``; each now has its test, metric,
    figures and limit beside it."""
    save_baseline(tmp_path / "old.json", {"t::a": _cost(1000, "0.10"), "t::z": _cost(0, "0")})
    save_baseline(tmp_path / "new.json", {"t::a": _cost(1100, "0.12"), "t::z": _cost(5, "0")})
    args = ["baseline", "compare", "old", "new", "--dir", str(tmp_path)]
    result = CliRunner().invoke(
        cli, [*args, "--fail", "cost:5%,prompt_tokens:20", "--format", "json"]
    )
    assert result.exit_code == 1
    document = json.loads(result.stdout)
    assert document["regression_details"] == [
        {
            "test": "t::a",
            "metric": "cost",
            "before": "0.10",
            "after": "0.12",
            "limit_pct": 5.0,
            "change_pct": pytest.approx(20.0),
            "message": document["regressions"][0],
        },
        {
            "test": "t::z",
            "metric": "prompt_tokens",
            "before": 0,
            "after": 5,
            "limit_pct": 20.0,
            "change_pct": None,
            "message": "t::z: prompt_tokens rose from 0 to 5",
        },
    ]
    assert document["regressions"][0].startswith("t::a: cost rose +20.0%")
    assert document["total"]["change_usd"] == "0.02"
