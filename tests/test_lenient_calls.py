"""``--lenient`` and one unreadable call in a cassette that reads: only that call is left out.

A status-200 response holding a gateway's HTML page made the whole cassette unreadable, so
``--lenient`` dropped its good calls too ("No LLM calls reported: the only cassette was
unreadable and skipped"), while the same interaction with an empty body was estimated and the
pytest plugin marked only that one call. Strict runs still stop, however the cache was filled.
"""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from costsim import api
from costsim.cli import cli
from costsim.errors import InteractionError
from tests.test_hostile_input import interaction, write_yaml

HTML = "<html><body><h1>502 Bad Gateway</h1></body></html>"


def _mixed(folder: Path) -> Path:
    """Interaction 0 and 2 good; interaction 1 a 200 whose body is a gateway's HTML page."""
    broken = interaction()
    broken["response"]["body"]["string"] = HTML
    return write_yaml(folder / "mixed.yaml", [interaction(), broken, interaction()])


def _run(*args: str | Path) -> Any:
    return CliRunner().invoke(cli, [str(arg) for arg in args])


@pytest.mark.parametrize("cache", [False, True], ids=["no-cache", "cache"])
def test_only_the_unreadable_call_is_left_out_and_strict_runs_still_stop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cache: bool
) -> None:
    monkeypatch.setenv("COSTSIM_CACHE_DIR", str(tmp_path / "cache"))
    path = _mixed(tmp_path)
    flags = [] if cache else ["--no-cache"]
    for _ in range(2):  # the second run reads what the first kept, if anything
        lenient = _run("report", path, "--lenient", "--format", "json", *flags)
        assert lenient.exit_code == 0, lenient.output
        document = json.loads(lenient.stdout)
        assert document["totals"]["llm_calls"] == 2
        # the call left out is in no sum: the cost is unknown, its priced part a lower bound
        assert document["totals"]["left_out_calls"] == 1
        assert document["totals"]["cost_usd"] is None
        assert Decimal(document["totals"]["priced_cost_usd"]) > 0
        (note,) = [n for n in document["notes"] if n["interaction"] == 1]
        assert "left out of the totals (--lenient)" in note["message"]
        strict = _run("report", path, *flags)
        assert strict.exit_code == 2
        assert "interaction 1: response body is not valid JSON" in strict.stderr
    text = _run("report", path, "--lenient", *flags)
    assert text.stdout.startswith("2 LLM calls in 1 cassette: ≥$")
    assert "* 1 LLM-looking interaction costsim cannot meter: in no sum" in text.stdout
    assert "1 LLM-looking interaction not metered" in text.stdout
    assert "interaction 1: response body is not valid JSON" in text.stderr  # a warning too
    for command in (
        ["simulate", path, "-s", "caching"],
        ["advise", "caching", path],
        ["calibrate", path],
    ):
        said = _run(*command, "--lenient", *flags)
        assert said.exit_code == 0, (command, said.output)
        assert "only that call is left out (--lenient)" in said.stderr, command
        assert "skipped" not in said.stderr, command  # the file was read, not skipped


def test_a_comparison_keeps_the_cassette_s_good_calls(tmp_path: Path) -> None:
    path = _mixed(tmp_path)
    scenario = tmp_path / "s.yml"
    scenario.write_text(f"name: s\ncassettes: ['{path.name}']\nvariants: {{a: [caching]}}\n")
    with pytest.raises(InteractionError, match="interaction 1"):
        api.compare(scenario, jobs=1)
    compared = api.compare(scenario, jobs=1, lenient=True)
    baseline = compared.data.comparison.baseline
    assert baseline.llm_calls == 2 and baseline.left_out_calls == 1
    assert baseline.cost_usd is None  # the call left out makes the cost a lower bound
    (variant,) = compared.data.comparison.variants
    assert variant.totals.left_out_calls == 1 and variant.delta.value is not None
    # said as a skipped file is (it left out nothing else), every run, cached or not
    (said,) = compared.skipped
    assert said.error == (
        f"{path}: interaction 1: response body is not valid JSON (Expecting value at line 1 "
        "column 1): only that call is left out (--lenient)"
    )
    assert api.compare(scenario, jobs=1, lenient=True).skipped == compared.skipped
    with pytest.raises(InteractionError, match="interaction 1"):
        api.compare(scenario, jobs=1)  # the lenient run's comparison is not a strict one's
    (tmp_path / "good").mkdir()
    alone = write_yaml(tmp_path / "good" / "good.yaml", [interaction(), interaction()])
    lenient = api.report(path, lenient=True).totals
    assert api.report(alone).totals.cost_usd == lenient.priced_cost > Decimal(0)
    assert baseline.priced_cost == lenient.priced_cost and lenient.cost_usd is None


