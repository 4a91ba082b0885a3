"""A regression gate on a recording whose cost is only bounded says why it is bounded.

A trial on the corpus (its 14 LLM-looking interactions costsim cannot meter make every total a
lower bound) read "at least $32.0650: 0 of its calls have no price": a contradiction, where
the bound came from the interactions left out.
"""

from __future__ import annotations

from decimal import Decimal
from types import SimpleNamespace
from typing import Any

import pytest

from costsim.scenario.budgets import _regression


def _summary(unpriced: int, left_out: int) -> Any:
    baseline = SimpleNamespace(
        cost_usd=None,
        priced_cost=Decimal("32.065"),
        unpriced_calls=unpriced,
        left_out_calls=left_out,
    )
    return SimpleNamespace(
        variant=SimpleNamespace(name="caching-auto"),
        delta=SimpleNamespace(value=Decimal("3.8322")),
        baseline=baseline,
        totals=SimpleNamespace(cost_usd=None),
    )


@pytest.mark.parametrize(
    ("unpriced", "left_out", "said"),
    [
        (0, 14, "14 LLM-looking interactions costsim cannot meter, in no sum"),
        (1, 0, "1 of its calls has no price"),
        (2, 1, "2 of its calls have no price; 1 LLM-looking interaction costsim cannot meter"),
    ],
)
def test_the_bound_is_explained_by_what_makes_it(unpriced: int, left_out: int, said: str) -> None:
    (failure,) = _regression(_summary(unpriced, left_out), 5.0, None)
    assert "up to +12.0% of the recording (at least $32.0650: " in failure
    assert said in failure
    assert "0 of its calls" not in failure


def test_a_budget_and_fail_over_that_say_the_same_say_it_once(tmp_path: Any) -> None:
    """A trial: ``--fail-over 0`` beside a scenario budget of 0% printed the same gate line
    twice."""
    from click.testing import CliRunner

    from costsim.cli import cli
    from tests.conftest import EXAMPLES

    scenario = tmp_path / "b.yaml"
    scenario.write_text(
        f"name: b\ncassettes: ['{EXAMPLES}/*.yaml']\nvariants:\n  c1h: ['caching:ttl=1h']\n"
        "budgets:\n  c1h: {max_regression_pct: 0}\n"
    )
    result = CliRunner().invoke(cli, ["compare", str(scenario), "--fail-over", "0"])
    assert result.exit_code == 1, result.output
    lines = [line for line in result.stderr.splitlines() if "variant 'c1h'" in line]
    assert len(lines) == 1, result.stderr
