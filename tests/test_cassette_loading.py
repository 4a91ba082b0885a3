"""Loading every cassette shape vcrpy (and recorders built on it) can write.

Each test builds a small cassette in ``tmp_path`` and checks what :func:`load_trace` makes of it:
the number of LLM calls, the normalised :class:`Usage` and the recorded date.
"""

from __future__ import annotations

import base64
import gzip
import json
import subprocess
import sys
import zlib
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import brotli
import pytest
import yaml

from costsim.io.cassette import load_cassette
from costsim.model import CassetteTrace, Flavour, Usage
from costsim.providers.normalise import load_trace
from tests.conftest import EXAMPLES

EXAMPLE = EXAMPLES / "anthropic_support_agent.yaml"

ANTHROPIC_URI = "https://api.anthropic.com/v1/messages"
OPENAI_URI = "https://api.openai.com/v1/chat/completions"
DATE = "Tue, 04 Mar 2025 10:00:00 GMT"
RECORDED = datetime(2025, 3, 4, 10, 0, tzinfo=UTC)

ANTHROPIC_MODEL = "claude-3-5-haiku-20241022"
OPENAI_MODEL = "gpt-4o-mini-2024-07-18"

ANTHROPIC_REQUEST: dict[str, Any] = {
    "model": ANTHROPIC_MODEL,
    "max_tokens": 64,
    "messages": [{"role": "user", "content": "Say hello."}],
}
ANTHROPIC_RESPONSE: dict[str, Any] = {
    "id": "msg_01",
    "type": "message",
    "role": "assistant",
    "model": ANTHROPIC_MODEL,
    "content": [{"type": "text", "text": "Hello!"}],
    "stop_reason": "end_turn",
    "usage": {
        "input_tokens": 11,
        "cache_read_input_tokens": 3,
        "cache_creation_input_tokens": 5,
        "output_tokens": 7,
    },
}
ANTHROPIC_USAGE = Usage(uncached_input=11, cache_read=3, cache_write_5m=5, output=7)

OPENAI_REQUEST: dict[str, Any] = {
    "model": "gpt-4o-mini",
    "messages": [{"role": "user", "content": "Say hello."}],
}
OPENAI_RESPONSE: dict[str, Any] = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "model": OPENAI_MODEL,
    "choices": [
        {
            "index": 0,
            "message": {"role": "assistant", "content": "Hello!"},
            "finish_reason": "stop",
        }
    ],
    "usage": {
        "prompt_tokens": 20,
        "completion_tokens": 9,
        "total_tokens": 29,
        "prompt_tokens_details": {"cached_tokens": 4},
        "completion_tokens_details": {"reasoning_tokens": 2},
    },
}
OPENAI_USAGE = Usage(uncached_input=16, cache_read=4, output=9, reasoning=2)

ANTHROPIC_SSE = "".join(
    f"event: {event['type']}\ndata: {json.dumps(event)}\n\n"
    for event in (
        {
            "type": "message_start",
            "message": {
                "id": "msg_02",
                "type": "message",
                "role": "assistant",
                "model": ANTHROPIC_MODEL,
                "content": [],
                "usage": {
                    "input_tokens": 25,
                    "cache_read_input_tokens": 10,
                    "cache_creation_input_tokens": 0,
                    "output_tokens": 1,
                },
            },
        },
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hi"}},
        {"type": "content_block_stop", "index": 0},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn"},
            "usage": {"output_tokens": 15},
        },
        {"type": "message_stop"},
    )
)
ANTHROPIC_SSE_USAGE = Usage(uncached_input=25, cache_read=10, output=15)


# --- builders -------------------------------------------------------------------------------


def _body(value: Any) -> Any:
    return json.dumps(value) if isinstance(value, dict) else value


def interaction(
    uri: str,
    request: Any,
    response: Any,
    *,
    method: str = "POST",
    status: int = 200,
    request_headers: Any = None,
    response_headers: Any = None,
) -> dict[str, Any]:
    """One interaction as vcrpy >= 1.0 writes it; dict bodies are dumped as JSON text."""
    if request_headers is None:
        request_headers = {"Content-Type": ["application/json"]}
    if response_headers is None:
        response_headers = {"Content-Type": ["application/json"], "Date": [DATE]}
    return {
        "request": {
            "body": _body(request),
            "headers": request_headers,
            "method": method,
            "uri": uri,
        },
        "response": {
            "body": {"string": _body(response)},
            "headers": response_headers,
            "status": {"code": status, "message": "OK"},
        },
    }


