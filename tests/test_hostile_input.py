"""Bad input: a clear one-line error naming the file (and interaction), never a traceback,
never code run from a cassette, never a silently wrong total."""

from __future__ import annotations

import codecs
import json
import os
import pty
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result

from costsim.cli import cli
from costsim.errors import (
    CassetteError,
    CassetteNotFoundError,
    InteractionError,
    UnsafeCassetteError,
)
from costsim.io.cassette import load_cassette
from costsim.model import Usage
from costsim.providers.normalise import load_trace
from tests.conftest import EXAMPLES

ANTHROPIC_URI = "https://api.anthropic.com/v1/messages"
OPENAI_URI = "https://api.openai.com/v1/chat/completions"
DATE = "Tue, 04 Mar 2025 10:00:00 GMT"
MODEL = "claude-3-5-haiku-20241022"

ANTHROPIC_REQUEST: dict[str, Any] = {
    "model": MODEL,
    "max_tokens": 64,
    "messages": [{"role": "user", "content": "Say hello."}],
}
ANTHROPIC_RESPONSE: dict[str, Any] = {
    "id": "msg_01",
    "type": "message",
    "role": "assistant",
    "model": MODEL,
    "content": [{"type": "text", "text": "Hello!"}],
    "stop_reason": "end_turn",
    "usage": {"input_tokens": 11, "cache_read_input_tokens": 3, "output_tokens": 7},
}
ANTHROPIC_USAGE = Usage(uncached_input=11, cache_read=3, output=7)

OPENAI_REQUEST: dict[str, Any] = {
    "model": "gpt-4o-mini",
    "messages": [{"role": "user", "content": "Say hello."}],
}

HTML_PAGE = "<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>"


# --- builders -------------------------------------------------------------------------------


def _body(value: Any) -> Any:
    return json.dumps(value) if isinstance(value, dict) else value


def interaction(
    uri: str = ANTHROPIC_URI,
    request: Any = None,
    response: Any = None,
    *,
    method: str = "POST",
    status: int = 200,
    response_headers: dict[str, list[str]] | None = None,
) -> dict[str, Any]:
    """One interaction as vcrpy writes it; defaults to a good Anthropic Messages call."""
    request = ANTHROPIC_REQUEST if request is None else request
    response = ANTHROPIC_RESPONSE if response is None else response
    headers = {"Content-Type": ["application/json"], "Date": [DATE]}
    headers.update(response_headers or {})
    return {
        "request": {
            "body": _body(request),
            "headers": {"Content-Type": ["application/json"]},
            "method": method,
            "uri": uri,
        },
        "response": {
            "body": {"string": _body(response)},
            "headers": headers,
            "status": {"code": status, "message": "OK"},
        },
    }


