"""--as-of before a model's snapshot date: the date a model id names, and the note every
command that prices at a pinned date gives (report, simulate, compare, advise)."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from click.testing import CliRunner

from costsim.cli import cli
from costsim.pricing.snapshots import EarlyPricing, EarlySnapshot, early_snapshot, snapshot_date
from tests.conftest import said
from tests.test_hostile_input import OPENAI_URI, interaction, write_yaml

pytestmark = pytest.mark.usefixtures("columns_100")

HAIKU = "claude-3-5-haiku-20241022"
"""The tiny cassette's model (recorded 2025-03-04), a snapshot of 2024-10-22."""
NOTE = (
    f"{HAIKU} is a snapshot of 2024-10-22, after 2024-01-01 (--as-of): priced at its one known "
    "price (genai-prices gives it for every date)."
)


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        ("claude-sonnet-4-20250514", date(2025, 5, 14)),  # Anthropic: YYYYMMDD
        ("claude-3-5-haiku-20241022", date(2024, 10, 22)),
        ("gpt-4o-2024-08-06", date(2024, 8, 6)),  # OpenAI: YYYY-MM-DD
        ("gpt-4o-mini-2024-07-18", date(2024, 7, 18)),
        ("o3-mini-2025-01-31", date(2025, 1, 31)),
        ("us.anthropic.claude-sonnet-4-5-20250929-v1:0", date(2025, 9, 29)),  # Bedrock
        ("claude-sonnet-4-5@20250929", date(2025, 9, 29)),  # Vertex AI
        ("openai/gpt-4o-2024-08-06", date(2024, 8, 6)),  # a gateway's vendor prefix
        ("ft:gpt-4o-mini-2024-07-18:acme::abc123", date(2024, 7, 18)),  # fine-tuned
        ("ft:gpt-4o-mini-2024-07-18:acme:exp-20240101:AbC", date(2024, 7, 18)),  # its suffix
        ("gpt-4o-mini-2024-07-18.ft-0123abcd", date(2024, 7, 18)),  # Azure's fine-tuned
        ("command-r-08-2024", None),  # a month and a year: no day
        ("gpt-4-0613", None),  # MMDD: no year, no date
        ("gpt-3.5-turbo-0125", None),
        ("gemini-2.5-flash-preview-05-20", None),  # MM-DD
        ("gemini-1.5-pro-002", None),  # a version
        ("mistral-large-2411", None),  # YYMM
        ("claude-sonnet-4-5", None),  # an alias
        ("x-20251399", None),  # digits, not a date
        ("x-2025-02-30", None),
        ("x-120250514", None),  # nine digits are no stamp
        ("", None),
    ],
)
def test_snapshot_date(model: str, expected: date | None) -> None:
    assert snapshot_date(model) == expected


def _at(day: str) -> datetime:
    return datetime.fromisoformat(day).replace(tzinfo=UTC)


def test_early_snapshot_says_what_genai_prices_gives() -> None:
    # o3 has two dated prices in genai-prices: the first holds until 2025-06-10
    early = early_snapshot(("o3-2025-04-16",), "o3-2025-04-16", "openai", _at("2023-01-01"))
    assert early == EarlySnapshot(
        "o3-2025-04-16", date(2025, 4, 16), date(2023, 1, 1), EarlyPricing.EARLIEST,
        date(2025, 6, 10),
    )  # fmt: skip
    assert early_snapshot(("o3-2025-04-16",), "o3", "openai", _at("2025-07-01")) is None
    later = early_snapshot(("o3-2025-12-01",), "o3", "openai", _at("2025-07-01"))
    assert later is not None and later.pricing is EarlyPricing.DATED
    assert later.price_start == date(2025, 6, 10)
    # the first of the names with a date: the response's, else the request's
    names = ("gpt-4o-mini", None, "gpt-4o-mini-2024-07-18")
    found = early_snapshot(names, "gpt-4o-mini", "openai", _at("2024-01-01"))
    assert found is not None and found.model == "gpt-4o-mini-2024-07-18"
    assert found.pricing is EarlyPricing.ONE_PRICE
    assert early_snapshot(("gpt-4-0613",), "gpt-4-0613", "openai", _at("2020-01-01")) is None


def _run(*args: str | Path) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, [str(arg) for arg in args])
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    """One Claude 3.5 Haiku call, recorded 2025-03-04."""
    folder = tmp_path / "cassettes"
    folder.mkdir()
    write_yaml(folder / "haiku.yaml", [interaction()])
    return folder


def test_report_says_a_model_priced_before_its_snapshot(tiny: Path) -> None:
    code, out, _ = _run("report", tiny, "--as-of", "2024-01-01")
    assert code == 0
    assert said(out, f"*Prices as of 2024-01-01 (--as-of). {NOTE}*")
    assert max(len(line) for line in out.splitlines()) <= 100
    assert " ".join(out.split()).count("is a snapshot of") == 1
    for after in ("--as-of", "2024-10-22"), ("--as-of", "2025-01-01"), ():
        assert "snapshot" not in _run("report", tiny, *after)[1]


