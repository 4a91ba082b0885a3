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


def test_an_error_after_the_usage_is_billed_and_noted(tmp_path: Path) -> None:
    """Anthropic streams usage in message_start; an error event later ends the stream."""
    events = [
        ("message_start", {"type": "message_start", "message": {
            "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
            "content": [], "stop_reason": None,
            "usage": {"input_tokens": 1000, "output_tokens": 1}}}),
        ("content_block_start", {"type": "content_block_start", "index": 0,
                                 "content_block": {"type": "text", "text": ""}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                 "delta": {"type": "text_delta", "text": "Hello"}}),
        ("error", {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
    ]  # fmt: skip
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
    path = tmp_path / "cut.yaml"
    path.write_text(yaml.safe_dump(cassette))
    data = _report(path)
    assert data["totals"]["errored_calls"] == 0
    assert data["totals"]["prompt_tokens"] == 1000
    kinds = [note["kind"] for note in data["notes"]]
    assert "error-after-usage" in kinds