def chat_stream(text: str, *, usage: dict[str, int] | None = None) -> dict[str, Any]:
    """A streamed gpt-4o-mini Chat Completions interaction answering ``text``, as vcrpy
    writes it; with ``usage``, the final usage chunk (``include_usage``), else none."""
    request = {
        "model": "gpt-4o-mini",
        "stream": True,
        "messages": [{"role": "user", "content": "Hi"}],
    }
    head = {"id": "c", "object": "chat.completion.chunk", "created": 1730000000}
    chunks = [
        {**head, "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}]},
        {**head, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
    ]
    if usage is not None:
        chunks.append({**head, "choices": [], "usage": usage})
    body = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
    headers = {"Content-Type": ["text/event-stream"]}
    return interaction(OPENAI_URI, request, body, response_headers=headers)


def write_yaml(path: Path, interactions: list[dict[str, Any]]) -> Path:
    path.write_text(yaml.safe_dump({"interactions": interactions, "version": 1}))
    return path


def with_bad_second(path: Path, bad: dict[str, Any]) -> Path:
    """A cassette whose interaction 0 is good and interaction 1 is ``bad``."""
    return write_yaml(path, [interaction(), bad])


def run_cli(*args: str | Path) -> Result:
    return CliRunner().invoke(cli, [str(arg) for arg in args])


def assert_one_line_error(result: Result, path: Path, index: int | None) -> str:
    """Exit 2 and one line on stderr naming the file (and interaction); no traceback."""
    assert result.exit_code == 2, (result.output, result.exception)
    assert isinstance(result.exception, SystemExit)
    assert "Traceback" not in result.stdout
    assert "Traceback" not in result.stderr
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert path.name in lines[0]
    if index is not None:
        assert f"interaction {index}" in lines[0]
    return lines[0]


# --- unsafe YAML tags -----------------------------------------------------------------------


def _unsafe_tags(pwned: Path) -> dict[str, str]:
    touch = json.dumps(f"touch {pwned}")
    argv = json.dumps(["touch", str(pwned)])
    return {
        "apply-os-system": f"!!python/object/apply:os.system [{touch}]",
        "apply-verbatim-tag": f"!<tag:yaml.org,2002:python/object/apply:os.system> [{touch}]",
        "apply-subprocess": f"!!python/object/apply:subprocess.check_call [{argv}]",
        "apply-kwds": f"!!python/object/apply:os.system {{args: [{touch}]}}",
        "new-popen": f"!!python/object/new:subprocess.Popen [{argv}]",
        "new-ordered-dict": "!!python/object/new:collections.OrderedDict [[[a, 1]]]",
        "object": "!!python/object:argparse.Namespace {x: 1}",
        "name-os-system": "!!python/name:os.system",
        "module-os": "!!python/module:os",
    }


UNSAFE_IDS = list(_unsafe_tags(Path("x")))


def _write_tagged(path: Path, tag_value: str) -> Path:
    """A valid cassette whose interaction 1 response body is ``tag_value`` (raw YAML)."""
    text = yaml.safe_dump(
        {"interactions": [interaction(), interaction(response="@EVIL@")], "version": 1}
    )
    assert text.count("'@EVIL@'") == 1
    path.write_text(text.replace("'@EVIL@'", tag_value))
    return path


@pytest.mark.parametrize("kind", UNSAFE_IDS)
def test_unsafe_tag_is_refused_and_not_run(tmp_path: Path, kind: str) -> None:
    pwned = tmp_path / "pwned"
    path = _write_tagged(tmp_path / "evil.yaml", _unsafe_tags(pwned)[kind])

    with pytest.raises(UnsafeCassetteError) as caught:
        load_cassette(path)

    message = str(caught.value)
    assert caught.value.path == path
    assert str(path) in message
    assert "interaction 1" in message
    assert "python/" in message
    assert "\n" not in message
    assert not pwned.exists()


def test_unsafe_tag_inside_an_allowed_header_name_tag(tmp_path: Path) -> None:
    """The str-subclass tag costsim allows must not construct what it wraps."""
    pwned = tmp_path / "pwned"
    item = interaction(response_headers={"@NAME@": ["x"]})
    text = yaml.safe_dump({"interactions": [item], "version": 1})
    evil = json.dumps(f"touch {pwned}")
    text = text.replace(
        "      '@NAME@':\n",
        "      ? !!python/object/new:multidict._multidict.istr\n"
        f"      - !!python/object/apply:os.system [{evil}]\n"
        "      :\n",
    )
    assert "os.system" in text
    path = tmp_path / "evil.yaml"
    path.write_text(text)

    with pytest.raises(UnsafeCassetteError, match=re.escape(str(path))):
        load_cassette(path)
    assert not pwned.exists()


@pytest.mark.parametrize(
    "args",
    [
        pytest.param("[a, b]", id="two-items"),
        pytest.param("[7]", id="not-a-string"),
    ],
)
def test_allowed_header_name_tag_with_wrong_arguments(tmp_path: Path, args: str) -> None:
    item = interaction(response_headers={"@NAME@": ["x"]})
    text = yaml.safe_dump({"interactions": [item], "version": 1}).replace(
        "      '@NAME@':\n",
        f"      ? !!python/object/new:multidict._multidict.istr {args}\n      :\n",
    )
    path = tmp_path / "odd.yaml"
    path.write_text(text)

    with pytest.raises(CassetteError) as caught:
        load_cassette(path)
    assert str(path) in str(caught.value)
    assert "interaction 0" in str(caught.value)


def test_unsafe_yaml_in_a_json_file_is_not_run(tmp_path: Path) -> None:
    pwned = tmp_path / "pwned"
    path = _write_tagged(tmp_path / "evil.json", _unsafe_tags(pwned)["apply-os-system"])

    with pytest.raises(CassetteError, match="is not valid JSON"):
        load_cassette(path)
    assert not pwned.exists()


@pytest.mark.parametrize("kind", ["apply-os-system", "new-popen", "name-os-system"])
def test_cli_refuses_unsafe_cassette(tmp_path: Path, kind: str) -> None:
    pwned = tmp_path / "pwned"
    path = _write_tagged(tmp_path / "evil.yaml", _unsafe_tags(pwned)[kind])

    line = assert_one_line_error(run_cli("report", path), path, 1)
    checked = run_cli("cassettes", "check", path)
    listed = run_cli("cassettes", "list", path)

    assert "python/" in line
    assert checked.exit_code == 1
    assert "evil.yaml: [error] unreadable" in checked.stdout
    assert listed.exit_code == 0
    assert "unreadable" in listed.stdout
    assert not pwned.exists()


# --- truncated and corrupt files ------------------------------------------------------------


def _three_calls() -> str:
    return yaml.safe_dump({"interactions": [interaction() for _ in range(3)], "version": 1})


def _starts(text: str) -> list[int]:
    return [match.start() for match in re.finditer(r"(?m)^- request:", text)]


def test_truncated_yaml_inside_a_string_names_the_interaction(tmp_path: Path) -> None:
    text = _three_calls()
    second = _starts(text)[1]
    cut = text.index('"usage"', text.index("response:", second))
    path = tmp_path / "cut.yaml"
    path.write_text(text[:cut])

    with pytest.raises(CassetteError) as caught:
        load_trace(path)

    message = str(caught.value)
    assert str(path) in message
    assert "interaction 1" in message
    assert "\n" not in message


def test_truncated_yaml_in_the_middle(tmp_path: Path) -> None:
    text = _three_calls()
    cut = len(text) // 2
    expected = sum(1 for start in _starts(text) if start < cut) - 1
    path = tmp_path / "half.yaml"
    path.write_text(text[:cut])

    with pytest.raises(CassetteError) as caught:
        load_trace(path)

    assert str(path) in str(caught.value)
    assert f"interaction {expected}" in str(caught.value)


@pytest.mark.parametrize("keep", ["  response:\n", '    body:\n      string: \'{"id"'])
def test_truncated_yaml_at_the_response(tmp_path: Path, keep: str) -> None:
    text = _three_calls()
    last = _starts(text)[2]
    cut = text.index(keep, last) + len(keep)
    path = tmp_path / "cut.yaml"
    path.write_text(text[:cut])

    with pytest.raises(CassetteError) as caught:
        load_trace(path)

    assert str(path) in str(caught.value)
    assert "interaction 2" in str(caught.value)


def test_truncated_yaml_after_the_response_body_key(tmp_path: Path) -> None:
    text = _three_calls()
    last = _starts(text)[2]
    keep = "  response:\n    body:\n"
    path = tmp_path / "cut.yaml"
    path.write_text(text[: text.index(keep, last) + len(keep)])

    with pytest.raises(CassetteError, match="interaction 2"):
        load_trace(path)


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        pytest.param(b"ab\xff\xfecd\n", "is not UTF-8 text (byte 2)", id="not-utf8"),
        pytest.param(b"\xff\xfea\x00\x00\xd8", "is not UTF-16 LE text (byte 4)", id="bad-utf16"),
        pytest.param(  # a trial read "is not UTF-16 BE text": no one writes a cassette so
            b"\x00\x01\x02binary", "is not text (a null byte at byte 0): a binary file", id="binary"
        ),
        pytest.param(b"ab\x00\xffcd", "is not text (a null byte at byte 2)", id="binary-later"),
        pytest.param(b"just a string\n", "not a vcrpy cassette", id="scalar"),
        pytest.param(b"interactions: 7\n", "not a vcrpy cassette", id="interactions-not-list"),
        pytest.param(b"interactions: [1]\n", "interaction 0", id="interaction-not-mapping"),
        pytest.param(b"interactions:\n- request: {}\n", "interaction 0", id="no-response"),
        pytest.param(b"key: [unclosed\n", "not valid YAML", id="broken-yaml"),
        pytest.param(b"x: !custom 1\n", "unreadable YAML", id="unknown-tag"),
    ],
)
def test_not_a_cassette(tmp_path: Path, content: bytes, needle: str) -> None:
    path = tmp_path / "weird.yaml"
    path.write_bytes(content)

    with pytest.raises(CassetteError) as caught:
        load_trace(path)

    assert str(path) in str(caught.value)
    assert needle in str(caught.value)