@pytest.mark.parametrize("encoding", ["gzip", "deflate", "br"])
def test_a_body_that_cannot_be_decompressed_loses_only_its_call(
    tmp_path: Path, encoding: str
) -> None:
    """One response of three stored as corrupt compressed data: ``--lenient`` dropped the
    whole cassette, its two good calls ($0.0087 in a trial) with it."""
    broken = interaction(response=b"\xde\xad\xbe\xef" * 8)
    broken["response"]["headers"]["Content-Encoding"] = [encoding]
    path = write_yaml(tmp_path / "one_corrupt.yaml", [interaction(), broken, interaction()])
    lenient = _run("report", path, "--lenient", "--format", "json", "--no-cache")
    assert lenient.exit_code == 0, lenient.output
    document = json.loads(lenient.stdout)
    assert document["totals"]["llm_calls"] == 2 and not document["skipped"]
    assert "interaction 1: response body: is corrupt" in lenient.stderr
    assert "only that call is left out (--lenient)" in lenient.stderr
    strict = _run("report", path, "--no-cache")
    assert strict.exit_code == 2
    assert "interaction 1: response body: is corrupt" in strict.stderr


def test_the_plugin_names_a_replayed_body_that_cannot_be_decompressed() -> None:
    """The pytest plugin reads what vcrpy replays: a corrupt gzip body raised a bare
    ValueError there, not the error naming the cassette and interaction."""
    from types import SimpleNamespace

    from costsim.api.testing import read_vcr_call

    request = SimpleNamespace(
        method="POST",
        uri="https://api.anthropic.com/v1/messages",
        headers={"content-type": "application/json"},
        body=json.dumps({"model": "claude-sonnet-4-5", "max_tokens": 9, "messages": []}),
    )
    response = {
        "status": {"code": 200},
        "headers": {"Content-Encoding": ["gzip"]},
        "body": {"string": b"\x1f\x8b\x08garbage"},
    }
    with pytest.raises(
        InteractionError, match=r"x\.yaml: interaction 1: response body: is corrupt"
    ):
        read_vcr_call("x.yaml", 1, request, response)


def test_another_service_s_corrupt_body_is_an_other_interaction(tmp_path: Path) -> None:
    """An MCP server's own traffic with a corrupt gzip body stopped a strict run and was
    called an unmetered LLM call; a readable one is an other interaction, and so is it."""
    mcp = interaction()
    mcp["request"]["uri"] = "http://127.0.0.1:8931/mcp"
    mcp["request"]["body"] = json.dumps({"jsonrpc": "2.0", "method": "tools/call", "id": 1})
    mcp["response"]["body"]["string"] = b"\xde\xad\xbe\xef" * 8
    mcp["response"]["headers"]["Content-Encoding"] = ["gzip"]
    path = write_yaml(tmp_path / "mcp.yaml", [interaction(), mcp, interaction()])
    strict = _run("report", path, "--format", "json", "--no-cache")
    assert strict.exit_code == 0, strict.output
    document = json.loads(strict.stdout)
    assert document["totals"]["llm_calls"] == 2 and not document["notes"]


def test_advice_and_answers_say_a_cost_is_a_lower_bound_and_why(tmp_path: Path) -> None:
    """A review: advise printed the recording's cost as whole while report said ≥, and the
    answers read "its 0 calls without a price billed as recorded" when only an interaction
    left out made the cost unknown."""
    path = _mixed(tmp_path)
    advice = _run("advise", "caching", path, "--lenient", "--no-cache")
    assert advice.exit_code == 0, advice.output
    assert advice.stdout.startswith("Caching advice on 2 recorded calls (≥$")
    assert "1 LLM-looking interaction costsim cannot meter, left out of every sum" in " ".join(
        advice.stdout.split()
    )
    document = json.loads(
        _run("advise", "caching", path, "--lenient", "--no-cache", "--format", "json").stdout
    )
    assert document["baseline"]["left_out_calls"] == 1 and document["baseline"]["cost_usd"] is None
    simulated = _run("simulate", path, "-s", "caching:ttl=1h", "--lenient", "--no-cache")
    text = " ".join(simulated.stdout.split())
    assert "0 calls without a price" not in text
    assert "1 LLM-looking interaction costsim cannot meter" in text


def test_a_cost_budget_names_what_it_cannot_check() -> None:
    from costsim.analysis.budgets import _cost_failure
    from costsim.api.testing import TestCost

    cost = TestCost(calls=1, priced_cost_usd=Decimal("0.001"), unrecognised_calls=1)
    said = _cost_failure("t", cost, 1.0)
    assert said is not None
    assert "(+1 LLM-looking interaction not metered)" in said and "unpriced" not in said
    assert "record it with an API costsim meters" in said
    over = _cost_failure("t", cost, 0.0001)  # the part known is over already
    assert over is not None and "over the budget" in over