def anthropic(response: Any = None, **kwargs: Any) -> dict[str, Any]:
    body = ANTHROPIC_RESPONSE if response is None else response
    return interaction(ANTHROPIC_URI, ANTHROPIC_REQUEST, body, **kwargs)


def openai(response: Any = None, **kwargs: Any) -> dict[str, Any]:
    body = OPENAI_RESPONSE if response is None else response
    return interaction(OPENAI_URI, OPENAI_REQUEST, body, **kwargs)


def write_yaml(path: Path, interactions: list[dict[str, Any]]) -> Path:
    path.write_text(yaml.safe_dump({"interactions": interactions, "version": 1}))
    return path


def write_json(path: Path, document: Any) -> Path:
    path.write_text(json.dumps(document, indent=4) + "\n")
    return path


def only_call(trace: CassetteTrace) -> Any:
    assert len(trace.calls) == 1, trace.calls
    assert trace.other_interactions == 0
    return trace.calls[0]


def raw_deflate(data: bytes) -> bytes:
    compressor = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    return compressor.compress(data) + compressor.flush()


# --- serializers ----------------------------------------------------------------------------


def test_yaml_cassette_with_anthropic_and_openai_calls(tmp_path: Path) -> None:
    path = write_yaml(tmp_path / "mixed.yaml", [anthropic(), openai()])

    trace = load_trace(path)

    assert [call.flavour for call in trace.calls] == [
        Flavour.ANTHROPIC_MESSAGES,
        Flavour.OPENAI_CHAT,
    ]
    assert trace.other_interactions == 0
    assert trace.interactions == 2
    first, second = trace.calls
    assert first.usage == ANTHROPIC_USAGE
    assert first.usage.prompt_total == 19
    assert first.model == ANTHROPIC_MODEL
    assert first.response_model == ANTHROPIC_MODEL
    assert first.status == 200
    assert not first.errored
    assert second.usage == OPENAI_USAGE
    assert second.usage.prompt_total == 20
    assert second.model == "gpt-4o-mini"
    assert second.priced_model == OPENAI_MODEL
    assert [call.provenance.index for call in trace.calls] == [0, 1]
    assert all(call.provenance.path == path for call in trace.calls)


def test_anthropic_one_hour_cache_write_is_split_out(tmp_path: Path) -> None:
    response = {
        **ANTHROPIC_RESPONSE,
        "usage": {
            "input_tokens": 4,
            "cache_creation_input_tokens": 30,
            "cache_creation": {"ephemeral_5m_input_tokens": 10, "ephemeral_1h_input_tokens": 20},
            "cache_read_input_tokens": 0,
            "output_tokens": 2,
        },
    }
    path = write_yaml(tmp_path / "split.yaml", [anthropic(response)])

    usage = only_call(load_trace(path)).usage

    assert usage == Usage(uncached_input=4, cache_write_5m=10, cache_write_1h=20, output=2)


@pytest.mark.parametrize("name", ["calls.json", "calls.JSON"])
def test_json_serializer_cassette(tmp_path: Path, name: str) -> None:
    path = write_json(
        tmp_path / name, {"interactions": [anthropic(), openai(), anthropic()], "version": 1}
    )

    trace = load_trace(path)

    assert [call.usage for call in trace.calls] == [ANTHROPIC_USAGE, OPENAI_USAGE, ANTHROPIC_USAGE]
    assert trace.other_interactions == 0


def test_yml_suffix_is_read_as_yaml(tmp_path: Path) -> None:
    path = write_yaml(tmp_path / "calls.yml", [openai()])

    assert only_call(load_trace(path)).usage == OPENAI_USAGE


@pytest.mark.parametrize("serializer", ["yaml", "json"])
def test_pre_1_0_cassette_is_a_bare_list(tmp_path: Path, serializer: str) -> None:
    interactions = [anthropic(), openai()]
    if serializer == "yaml":
        path = tmp_path / "old.yaml"
        path.write_text(yaml.safe_dump(interactions))
    else:
        path = write_json(tmp_path / "old.json", interactions)

    trace = load_trace(path)

    assert [call.usage for call in trace.calls] == [ANTHROPIC_USAGE, OPENAI_USAGE]
    assert trace.other_interactions == 0


