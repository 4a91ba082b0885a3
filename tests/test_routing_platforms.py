"""``routing``'s ``models`` on every platform: a key names a model, and finds its calls on
Amazon Bedrock, Google Vertex AI and the provider's own API, written as the plain name, the
dated name or a platform's id; the routed call stays on its platform and region class."""

from __future__ import annotations

import json
from dataclasses import replace
from decimal import Decimal
from pathlib import Path

import pytest
from click.testing import CliRunner

from costsim.analysis.comparison import compare_variants
from costsim.cli import cli
from costsim.engine import Engine, Variant, make_step
from costsim.model import CassetteTrace, Platform, Provenance
from costsim.pricing.platform_ids import model_name, on_platform
from costsim.strategies.trace import Event, said_of_the_run

BEDROCK = (
    "https://bedrock-runtime.us-east-1.amazonaws.com/model/"
    "us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/invoke"
)
VERTEX = (
    "https://us-east5-aiplatform.googleapis.com/v1/projects/p/locations/us-east5/publishers/"
    "anthropic/models/claude-sonnet-4-5@20250929:rawPredict"
)
ANTHROPIC = "https://api.anthropic.com/v1/messages"


def _claude(folder: Path, uri: str, model: str | None) -> CassetteTrace:
    """One Claude Sonnet 4.5 call at ``uri`` (``model`` in the request, where the API takes it
    there), recorded billing 1,000 tokens in and 100 out."""
    from tests.test_providers import _cassette

    folder.mkdir()
    request: dict[str, object] = {
        "max_tokens": 256,
        "messages": [{"role": "user", "content": "Plan the release."}],
    }
    if model is None:  # Bedrock and Vertex AI name the model in the path
        request["anthropic_version"] = (
            "bedrock-2023-05-31" if "bedrock" in uri else "vertex-2023-10-16"
        )
    else:
        request["model"] = model
    response = {
        "id": "msg_01",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5-20250929",
        "content": [{"type": "text", "text": "Tag, build, publish."}],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 1000, "output_tokens": 100},
    }
    return _cassette(folder, uri, request, response)


def _three(tmp_path: Path) -> list[CassetteTrace]:
    """The same Sonnet 4.5 call on Bedrock (a ``us.`` profile), Vertex AI and Anthropic's API."""
    return [
        _claude(tmp_path / "bedrock", BEDROCK, None),
        _claude(tmp_path / "vertex", VERTEX, None),
        _claude(tmp_path / "anthropic", ANTHROPIC, "claude-sonnet-4-5"),
    ]


def test_a_platforms_id_names_its_model() -> None:
    assert model_name("us.anthropic.claude-sonnet-4-5-20250929-v1:0") == (
        "claude-sonnet-4-5-20250929"
    )
    assert model_name("anthropic.claude-sonnet-4-5-20250929-v1%3A0") == (
        "claude-sonnet-4-5-20250929"
    )
    assert model_name("global.anthropic.claude-haiku-4-5-20251001-v1:0") == (
        "claude-haiku-4-5-20251001"
    )
    assert model_name("claude-sonnet-4-5@20250929") == "claude-sonnet-4-5-20250929"
    # every geo Bedrock's ids carry, as the id parser reads them (a review: us-gov., ca.)
    for geo in ("us-gov.", "ca.", "apac."):
        assert model_name(f"{geo}anthropic.claude-haiku-4-5-20251001-v1:0") == (
            "claude-haiku-4-5-20251001"
        )
    assert model_name("anthropic.claude-v2:1") == "claude-v2:1"  # undated: its -v2 is its name
    assert model_name("anthropic/claude-sonnet-4.5") == "claude-sonnet-4.5"
    assert model_name("gpt-4o-2024-08-06") == "gpt-4o-2024-08-06"


def test_a_target_is_named_as_the_calls_platform_names_it() -> None:
    """On Bedrock, Bedrock's id in the call's region class (a Bedrock id written out is the
    endpoint chosen, kept); elsewhere another platform's form is the model it names."""
    us, world = "us.anthropic.claude-sonnet-4-5-20250929-v1:0", "global.anthropic.x-v1:0"
    haiku = "us.anthropic.claude-haiku-4-5-20251001-v1:0"
    assert on_platform("claude-haiku-4-5", Platform.BEDROCK, us) == haiku
    assert on_platform("claude-haiku-4-5@20251001", Platform.BEDROCK, us) == haiku
    assert on_platform("claude-haiku-4-5", Platform.BEDROCK, world) == (
        "global.anthropic.claude-haiku-4-5-20251001-v1:0"
    )
    assert on_platform(haiku, Platform.BEDROCK, world) == haiku
    assert on_platform(haiku, Platform.VERTEX, "claude-sonnet-4-5@20250929") == (
        "claude-haiku-4-5-20251001"
    )
    assert on_platform("claude-haiku-4-5@20251001", Platform.VERTEX, "x") == (
        "claude-haiku-4-5@20251001"
    )
    assert on_platform("claude-haiku-4-5@20251001", None, "x") == "claude-haiku-4-5-20251001"
    assert on_platform("gpt-4o-mini", None, "gpt-4o") == "gpt-4o-mini"


