"""A call the API answered with an error is unbilled, whatever its body says of usage; a
response that reports its usage and then an error is billed as recorded, and says so."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from click.testing import CliRunner

from costsim.cli import cli
from tests.conftest import EXAMPLES


def _report(path: Path) -> dict[str, object]:
    result = CliRunner().invoke(cli, ["report", str(path), "--no-cache", "--format", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_a_refused_request_is_unbilled_even_with_usage_in_its_body(tmp_path: Path) -> None:
    source = EXAMPLES / "anthropic_support_agent.yaml"
    whole = _report(source)["totals"]
    document = yaml.safe_load(source.read_text())
    first = document["interactions"][0]
    assert '"usage"' in first["response"]["body"]["string"]
    first["response"]["status"] = {"code": 500, "message": "Internal Server Error"}
    path = tmp_path / "refused.yaml"
    path.write_text(yaml.safe_dump(document))
    data = _report(path)
    totals = data["totals"]
    assert totals["errored_calls"] == whole["errored_calls"] + 1  # the example has a 529 too
    # the refused call's tokens and cost are gone from the totals
    assert totals["prompt_tokens"] < whole["prompt_tokens"]
    assert totals["llm_calls"] == whole["llm_calls"]
    text = CliRunner().invoke(cli, ["report", str(path), "--no-cache"]).stdout
    assert "2 errored calls: unbilled, no tokens counted." in " ".join(text.split())


def _stream_cassette(path: Path, events: list[tuple[str, dict[str, object]]]) -> Path:
    stream = "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events)
    request = {"model": "claude-sonnet-4-5", "max_tokens": 100, "stream": True,
               "messages": [{"role": "user", "content": "Hi"}]}  # fmt: skip
    cassette = {
        "interactions": [
            {
                "request": {
                    "body": json.dumps(request),
                    "headers": {"content-type": ["application/json"]},
                    "method": "POST",
                    "uri": "https://api.anthropic.com/v1/messages",
                },
                "response": {
                    "body": {"string": stream},
                    "headers": {"content-type": ["text/event-stream"]},
                    "status": {"code": 200, "message": "OK"},
                },
            }
        ],
        "version": 1,
    }
    path.write_text(yaml.safe_dump(cassette))
    return path


_START = (
    "message_start",
    {
        "type": "message_start",
        "message": {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5",
            "content": [],
            "stop_reason": None,
            "usage": {"input_tokens": 1000, "output_tokens": 1},
        },
    },
)
_TEXT = [
    ("content_block_start", {"type": "content_block_start", "index": 0,
                             "content_block": {"type": "text", "text": ""}}),
    ("content_block_delta", {"type": "content_block_delta", "index": 0,
                             "delta": {"type": "text_delta", "text": "word " * 300}}),
]  # fmt: skip
_ERROR = (
    "error",
    {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
)


def test_a_stream_an_error_cuts_is_billed_at_an_estimate(tmp_path: Path) -> None:
    """Anthropic streams a placeholder usage in message_start (output 1); an error event
    before message_delta ends the stream: the call began and was billed, its output is
    estimated from what arrived (300 words, not 1 token), and it is not an errored call."""
    path = _stream_cassette(tmp_path / "cut.yaml", [_START, *_TEXT, _ERROR])
    data = _report(path)
    totals = data["totals"]
    assert (totals["errored_calls"], totals["estimated_calls"]) == (0, 1)
    assert totals["prompt_tokens"] == 1000  # the input message_start recorded
    assert totals["output_tokens"] >= 300
    (note,) = [n for n in data["notes"] if n["kind"] == "incomplete-stream"]
    assert "ends in an error ('Overloaded') before its usage is final: billed" in note["message"]
    # the simulator bills it too: caching can write on it (it was unbilled, as an errored call)
    result = CliRunner().invoke(cli, ["simulate", str(path), "-s", "caching", "--no-cache"])
    assert result.exit_code == 0 and "errored" not in result.stdout


def test_an_error_after_the_final_usage_is_billed_as_recorded(tmp_path: Path) -> None:
    delta = ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn"},
                               "usage": {"output_tokens": 350}})  # fmt: skip
    path = _stream_cassette(tmp_path / "late.yaml", [_START, *_TEXT, delta, _ERROR])
    data = _report(path)
    assert data["totals"]["errored_calls"] == 0 and data["totals"]["estimated_calls"] == 0
    assert (data["totals"]["prompt_tokens"], data["totals"]["output_tokens"]) == (1000, 350)
    kinds = [note["kind"] for note in data["notes"]]
    assert "error-after-usage" in kinds