@pytest.mark.parametrize(
    ("encoding", "mark"),
    [
        pytest.param("utf-16-le", codecs.BOM_UTF16_LE, id="utf16-le-bom"),
        pytest.param("utf-16-be", codecs.BOM_UTF16_BE, id="utf16-be-bom"),
        pytest.param("utf-16-le", b"", id="utf16-le-no-bom"),
        pytest.param("utf-32-le", codecs.BOM_UTF32_LE, id="utf32-le-bom"),
        pytest.param("utf-32-be", b"", id="utf32-be-no-bom"),
        pytest.param("utf-8", codecs.BOM_UTF8, id="utf8-bom"),
    ],
)
def test_a_cassette_in_any_yaml_encoding_reads_as_in_utf8(
    tmp_path: Path, encoding: str, mark: bytes
) -> None:
    """YAML and JSON streams may be UTF-16 or UTF-32 (PowerShell's ``>`` writes UTF-16)."""
    text = _three_calls()
    plain, other = tmp_path / "plain.yaml", tmp_path / "other.yaml"
    plain.write_text(text, encoding="utf-8")
    other.write_bytes(mark + text.encode(encoding))
    assert [c.usage for c in load_trace(other).calls] == [c.usage for c in load_trace(plain).calls]


def test_invalid_json_cassette_file(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text(json.dumps({"interactions": [interaction()]})[:-40])

    with pytest.raises(CassetteError, match="is not valid JSON"):
        load_trace(path)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(CassetteNotFoundError):
        load_trace(tmp_path / "nope.yaml")


def test_yaml_anchors_for_shared_objects_are_read(tmp_path: Path) -> None:
    """PyYAML writes one object used twice as an anchor and aliases; that is plain data."""
    path = tmp_path / "anchors.yaml"
    path.write_text(yaml.safe_dump({"interactions": [interaction()] * 3, "version": 1}))
    assert "&id001" in path.read_text()

    trace = load_trace(path)

    assert [call.usage for call in trace.calls] == [ANTHROPIC_USAGE] * 3
    assert [call.provenance.index for call in trace.calls] == [0, 1, 2]


def _alias_bomb(depth: int) -> str:
    """Nested aliases: under 1 KB of YAML standing for 9**depth strings."""
    lines = ["l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    lines += [f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]" for i in range(1, depth)]
    item = interaction(request="@BODY@")
    text = yaml.safe_dump({"interactions": [item], "version": 1}).replace(
        "body: '@BODY@'",
        "parsed_body:\n"
        f"      model: {MODEL}\n"
        "      max_tokens: 5\n"
        f"      metadata: *l{depth - 1}\n"
        "      messages: [{role: user, content: hi}]",
    )
    return "\n".join(lines) + "\n" + text


def test_yaml_alias_bomb_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "laughs.yaml"
    path.write_text(_alias_bomb(6))
    assert path.stat().st_size < 2048

    with pytest.raises(CassetteError, match=re.escape(str(path))):
        load_cassette(path)


# --- malformed interactions -----------------------------------------------------------------

_CORRUPT_GZIP = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03" + b"\x00garbage\xfe\xff" * 8


def _bad_interactions() -> dict[str, tuple[dict[str, Any], str]]:
    """Bad interaction -> the words its error must contain."""
    sse = 'event: message_start\ndata: {"type": "message_start", "message": {\n\n'
    return {
        "request-invalid-json": (
            interaction(request='{"model": "claude", "messages": [{"role": '),
            "request body",
        ),
        "openai-request-invalid-json": (
            interaction(OPENAI_URI, request='{"model": "gpt-4o", "messages": ['),
            "request body",
        ),
        "response-invalid-json": (
            interaction(response='{"id": "msg_01", "usage": {"input_tokens": '),
            "response body",
        ),
        "response-corrupt-gzip": (
            interaction(response=_CORRUPT_GZIP, response_headers={"Content-Encoding": ["gzip"]}),
            "gzip",
        ),
        "response-corrupt-gzip-no-header": (interaction(response=_CORRUPT_GZIP), "gzip"),
        "response-corrupt-deflate": (
            interaction(
                response=b"\x78\x9c\xde\xad" * 8, response_headers={"Content-Encoding": ["deflate"]}
            ),
            "deflate",
        ),
        "response-corrupt-brotli": (
            interaction(
                response=b"\xce\xb2\xcf\x81" * 8, response_headers={"Content-Encoding": ["br"]}
            ),
            "br",
        ),
        "response-unsupported-encoding": (
            interaction(
                response=b"\x01\x02\x03", response_headers={"Content-Encoding": ["compress"]}
            ),
            "compress",
        ),
        "unknown-anthropic-shape": (
            interaction(response={"id": "msg_01", "type": "something-new", "tokens": 5}),
            "unknown shape",
        ),
        "unknown-openai-shape": (
            interaction(OPENAI_URI, request=OPENAI_REQUEST, response={"result": "ok"}),
            "unknown shape",
        ),
        "response-json-list": (interaction(response="[1, 2, 3]"), "JSON array"),
        "sse-invalid-json": (interaction(response=sse), "not valid JSON"),
        "status-not-a-number": (
            {**interaction(), "response": {**interaction()["response"], "status": "OK"}},
            "status",
        ),
    }


BAD_IDS = list(_bad_interactions())


@pytest.mark.parametrize("kind", BAD_IDS)
def test_malformed_interaction_names_file_and_index(tmp_path: Path, kind: str) -> None:
    bad, needle = _bad_interactions()[kind]
    path = with_bad_second(tmp_path / "bad.yaml", bad)

    with pytest.raises(InteractionError) as caught:
        load_trace(path)

    error = caught.value
    assert error.path == path
    assert error.index == 1
    assert str(error).startswith(f"{path}: interaction 1: ")
    assert needle in str(error)
    assert "\n" not in str(error)


# --- what is not an error -------------------------------------------------------------------


def test_non_llm_interactions_are_counted_not_refused(tmp_path: Path) -> None:
    others = [
        interaction("https://example.com/docs", request="", response=HTML_PAGE, method="GET"),
        interaction("https://uploads.example.com/api/upload", request='{"broken": ', response="{"),
        interaction("https://api.openai.com/v1/models", request="", response="{}", method="GET"),
        interaction(
            "https://api.anthropic.com/v1/messages/count_tokens",
            response={"input_tokens": 12},
        ),
        interaction(ANTHROPIC_URI, request="name=value&x=1", response=HTML_PAGE),
    ]
    for item in others:
        item["response"]["headers"]["Content-Type"] = ["text/html"]
    path = write_yaml(tmp_path / "mixed.yaml", [others[0], interaction(), *others[1:]])

    trace = load_trace(path)

    assert len(trace.calls) == 1
    assert trace.calls[0].provenance.index == 1
    assert trace.calls[0].usage == ANTHROPIC_USAGE
    assert trace.other_interactions == 5
    assert trace.interactions == 6


def _error_interactions() -> list[dict[str, Any]]:
    return [
        interaction(
            status=429,
            response={
                "type": "error",
                "error": {"type": "rate_limit_error", "message": "Number of requests exceeded"},
            },
        ),
        interaction(
            OPENAI_URI,
            request=OPENAI_REQUEST,
            status=500,
            response={"error": {"message": "The server had an error", "type": "server_error"}},
        ),
        interaction(
            status=502, response=HTML_PAGE, response_headers={"Content-Type": ["text/html"]}
        ),
        interaction(status=529, response=""),
    ]


def test_error_responses_are_errored_calls_without_usage(tmp_path: Path) -> None:
    path = write_yaml(tmp_path / "errors.yaml", [interaction(), *_error_interactions()])

    trace = load_trace(path)

    good, *failed = trace.calls
    assert good.usage == ANTHROPIC_USAGE
    assert not good.errored
    assert [call.status for call in failed] == [429, 500, 502, 529]
    assert all(call.errored for call in failed)
    assert all(call.usage is None for call in failed)
    assert failed[0].error == "Number of requests exceeded"
    assert failed[1].error == "The server had an error"
    assert failed[2].error == "HTTP 502"
    assert failed[3].error == "HTTP 529"
    assert trace.other_interactions == 0


def test_report_counts_errored_calls_but_bills_only_usage(tmp_path: Path) -> None:
    path = write_yaml(tmp_path / "errors.yaml", [interaction(), *_error_interactions()])

    result = run_cli("report", "--format", "json", path)

    assert result.exit_code == 0, result.output
    totals = json.loads(result.stdout)["totals"]
    assert totals["llm_calls"] == 5
    assert totals["errored_calls"] == 4
    assert totals["calls_with_usage"] == 1
    assert totals["prompt_tokens"] == 14
    assert totals["output_tokens"] == 7


def test_plain_text_error_body_stored_decoded_under_gzip_header(tmp_path: Path) -> None:
    bad = interaction(
        status=503,
        response="upstream connect error or disconnect/reset before headers",
        response_headers={"Content-Type": ["text/plain"], "Content-Encoding": ["gzip"]},
    )
    path = with_bad_second(tmp_path / "plain.yaml", bad)

    trace = load_trace(path)

    assert [call.status for call in trace.calls] == [200, 503]
    assert trace.calls[1].errored
    assert trace.calls[1].usage is None


# --- the command line -----------------------------------------------------------------------


def _bad_files(tmp_path: Path) -> dict[str, tuple[Path, int | None]]:
    """Each bad cassette and the interaction its error names (None: the file as a whole)."""
    files: dict[str, tuple[Path, int | None]] = {}
    for kind in ("request-invalid-json", "response-corrupt-gzip", "unknown-anthropic-shape"):
        bad, _ = _bad_interactions()[kind]
        files[kind] = (with_bad_second(tmp_path / f"{kind}.yaml", bad), 1)
    text = _three_calls()
    truncated = tmp_path / "truncated.yaml"
    truncated.write_text(text[: text.index('"usage"', _starts(text)[1])])
    files["truncated"] = (truncated, 1)
    not_json = tmp_path / "broken.json"
    not_json.write_text('{"interactions": [')
    files["broken-json"] = (not_json, None)
    binary = tmp_path / "binary.yaml"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\xff")
    files["not-utf8"] = (binary, None)
    return files


BAD_FILE_IDS = [
    "request-invalid-json",
    "response-corrupt-gzip",
    "unknown-anthropic-shape",
    "truncated",
    "broken-json",
    "not-utf8",
]


@pytest.mark.parametrize("kind", BAD_FILE_IDS)
def test_cli_report_on_a_bad_file_is_one_line(tmp_path: Path, kind: str) -> None:
    path, index = _bad_files(tmp_path)[kind]

    line = assert_one_line_error(run_cli("report", path), path, index)

    assert line.startswith("Error: ")


def test_cli_report_on_a_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "nope.yaml"

    assert_one_line_error(run_cli("report", path), path, None)


def test_cli_report_lenient_of_only_bad_files_says_so(tmp_path: Path) -> None:
    """It said "No cassettes: nothing to report." of a file it had found and skipped (a file
    whose structure is broken: one call that cannot be read loses only itself)."""
    bad, _ = _bad_interactions()["status-not-a-number"]
    with_bad_second(tmp_path / "bad.yaml", bad)
    lenient = run_cli("report", "--lenient", tmp_path / "bad.yaml")
    assert lenient.exit_code == 0, lenient.output
    assert lenient.stdout.startswith(
        "No LLM calls reported: the only cassette was unreadable and skipped (--lenient).\n"
    )


def test_cli_report_lenient_skips_the_bad_file(tmp_path: Path) -> None:
    folder = tmp_path / "recordings"
    folder.mkdir()
    write_yaml(folder / "good.yaml", [interaction(), interaction()])
    bad, _ = _bad_interactions()["status-not-a-number"]
    with_bad_second(folder / "bad.yaml", bad)

    strict = run_cli("report", folder)
    lenient = run_cli("report", "--lenient", folder)
    as_json = run_cli("report", "--lenient", "--format", "json", folder)

    assert_one_line_error(strict, folder / "bad.yaml", 1)
    assert lenient.exit_code == 0, lenient.output
    assert "Traceback" not in lenient.output
    warnings = lenient.stderr.strip().splitlines()
    assert len(warnings) == 1
    assert "warning" in warnings[0]
    assert "bad.yaml" in warnings[0]
    assert "interaction 1" in warnings[0]
    assert "good.yaml" in lenient.stdout
    assert as_json.exit_code == 0
    document = json.loads(as_json.stdout)
    assert [Path(item["path"]).name for item in document["cassettes"]] == ["good.yaml"]
    assert document["totals"]["llm_calls"] == 2
    assert document["totals"]["prompt_tokens"] == 28
    assert document["totals"]["output_tokens"] == 14
    assert [Path(item["path"]).name for item in document["skipped"]] == ["bad.yaml"]


def test_cli_cassettes_check_names_the_unreadable_file(tmp_path: Path) -> None:
    folder = tmp_path / "recordings"
    folder.mkdir()
    write_yaml(folder / "good.yaml", [interaction()])
    bad, _ = _bad_interactions()["response-invalid-json"]
    with_bad_second(folder / "bad.yaml", bad)

    result = run_cli("cassettes", "check", folder)

    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    unreadable = [line for line in result.stdout.splitlines() if "] unreadable" in line]
    assert len(unreadable) == 1
    assert "bad.yaml" in unreadable[0]
    assert "interaction 1" in unreadable[0]
    assert "good.yaml: [error] unreadable" not in result.stdout
    assert result.stdout.startswith("1 finding in 1 of 2 cassettes checked")  # answer first


def test_cli_cassettes_check_clean_folder(tmp_path: Path) -> None:
    write_yaml(tmp_path / "good.yaml", [interaction()])

    result = run_cli("cassettes", "check", tmp_path)

    assert result.exit_code == 0, result.output
    assert "1 cassette checked, nothing found" in result.stdout


def test_cli_report_with_a_zoneless_date_does_not_crash(tmp_path: Path) -> None:
    naive = interaction(response_headers={"Date": ["Tue, 04 Mar 2025 11:00:00 -0000"]})
    path = write_yaml(tmp_path / "dates.yaml", [interaction(), naive])

    result = run_cli("report", path)

    assert not isinstance(result.exception, TypeError)
    assert result.exit_code in (0, 2)


def test_cli_report_on_an_iterator_request_body_is_not_a_traceback(tmp_path: Path) -> None:
    item = interaction(request="@BODY@")
    text = yaml.safe_dump({"interactions": [item], "version": 1}).replace(
        "body: '@BODY@'", "body: !!python/object/apply:builtins.iter\n      args: [[a, b]]"
    )
    path = tmp_path / "iter.yaml"
    path.write_text(text)

    result = run_cli("report", path)

    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert result.exit_code in (0, 2)


def test_an_error_fits_the_terminal_and_stays_one_line_in_a_log(tmp_path: Path) -> None:
    """At a terminal a long error wraps to its width; piped (CI logs, grep) it is one line."""
    long_name = tmp_path / "agent.yaml"
    long_name.write_text("interactions:\n- request: {method: POST\n")
    # -q: no progress bar on the terminal (on a loaded machine the read can pass a second)
    command = [sys.executable, "-m", "costsim", "report", str(long_name), "-q"]
    env = {**os.environ, "COLUMNS": "100"}
    piped = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    assert piped.returncode == 2
    assert len(piped.stderr.splitlines()) == 1 and len(piped.stderr) > 100

    leader, follower = pty.openpty()
    with subprocess.Popen(command, stdout=follower, stderr=follower, env=env) as process:
        os.close(follower)
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # the terminal closed: the command has ended
                break
            if not chunk:
                break
            chunks.append(chunk)
        assert process.wait() == 2
    os.close(leader)
    lines = b"".join(chunks).decode().splitlines()
    assert len(lines) >= 2 and all(len(line) <= 100 for line in lines)
    assert " ".join(line.strip() for line in lines) == piped.stderr.strip()


def test_a_cut_json_body_is_said_once_where_and_how_to_go_on(tmp_path: Path) -> None:
    good = interaction()
    cut = interaction()
    cut["response"]["body"]["string"] = cut["response"]["body"]["string"][:40]
    path = write_yaml(tmp_path / "cut.yaml", [good, cut])
    result = CliRunner().invoke(cli, ["report", str(path)])
    assert result.exit_code == 2
    assert result.stderr == (
        f"Error: {path}: interaction 1: response body is not valid JSON (Unterminated string "
        "starting at line 1 column 37); --lenient leaves out what cannot be read, and costsim "
        "cassettes check lists all\n"
    )
    check = CliRunner().invoke(cli, ["cassettes", "check", str(path), "--format", "json"])
    (finding,) = json.loads(check.stdout)["findings"]
    assert finding["interaction"] == 1
    assert finding["message"].startswith("response body is not valid JSON")  # said once


def test_file_names_that_are_not_utf8_are_shown_escaped_never_a_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file name of bytes that are not UTF-8 (Python reads them as lone surrogates) is
    written ``\\xNN`` in every format, with the cache or without, readable or not."""
    folder = tmp_path / "d"
    folder.mkdir()
    base = os.fsencode(folder)
    Path(os.fsdecode(base + b"/ok_\xfename.yaml")).write_bytes(
        (
            Path(__file__).resolve().parents[1] / "cassettes" / "openai_chat_streaming.yaml"
        ).read_bytes()
    )
    Path(os.fsdecode(base + b"/bad_\xffname.yaml")).write_text("not: [valid")
    scenario = tmp_path / "s.yaml"
    scenario.write_text("name: s\ncassettes: [d/*.yaml]\nvariants:\n  c: [caching]\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COSTSIM_CACHE_DIR", str(tmp_path / "cache"))
    runs = [
        ["compare", "s.yaml", "--lenient"],
        ["compare", "s.yaml", "--lenient"],  # recalled
        ["compare", "s.yaml", "--lenient", "--format", "json", "--by", "cassette"],
        ["compare", "s.yaml", "--lenient", "--format", "markdown", "--no-cache", "-v"],
        ["report", "d", "--lenient"],
        ["report", "d", "--lenient", "--format", "json"],
        ["cassettes", "list", "d"],
        ["cassettes", "check", "d", "--format", "json"],
    ]
    for args in runs:
        result = CliRunner().invoke(cli, args)
        assert result.exception is None or isinstance(result.exception, SystemExit), args
        assert result.exit_code in (0, 1), (args, result.output)
        assert "\\xff" in result.output or "\\xfe" in result.output, args  # named, escaped
        assert not any("\udc80" <= char <= "\udcff" for char in result.output), args


def test_a_cassette_cut_between_interactions_is_an_error(tmp_path: Path) -> None:
    """Cut after its first interaction, mid-line, the rest still parses: the missing closing
    'version' key and the missing final newline together say it is truncated (one sentence,
    exit 2). Either sign alone is not enough: some recorders write no version (six corpus
    files), and vcrpy's JSON cassettes end without a newline."""
    source = EXAMPLES / "anthropic_support_agent.yaml"
    cut = tmp_path / "cut.yaml"
    cut.write_bytes(source.read_bytes()[:1500])
    with pytest.raises(CassetteError, match=r"cut.yaml: does not end with a newline and has no "):
        load_cassette(cut)
    result = CliRunner().invoke(cli, ["report", str(cut)])
    assert result.exit_code == 2 and "a truncated cassette?" in result.output
    document = yaml.safe_load(source.read_text())
    del document["version"]
    unversioned = tmp_path / "unversioned.yaml"
    unversioned.write_text(yaml.safe_dump(document))  # ends with a newline: read as usual
    assert len(load_cassette(unversioned).interactions) == len(document["interactions"])
    as_json = tmp_path / "recorded.json"
    as_json.write_text(json.dumps(document, indent=4))  # no final newline, as vcrpy writes
    assert len(load_cassette(as_json).interactions) == len(document["interactions"])
    text = yaml.safe_dump(document)
    whole = {  # complete files without a version key, as other tools write them
        "utf16.yaml": codecs.BOM_UTF16_LE + text.replace("\n", "\r\n").encode("utf-16-le"),
        "bom.json": codecs.BOM_UTF8 + json.dumps(document).encode(),
    }
    for name, data in whole.items():
        (tmp_path / name).write_bytes(data)
        assert len(load_cassette(tmp_path / name).interactions) == len(document["interactions"])
