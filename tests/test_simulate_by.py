"""``simulate --by``: the breakdown ``compare --by`` gives, without writing a scenario (a
trial: "a user coming from compare --by cassette has to write a scenario")."""

from __future__ import annotations

import json

import jsonschema
import pytest
from click.testing import CliRunner

from costsim.api._traffic import SIMULATE_BREAKDOWNS
from costsim.cli import _common, cli
from costsim.errors import ConfigError
from costsim.render.formats import KINDS
from tests.conftest import EXAMPLES
from tests.test_json_documents import _schema


def _simulate(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["simulate", str(EXAMPLES), "-s", "caching:ttl=1h", *args])
    return result.exit_code, result.stdout, result.stderr


def test_the_cli_offers_what_the_api_breaks_down_by() -> None:
    assert _common.SIMULATE_BREAKDOWNS == SIMULATE_BREAKDOWNS
    assert set(SIMULATE_BREAKDOWNS) == set(_common.BREAKDOWNS) - {"agent"}


@pytest.mark.parametrize("by", SIMULATE_BREAKDOWNS)
def test_each_breakdown_follows_the_table_and_is_in_the_json(by: str) -> None:
    code, text, _ = _simulate("--by", by)
    assert code == 0
    assert text.index("Δ cost") < text.index(f"By {by} (")
    code, out, _ = _simulate("--by", by, "--format", "json")
    document = json.loads(out)
    assert document["breakdown"]["by"] == by
    jsonschema.validate(document, _schema(KINDS["simulation"].schema))
    code, markdown, _ = _simulate("--by", by, "--format", "markdown")
    assert code == 0 and f"By {by}" in markdown


def test_by_model_adds_up_to_the_totals() -> None:
    """Hand check: the three models' baseline costs sum to the recording's $0.012051."""
    _, text, _ = _simulate("--by", "model")
    rows = text.split("By model (")[1].splitlines()[3:6]
    from decimal import Decimal

    total = sum(Decimal(row.split()[1].lstrip("$")) for row in rows)
    assert total == Decimal("0.012051")


def test_without_by_nothing_changes_and_agent_is_refused() -> None:
    code, out, _ = _simulate("--format", "json")
    assert "breakdown" not in json.loads(out)
    code, _, err = _simulate("--by", "agent")
    assert code == 2 and "'agent' is not one of" in err
    import costsim

    with pytest.raises(ConfigError, match="cannot break down by 'agent'"):
        costsim.simulate(str(EXAMPLES), "caching", by="agent")