def test_pre_1_0_request_with_protocol_host_port_path(tmp_path: Path) -> None:
    old = [
        {
            "request": {
                "body": json.dumps(ANTHROPIC_REQUEST),
                "headers": {"content-type": "application/json"},
                "host": "api.anthropic.com",
                "method": "POST",
                "path": "/v1/messages",
                "port": 443,
                "protocol": "https",
            },
            "response": {
                "body": {"string": json.dumps(ANTHROPIC_RESPONSE)},
                "headers": {"content-type": "application/json", "date": DATE},
                "status": {"code": 200, "message": "OK"},
            },
        }
    ]
    path = write_json(tmp_path / "old.json", old)

    trace = load_trace(path)

    assert only_call(trace).usage == ANTHROPIC_USAGE


def test_pre_1_0_response_headers_as_raw_lines(tmp_path: Path) -> None:
    item = anthropic(response_headers=["Content-Type: application/json\r\n", f"Date: {DATE}\r\n"])
    path = write_json(tmp_path / "old.json", [item])

    call = only_call(load_trace(path))

    assert call.usage == ANTHROPIC_USAGE
    assert call.recorded_at == RECORDED


# --- bodies ---------------------------------------------------------------------------------

_ANTHROPIC_BYTES = json.dumps(ANTHROPIC_RESPONSE).encode()
_OPENAI_BYTES = json.dumps(OPENAI_RESPONSE).encode()


def _encoded(flavour: str, encoding: str) -> tuple[Any, str | None]:
    """(stored body, content-encoding header) of the flavour's response in ``encoding``."""
    data = _ANTHROPIC_BYTES if flavour == "anthropic" else _OPENAI_BYTES
    table: dict[str, tuple[Any, str | None]] = {
        "text": (data.decode(), None),
        "binary": (data, None),
        "gzip": (gzip.compress(data), "gzip"),
        "x-gzip": (gzip.compress(data), "x-gzip"),
        "deflate-zlib": (zlib.compress(data), "deflate"),
        "deflate-raw": (raw_deflate(data), "deflate"),
        "br": (brotli.compress(data), "br"),
        "deflate-then-gzip": (gzip.compress(zlib.compress(data)), "deflate, gzip"),
        "gzip-header-decoded-text": (data.decode(), "gzip"),
        "gzip-header-decoded-binary": (data, "gzip"),
        "br-header-decoded-text": (data.decode(), "br"),
        "gzip-magic-without-header": (gzip.compress(data), None),
        "identity": (data.decode(), "identity"),
    }
    return table[encoding]


ENCODINGS = [
    "text",
    "binary",
    "gzip",
    "x-gzip",
    "deflate-zlib",
    "deflate-raw",
    "br",
    "deflate-then-gzip",
    "gzip-header-decoded-text",
    "gzip-header-decoded-binary",
    "br-header-decoded-text",
    "gzip-magic-without-header",
    "identity",
]


@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize("flavour", ["anthropic", "openai"])
def test_response_body_encodings(tmp_path: Path, flavour: str, encoding: str) -> None:
    stored, header = _encoded(flavour, encoding)
    headers: dict[str, list[str]] = {"Content-Type": ["application/json"], "Date": [DATE]}
    if header is not None:
        headers["Content-Encoding"] = [header]
    build = anthropic if flavour == "anthropic" else openai
    path = write_yaml(tmp_path / "bodies.yaml", [build(stored, response_headers=headers)])
    if isinstance(stored, bytes):
        assert "!!binary" in path.read_text()

    call = only_call(load_trace(path))

    assert call.usage == (ANTHROPIC_USAGE if flavour == "anthropic" else OPENAI_USAGE)
    assert call.recorded_at == RECORDED


def test_binary_tag_written_as_raw_text(tmp_path: Path) -> None:
    """``!!binary`` exactly as vcrpy's dumper lays it out, for both bodies."""
    request_b64 = base64.encodebytes(json.dumps(ANTHROPIC_REQUEST).encode()).decode()
    response_b64 = base64.encodebytes(gzip.compress(_ANTHROPIC_BYTES)).decode()

    def block(data: str, indent: int) -> str:
        pad = " " * indent
        return "".join(f"{pad}{line}\n" for line in data.splitlines())

    text = (
        "interactions:\n"
        "- request:\n"
        "    body: !!binary |\n"
        f"{block(request_b64, 6)}"
        "    headers:\n"
        "      Content-Type:\n"
        "      - application/json\n"
        "    method: POST\n"
        f"    uri: {ANTHROPIC_URI}\n"
        "  response:\n"
        "    body:\n"
        "      string: !!binary |\n"
        f"{block(response_b64, 8)}"
        "    headers:\n"
        "      Content-Encoding:\n"
        "      - gzip\n"
        "      Date:\n"
        f"      - {DATE}\n"
        "    status:\n"
        "      code: 200\n"
        "      message: OK\n"
        "version: 1\n"
    )
    path = tmp_path / "binary.yaml"
    path.write_text(text)

    cassette = load_cassette(path)
    assert cassette.interactions[0].request_body.raw == json.dumps(ANTHROPIC_REQUEST).encode()
    assert cassette.interactions[0].response_body.raw == _ANTHROPIC_BYTES
    assert only_call(load_trace(path)).usage == ANTHROPIC_USAGE


