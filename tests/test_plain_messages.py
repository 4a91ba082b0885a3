"""Bad input is told in the user's words: where it is (line, interaction) and what is wrong,
not Python's names for it."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from click.testing import CliRunner

from costsim.cli import cli
from costsim.io.bodies import json_kind, parse_sse
from tests.conftest import EXAMPLES


def _error(*args: str) -> str:
    result = CliRunner().invoke(cli, [*args, "--no-cache"])
    assert result.exit_code == 2, result.output
    return " ".join(result.stderr.split())


def test_json_values_are_named_as_json_names_them() -> None:
    kinds = [json_kind(v) for v in (None, True, 1, 1.5, "x", [], {})]
    assert kinds == ["null", "boolean", "number", "number", "string", "array", "object"]


def test_a_body_that_is_not_an_object_says_what_it_is(tmp_path: Path) -> None:
    document = yaml.safe_load((EXAMPLES / "anthropic_support_agent.yaml").read_text())
    document["interactions"][0]["response"]["body"]["string"] = "[1, 2]"
    path = tmp_path / "list.yaml"
    path.write_text(yaml.safe_dump(document))
    assert "response body is a JSON array, not an object" in _error("report", str(path))


def test_a_uri_that_is_not_text_is_told_apart_from_a_missing_one(tmp_path: Path) -> None:
    document = yaml.safe_load((EXAMPLES / "anthropic_support_agent.yaml").read_text())
    document["interactions"][0]["request"]["uri"] = 12345
    path = tmp_path / "uri.yaml"
    path.write_text(yaml.safe_dump(document))
    assert "interaction 0: request has a URI that is not text (12345)" in _error(
        "report", str(path)
    )


def test_bad_base64_is_placed_at_its_line(tmp_path: Path) -> None:
    path = tmp_path / "b64.yaml"
    text = (EXAMPLES / "anthropic_support_agent.yaml").read_text()
    body = "    body:\n      string: !!binary |\n        H4sIAAAAAAAAA\n"
    first = text.index("  response:\n") + len("  response:\n")
    end = text.index("    headers:", first)
    path.write_text(text[:first] + body + text[end:])
    said = _error("report", str(path))
    line = text[:first].count("\n") + 2  # the string: !!binary line
    assert f"interaction 0 (line {line}): unreadable YAML: failed to decode base64 data" in said


def test_an_event_stream_with_carriage_returns_alone_is_read() -> None:
    """The event-stream standard ends lines with CRLF, LF or CR alone."""
    data = {"type": "message_stop"}
    body = f"event: message_stop\rdata: {json.dumps(data)}\r\r".encode()
    (event,) = parse_sse(body)
    assert (event.event, event.data) == ("message_stop", data)


def test_a_python_tag_in_a_scenario_is_refused_plainly(tmp_path: Path) -> None:
    scenario = tmp_path / "s.yaml"
    scenario.write_text(
        "name: x\ncassettes: !!python/object/apply:os.system ['echo hi']\n"
        "variants: {a: [caching]}\n"
    )
    assert (
        f"{scenario}:2:12: not valid YAML: the tag !!python/object/apply:os.system is not "
        "allowed (scenarios are read safely: no code runs)" in _error("compare", str(scenario))
    )