@pytest.mark.parametrize(
    ("key", "target"),
    [
        ("claude-sonnet-4-5", "claude-haiku-4-5"),
        ("claude-sonnet-4-5-20250929", "claude-haiku-4-5"),
        ("us.anthropic.claude-sonnet-4-5-20250929-v1:0",
         "us.anthropic.claude-haiku-4-5-20251001-v1:0"),
        ("claude-sonnet-4-5@20250929", "claude-haiku-4-5@20251001"),
    ],
)  # fmt: skip
def test_models_moves_a_models_calls_on_every_platform(
    tmp_path: Path, key: str, target: str
) -> None:
    """A trial's ``models: {claude-sonnet-4-5: claude-haiku-4-5}`` matched no Bedrock call,
    and Vertex AI's only as ``claude-sonnet-4-5@20250929``: the variant saved nothing, without
    a word. Every form now moves all three calls (1,000 in, 100 out each), each to Haiku 4.5
    where it was served: Bedrock's ``us.`` profile and Vertex AI's us-east5 endpoint bill
    their regional $1.10 / $5.50 per million (Sonnet 4.5 there: $3.30 / $16.50), Anthropic
    $1 / $5 ($3 / $15)."""
    traces = _three(tmp_path)
    result = Engine(traces).run(Variant("r", (make_step("routing", {"models": {key: target}}),)))
    bedrock, vertex, anthropic = (trace.calls[0].call for trace in result.traces)
    assert bedrock.platform is Platform.BEDROCK and vertex.platform is Platform.VERTEX
    assert bedrock.model == "us.anthropic.claude-haiku-4-5-20251001-v1:0"
    assert model_name(vertex.model).startswith("claude-haiku-4-5")
    assert model_name(anthropic.model).startswith("claude-haiku-4-5")
    costs = result.totals_by_trace()
    per_million = Decimal(1_000_000)
    regional = (1000 * Decimal("1.10") + 100 * Decimal("5.50")) / per_million
    for trace in traces[:2]:  # $0.00165, from $0.00495
        assert costs[trace.path].cost_usd == regional
    assert costs[traces[2].path].cost_usd == (1000 * 1 + 100 * 5) / per_million  # from $0.0045
    assert not [event for event in result.events if event.kind == "note"]


def _notes(traces: list[CassetteTrace], models: dict[str, str]) -> list[str]:
    variant = Variant("r", (make_step("routing", {"models": models}),))
    (summary,) = compare_variants(Engine(traces), [variant], attribute=False).variants
    return [event.message for event in summary.events if event.kind == "note"]


def test_a_models_key_that_routes_nothing_is_said_once(tmp_path: Path) -> None:
    """A key that names no call of the run (a typo here) is said once for the variant, not
    once per cassette; a key that routes calls of one cassette says nothing of the others."""
    from tests.test_strategy_routing import _chat

    traces = _three(tmp_path)
    said = (
        "models.claude-sonet-4-5 routes nothing: no call of the run is of that model (by its "
        "name, a dated snapshot or a platform's id of it); did you mean claude-sonnet-4-5?"
    )
    assert _notes(traces, {"claude-sonet-4-5": "claude-haiku-4-5"}) == [said]
    (tmp_path / "openai").mkdir()
    usage = {"prompt_tokens": 1000, "completion_tokens": 100}
    chat = _chat(tmp_path / "openai", "gpt-4o-2024-08-06", usage, 990)
    assert _notes([*traces, chat], {"gpt-4o": "gpt-4o-mini"}) == []
    assert _notes([*traces, chat], {"claude-sonnet-4-5": "claude-haiku-4-5"}) == []


def test_a_note_of_the_run_stands_only_where_every_trace_says_it() -> None:
    where = [Provenance(Path(f"{name}.yaml"), 0) for name in "abc"]
    said = [Event("routing", "note", "none here", place, of_run=True) for place in where]
    other = Event("routing", "note", "plain", where[0])
    # kept once, naming no cassette: it is about the run (it used to name the first one's call)
    assert said_of_the_run([other, *said], 3) == [other, replace(said[0], provenance=None)]
    assert said_of_the_run([other, *said[:2]], 3) == [other]


def test_a_note_of_the_run_names_no_cassette_in_the_output(tmp_path: Path) -> None:
    scenario = tmp_path / "s.yaml"
    scenario.write_text(
        f"name: run note\ncassettes: [{Path(__file__).parents[1] / 'cassettes'}/*.yaml]\nvariants:\n"
        "  routed:\n    - routing: {models: {gpt4o: gpt-4o-mini, claude-sonnet-4: claude-haiku-4-5}}\n"
    )
    result = CliRunner().invoke(cli, ["compare", str(scenario), "--format", "json"])
    events = json.loads(result.output)["scenarios"][0]["variants"][0]["events"]
    notes = {e["message"].split(" ")[0]: e for e in events}
    assert notes["models.gpt4o"]["path"] is None and notes["models.gpt4o"]["interaction"] is None
    assert notes["models.gpt4o"]["message"].endswith("did you mean gpt-4o?")
    # a name genai-prices matches (Sonnet 4's alias) is a model, just not this run's: no guess
    assert "did you mean" not in notes["models.claude-sonnet-4"]["message"]


def test_a_name_that_only_starts_like_a_model_is_a_typo_with_its_meaning() -> None:
    """genai-prices matches Claude names by prefix: claude-sonnet-4-5x is matched to Sonnet
    4.5 but names no model; claude-sonnet-4 (an exact alias) and a dated snapshot do."""
    from costsim.pricing.names import close_model

    assert close_model("claude-sonnet-4-5x", None) == "claude-sonnet-4-5"
    assert close_model("claude-sonnet-4-5-2025", "anthropic") == "claude-sonnet-4-5"
    assert close_model("claude-sonnet-4", None) is None
    assert close_model("claude-sonnet-4-20250514", "anthropic") is None
    assert close_model("gpt-4o-mni", "openai") == "gpt-4o-mini"