@pytest.mark.parametrize("encoding", ["gzip", "deflate", "br"])
def test_compressed_request_body(tmp_path: Path, encoding: str) -> None:
    data = json.dumps(OPENAI_REQUEST).encode()
    compress = {"gzip": gzip.compress, "deflate": zlib.compress, "br": brotli.compress}[encoding]
    item = openai(
        request_headers={"Content-Type": ["application/json"], "Content-Encoding": [encoding]}
    )
    item["request"]["body"] = compress(data)
    path = write_yaml(tmp_path / "request.yaml", [item])

    call = only_call(load_trace(path))

    assert call.usage == OPENAI_USAGE
    assert call.model == "gpt-4o-mini"


def test_legacy_bytesio_request_body(tmp_path: Path) -> None:
    encoded = base64.b64encode(json.dumps(ANTHROPIC_REQUEST).encode()).decode()
    item = anthropic()
    item["request"]["body"] = "@BODY@"
    text = yaml.safe_dump({"interactions": [item], "version": 1}).replace(
        "body: '@BODY@'",
        "body: !!python/object/new:_io.BytesIO\n"
        "      state: !!python/tuple\n"
        f"      - !!binary {encoded}\n"
        "      - 0\n"
        "      - null",
    )
    assert "_io.BytesIO" in text
    path = tmp_path / "bytesio.yaml"
    path.write_text(text)

    assert only_call(load_trace(path)).usage == ANTHROPIC_USAGE


# --- pydantic-ai parsed_body ----------------------------------------------------------------


def _parsed(uri: str, request: Any, response: Any, content_type: str) -> dict[str, Any]:
    """An interaction as pydantic-ai's cassette serializer writes it: ``parsed_body`` only."""
    return {
        "request": {
            "headers": {"content-type": ["application/json"]},
            "method": "POST",
            "parsed_body": request,
            "uri": uri,
        },
        "response": {
            "headers": {"content-type": [content_type], "date": [DATE]},
            "parsed_body": response,
            "status": {"code": 200, "message": "OK"},
        },
    }


def test_parsed_body_mappings(tmp_path: Path) -> None:
    interactions = [
        _parsed(ANTHROPIC_URI, ANTHROPIC_REQUEST, ANTHROPIC_RESPONSE, "application/json"),
        _parsed(OPENAI_URI, OPENAI_REQUEST, OPENAI_RESPONSE, "application/json"),
    ]
    path = write_yaml(tmp_path / "pydantic_ai.yaml", interactions)
    text = path.read_text()
    assert text.count("    parsed_body:\n      ") == 4  # stored as YAML mappings, not text
    assert "body:" not in text.replace("parsed_body:", "")

    trace = load_trace(path)

    assert [call.usage for call in trace.calls] == [ANTHROPIC_USAGE, OPENAI_USAGE]
    assert trace.calls[0].model == ANTHROPIC_MODEL
    assert trace.calls[0].recorded_at == RECORDED
    assert trace.other_interactions == 0


def test_parsed_body_sse_stream_as_text(tmp_path: Path) -> None:
    request = {**ANTHROPIC_REQUEST, "stream": True}
    item = _parsed(ANTHROPIC_URI, request, ANTHROPIC_SSE, "text/event-stream; charset=utf-8")
    path = write_yaml(tmp_path / "stream.yaml", [item])

    call = only_call(load_trace(path))

    assert call.stream is True
    assert call.usage == ANTHROPIC_SSE_USAGE
    assert call.response_model == ANTHROPIC_MODEL
    assert [block.text for block in call.response] == ["Hi"]


def test_sse_stream_in_plain_body(tmp_path: Path) -> None:
    item = interaction(
        ANTHROPIC_URI,
        {**ANTHROPIC_REQUEST, "stream": True},
        ANTHROPIC_SSE,
        response_headers={"content-type": ["text/event-stream"], "date": [DATE]},
    )
    path = write_yaml(tmp_path / "stream.yaml", [item])

    assert only_call(load_trace(path)).usage == ANTHROPIC_SSE_USAGE