def test_report_json_markdown_and_html_carry_it(tiny: Path) -> None:
    _, out, _ = _run("report", tiny, "--as-of", "2024-01-01", "--format", "json")
    document = json.loads(out)
    schema = resources.files("costsim").joinpath("schemas/report.schema.json").read_text()
    jsonschema.validate(document, json.loads(schema))
    assert document["totals"]["snapshots_after_price_date"] == [
        {
            "model": HAIKU,
            "snapshot_date": "2024-10-22",
            "priced_on": "2024-01-01",
            "priced_as": "one-price",
            "price_start": None,
            "note": NOTE.replace(" (--as-of)", ""),
        }
    ]
    assert document["cassettes"][0]["snapshots_after_price_date"][0]["model"] == HAIKU
    _, later, _ = _run("report", tiny, "--as-of", "2025-01-01", "--format", "json")
    assert json.loads(later)["totals"]["snapshots_after_price_date"] == []
    _, markdown, _ = _run("report", tiny, "--as-of", "2024-01-01", "--format", "markdown")
    assert f"- {NOTE}" in markdown
    _, html, _ = _run("report", tiny, "--as-of", "2024-01-01", "--format", "html")
    assert f"{HAIKU} is a snapshot of 2024-10-22, after 2024-01-01" in html


def test_the_response_model_names_the_snapshot(tmp_path: Path) -> None:
    """A request for an alias, answered by a dated snapshot: the snapshot is the response's."""
    request = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "Hi"}]}
    response = {
        "id": "c",
        "object": "chat.completion",
        "created": 1730000000,
        "model": "gpt-4o-mini-2024-07-18",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "Hello"},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 8, "completion_tokens": 2, "total_tokens": 10},
    }
    write_yaml(tmp_path / "chat.yaml", [interaction(OPENAI_URI, request, response)])
    _, out, _ = _run("report", tmp_path, "--as-of", "2024-07-17")
    assert said(out, "*gpt-4o-mini-2024-07-18 is a snapshot of 2024-07-18, after 2024-07-17 *")
    assert "snapshot" not in _run("report", tmp_path, "--as-of", "2024-07-18")[1]


def _scenario(tmp_path: Path, tiny: Path, day: str) -> Path:
    path = tmp_path / f"s-{day}.yaml"
    path.write_text(
        f"name: early\ncassettes: ['{tiny}/*.yaml']\npricing: {{as_of: {day}}}\n"
        "variants:\n  cache-5m: [caching]\n"
        "  sonnet: [{routing: {models: {claude-3-5-haiku: claude-sonnet-4-20250514}}}]\n"
    )
    return path


def _notes(document: dict[str, Any]) -> list[str]:
    return [item["model"] for item in document["snapshots_after_price_date"]]


def test_compare_says_it_of_the_recording_and_of_a_routed_model(tiny: Path) -> None:
    scenario = _scenario(tiny.parent, tiny, "2024-01-01")
    code, out, _ = _run("compare", scenario, "--no-cache")
    assert code == 0, out
    text = " ".join(out.split())
    assert (
        f"Prices as of 2024-01-01. {HAIKU} is a snapshot of 2024-10-22, after 2024-01-01: "
        "priced at its one known price" in text
    )
    assert "claude-sonnet-4-20250514 is a snapshot of 2025-05-14, after 2024-01-01" in text
    assert max(len(line) for line in out.splitlines()) <= 100
    _, out, _ = _run("compare", scenario, "--no-cache", "--format", "json")
    document = json.loads(out)["scenarios"][0]
    assert _notes(document["baseline"]) == [HAIKU]
    sonnet = next(item for item in document["variants"] if item["name"] == "sonnet")
    assert _notes(sonnet["totals"]) == ["claude-sonnet-4-20250514"]
    later = _scenario(tiny.parent, tiny, "2025-06-01")
    assert "is a snapshot of" not in _run("compare", later, "--no-cache")[1]


def test_compare_takes_as_of_over_the_scenarios_own(
    tiny: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The README lists compare among the commands that take --as-of; it did not (a trial)."""
    monkeypatch.setenv("COSTSIM_CACHE_DIR", str(tmp_path / "cache"))
    scenario = _scenario(tiny.parent, tiny, "2025-06-01")  # after every snapshot: no note
    assert "is a snapshot of" not in _run("compare", scenario)[1]
    code, out, _ = _run("compare", scenario, "--as-of", "2024-01-01")  # not the recalled one
    assert code == 0 and "Prices as of 2024-01-01." in out
    assert f"{HAIKU} is a snapshot of 2024-10-22, after 2024-01-01" in " ".join(out.split())
    _, out, _ = _run("compare", scenario, "--as-of", "2024-01-01", "--format", "json")
    assert json.loads(out)["scenarios"][0]["as_of"].startswith("2024-01-01")
    assert _run("compare", scenario, "--as-of", "2024-13-01")[0] == 2


def test_simulate_and_advise_say_it(tiny: Path) -> None:
    _, out, _ = _run("simulate", tiny, "-s", "caching", "--as-of", "2024-01-01")
    assert said(out, f"*{HAIKU} is a snapshot of 2024-10-22, after 2024-01-01: *")
    _, out, _ = _run("simulate", tiny, "-s", "caching", "--as-of", "2024-01-01", "--format", "json")
    assert _notes(json.loads(out)["baseline"]) == [HAIKU]
    _, out, _ = _run("advise", "caching", tiny, "--as-of", "2024-01-01")
    assert said(out, f"*{NOTE}*")