# --- where the response body lives ----------------------------------------------------------


def test_response_body_under_body_string(tmp_path: Path) -> None:
    path = write_yaml(tmp_path / "string.yaml", [anthropic()])
    assert "body:\n      string:" in path.read_text()

    assert only_call(load_trace(path)).usage == ANTHROPIC_USAGE


@pytest.mark.parametrize("content_encoding", [None, "gzip"])
def test_response_body_under_content(tmp_path: Path, content_encoding: str | None) -> None:
    """Cassettes of vcrpy's early httpx stub: ``content`` (already decoded) and ``status_code``."""
    headers = {"content-type": ["application/json"], "date": [DATE]}
    if content_encoding:
        headers["content-encoding"] = [content_encoding]
    item = {
        "request": {
            "body": json.dumps(OPENAI_REQUEST),
            "headers": {"content-type": ["application/json"]},
            "method": "POST",
            "uri": OPENAI_URI,
        },
        "response": {
            "content": json.dumps(OPENAI_RESPONSE),
            "headers": headers,
            "http_version": "HTTP/1.1",
            "status_code": 200,
        },
    }
    path = write_yaml(tmp_path / "httpx.yaml", [item])

    call = only_call(load_trace(path))

    assert call.usage == OPENAI_USAGE
    assert call.status == 200
    assert call.recorded_at == RECORDED


def test_request_body_under_content(tmp_path: Path) -> None:
    item = anthropic()
    item["request"]["content"] = item["request"].pop("body")
    path = write_yaml(tmp_path / "content.yaml", [item])

    assert only_call(load_trace(path)).usage == ANTHROPIC_USAGE


def test_status_as_plain_integer(tmp_path: Path) -> None:
    item = openai()
    item["response"]["status"] = 200
    path = write_yaml(tmp_path / "status.yaml", [item])

    assert only_call(load_trace(path)).status == 200


# --- headers --------------------------------------------------------------------------------

_DEFLATED = zlib.compress(_ANTHROPIC_BYTES)


@pytest.mark.parametrize(
    "headers",
    [
        pytest.param({"Content-Encoding": ["deflate"], "Date": [DATE]}, id="lists"),
        pytest.param({"Content-Encoding": "deflate", "Date": DATE}, id="plain-strings"),
        pytest.param({"CONTENT-ENCODING": "Deflate", "dAtE": [DATE]}, id="mixed-case"),
        pytest.param([["Content-Encoding", "deflate"], ["Date", DATE]], id="list-of-pairs"),
        pytest.param({"content-encoding": [], "Date": [DATE]}, id="empty-encoding-list"),
    ],
)
def test_header_shapes(tmp_path: Path, headers: Any) -> None:
    stored: Any = _DEFLATED
    if isinstance(headers, dict) and headers.get("content-encoding") == []:
        stored = _ANTHROPIC_BYTES.decode()
    path = write_yaml(tmp_path / "headers.yaml", [anthropic(stored, response_headers=headers)])

    cassette = load_cassette(path)
    call = only_call(load_trace(path))

    assert call.usage == ANTHROPIC_USAGE
    assert call.recorded_at == RECORDED
    assert cassette.interactions[0].response_headers["date"] == DATE
    assert cassette.interactions[0].response_headers["DATE"] == DATE


def test_header_value_list_keeps_its_first_value(tmp_path: Path) -> None:
    """Real recordings carry lists where the next header's value leaked in."""
    headers = {"Date": [DATE, "__cf_bm=abc"], "openai-version": ["2020-10-01", "__cf_bm=x"]}
    path = write_yaml(tmp_path / "leak.yaml", [openai(response_headers=headers)])

    headers_read = load_cassette(path).interactions[0].response_headers
    call = only_call(load_trace(path))

    assert headers_read["openai-version"] == "2020-10-01"
    assert len(headers_read) == 2
    assert call.recorded_at == RECORDED


@pytest.mark.parametrize(
    "tag",
    [
        "multidict._multidict.istr",
        "multidict._istr.istr",
        "multidict._multidict_py.istr",
        "multidict.istr",
    ],
)
def test_multidict_istr_header_names_are_plain_strings(tmp_path: Path, tag: str) -> None:
    """aiohttp recordings write header names as istr objects: YAML complex keys."""
    item = anthropic(_DEFLATED, response_headers={"@ENC@": ["deflate"], "@DATE@": [DATE]})
    text = yaml.safe_dump({"interactions": [item], "version": 1})
    for marker, name in (("'@ENC@'", "Content-Encoding"), ("'@DATE@'", "Date")):
        text = text.replace(
            f"      {marker}:\n",
            f"      ? !!python/object/new:{tag}\n      - {name}\n      :\n",
        )
    assert text.count(f"!!python/object/new:{tag}") == 2
    path = tmp_path / "istr.yaml"
    path.write_text(text)

    interaction_read = load_cassette(path).interactions[0]
    call = only_call(load_trace(path))

    names = sorted(interaction_read.response_headers)
    assert names == ["content-encoding", "date"]
    assert all(type(name) is str for name in names)
    assert call.usage == ANTHROPIC_USAGE
    assert call.recorded_at == RECORDED


def test_python_tuple_is_plain_data(tmp_path: Path) -> None:
    item = anthropic(_DEFLATED, response_headers="@HEADERS@")
    text = yaml.safe_dump({"interactions": [item], "version": 1}).replace(
        "headers: '@HEADERS@'",
        "headers: !!python/tuple\n"
        "    - !!python/tuple [Content-Encoding, deflate]\n"
        f"    - !!python/tuple [Date, '{DATE}']",
    )
    assert text.count("!!python/tuple") == 3
    path = tmp_path / "tuple.yaml"
    path.write_text(text)

    call = only_call(load_trace(path))

    assert call.usage == ANTHROPIC_USAGE
    assert call.recorded_at == RECORDED


# --- recorded date --------------------------------------------------------------------------


def test_recorded_date_is_aware_and_per_call(tmp_path: Path) -> None:
    later = "Wed, 05 Mar 2025 23:59:59 GMT"
    interactions = [
        anthropic(),
        openai(response_headers={"Content-Type": ["application/json"], "Date": [later]}),
        anthropic(response_headers={"Content-Type": ["application/json"]}),
    ]
    path = write_yaml(tmp_path / "dates.yaml", interactions)

    first, second, third = load_trace(path).calls

    assert first.recorded_at == RECORDED
    assert first.recorded_at is not None
    assert first.recorded_at.tzinfo is not None
    assert first.recorded_at.utcoffset() is not None
    assert second.recorded_at == datetime(2025, 3, 5, 23, 59, 59, tzinfo=UTC)
    assert third.recorded_at is None


def test_unparseable_date_is_none(tmp_path: Path) -> None:
    headers = {"Date": ["yesterday-ish"]}
    path = write_yaml(tmp_path / "date.yaml", [anthropic(response_headers=headers)])

    call = only_call(load_trace(path))

    assert call.recorded_at is None
    assert call.usage == ANTHROPIC_USAGE


@pytest.mark.parametrize("date", ["Tue, 04 Mar 2025 10:00:00 -0000", "Tue, 04 Mar 2025 10:00:00"])
def test_recorded_date_without_zone_is_still_aware(tmp_path: Path, date: str) -> None:
    path = write_yaml(tmp_path / "naive.yaml", [anthropic(response_headers={"Date": [date]})])

    recorded = only_call(load_trace(path)).recorded_at

    assert recorded is not None
    assert recorded.tzinfo is not None


@pytest.mark.parametrize("form", ["new", "apply"])
def test_str_subclass_header_names_in_either_form(tmp_path: Path, form: str) -> None:
    """aiohttp's header names are multidict ``istr``: PyYAML writes them with ``object/new``
    or, through ``__reduce__``, with ``object/apply``; both are read as plain text."""
    path = tmp_path / "istr.yaml"
    path.write_text(
        "interactions:\n- request:\n    body: null\n    headers: {}\n    method: GET\n"
        "    uri: https://example.com/\n  response:\n    body: {string: ''}\n    headers:\n"
        f"      !!python/object/{form}:multidict._multidict.istr [Content-Type]:\n"
        "      - text/plain\n    status: {code: 200, message: OK}\nversion: 1\n"
    )
    interaction = load_cassette(path).interactions[0]
    assert dict(interaction.response_headers) == {"content-type": "text/plain"}


def test_loading_does_not_need_vcrpy(tmp_path: Path) -> None:
    """Cassettes are read by costsim's own safe loader, the same under any vcrpy version."""
    script = (
        "import sys; sys.modules['vcr'] = None\n"
        "from costsim.providers.normalise import load_trace\n"
        f"print(len(load_trace(__import__('pathlib').Path({str(EXAMPLE)!r})).calls))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    assert int(result.stdout) > 0
