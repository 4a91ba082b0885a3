"""Independent reference computation over the real-cassette corpus.

This module deliberately does NOT import ``costsim``: it is a second, self-contained
implementation of "how many LLM calls does this cassette hold and what did they bill",
used by a conformance test to cross-check the project's own loader.

Definitions (see the corpus README / MANIFEST.tsv):

* LLM call: a request to ``api.anthropic.com`` ``/v1/messages`` or ``api.openai.com``
  ``/v1/chat/completions`` / ``/v1/responses`` (exact path; query string ignored).
  Sub-resources such as ``/v1/messages/count_tokens``, ``/v1/responses/compact``,
  ``/v1/responses/input_tokens`` or ``/v1/responses/{id}`` are not LLM calls, and neither are
  look-alike paths on other hosts (Azure ``/chat/completions``, Mistral ``/v1/chat/completions``).
* Prompt total: Anthropic ``input + cache_creation_input + cache_read_input``; OpenAI chat
  ``prompt_tokens``; OpenAI Responses ``input_tokens``.  Output: ``output_tokens`` /
  ``completion_tokens``.
"""

from __future__ import annotations

import csv
import functools
import gzip
import json
import pathlib
import re
import zlib
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import yaml

try:  # optional: brotli-encoded bodies
    import brotli  # type: ignore[import-untyped]
except ImportError:  # pragma: no cover
    brotli = None

__all__ = [
    "ENDPOINTS",
    "EXTRA_ENDPOINTS",
    "OracleFile",
    "extra_oracle",
    "load_cassette",
    "oracle",
    "read_manifest",
]

# (host, path) -> API kind
ENDPOINTS: dict[tuple[str, str], str] = {
    ("api.anthropic.com", "/v1/messages"): "anthropic",
    ("api.openai.com", "/v1/chat/completions"): "chat",
    ("api.openai.com", "/v1/responses"): "responses",
}


# Billed calls outside the MANIFEST's definition of an LLM call (it counts only the three
# endpoints above): Responses compaction, and Claude through Bedrock's Converse API.
EXTRA_ENDPOINTS: dict[tuple[str, str], str] = {
    ("api.openai.com", "/v1/responses/compact"): "responses",
}
_BEDROCK_CONVERSE = re.compile(r"/model/[^/]*anthropic[^/]*/converse$")
# OpenAI's Chat Completions shape served by other providers' hosts (Azure OpenAI, Mistral):
# billed by those providers, at their prices.
_OTHER_CHAT_HOST = re.compile(r"(\.openai\.azure\.com|^api\.mistral\.ai)$")


@dataclass(frozen=True)
class OracleFile:
    llm_calls: int  # must equal MANIFEST n_llm_calls
    calls_with_usage: int  # must equal MANIFEST n_calls_with_usage
    prompt_tokens: int  # sum over calls with usage of the prompt TOTAL
    output_tokens: int  # sum over calls with usage of output tokens


# --------------------------------------------------------------------------- YAML


class _OracleLoader(yaml.SafeLoader):
    """SafeLoader that also accepts benign python tags as plain data.

    ``!!python/tuple`` -> list; ``!!python/unicode``/``!!python/str`` -> str;
    ``!!python/object/new:<some str subclass>`` (e.g. multidict's ``istr`` header names)
    -> the plain string argument.  Nothing is ever imported or instantiated.
    """


def _construct_seq(loader: yaml.SafeLoader, node: yaml.Node) -> list[Any]:
    assert isinstance(node, yaml.SequenceNode)
    return loader.construct_sequence(node, deep=True)


def _construct_str(loader: yaml.SafeLoader, node: yaml.Node) -> str:
    assert isinstance(node, yaml.ScalarNode)
    return str(loader.construct_scalar(node))


def _construct_object_new(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> Any:
    # !!python/object/new:multidict._multidict.istr [Content-Type]  or  {args: [..]}
    if isinstance(node, yaml.ScalarNode):
        return loader.construct_scalar(node)
    if isinstance(node, yaml.SequenceNode):
        args = loader.construct_sequence(node, deep=True)
    else:
        assert isinstance(node, yaml.MappingNode)
        args = loader.construct_mapping(node, deep=True).get("args", [])
    return args[0] if len(args) == 1 else list(args)


_OracleLoader.add_constructor("tag:yaml.org,2002:python/tuple", _construct_seq)
_OracleLoader.add_constructor("tag:yaml.org,2002:python/unicode", _construct_str)
_OracleLoader.add_constructor("tag:yaml.org,2002:python/str", _construct_str)
_OracleLoader.add_multi_constructor("tag:yaml.org,2002:python/object/new:", _construct_object_new)


# --------------------------------------------------------------------------- bodies


def _headers(msg: dict[str, Any]) -> dict[str, str]:
    """Lower-cased header name -> first value (headers may map to lists or strings)."""
    out: dict[str, str] = {}
    raw = msg.get("headers") or {}
    for key, value in raw.items():
        # values are lists in every corpus file; take the first (some lists are corrupted
        # with a neighbour header's value appended)
        first = (value[0] if value else "") if isinstance(value, (list, tuple)) else value
        out.setdefault(str(key).lower(), str(first))
    return out


def _decode_bytes(data: bytes, encoding: str) -> bytes:
    """Undo content-encoding; tolerate bodies that were already decoded by the recorder.

    gzip is recognised by its magic bytes (with or without a header saying so) and a corrupt
    gzip stream raises; deflate/brotli are attempted only when the header names them.
    """
    encodings = [e.strip().lower() for e in encoding.split(",") if e.strip()]
    if data[:2] == b"\x1f\x8b":
        return gzip.decompress(data)
    if "deflate" in encodings:
        for wbits in (zlib.MAX_WBITS, -zlib.MAX_WBITS):
            try:
                return zlib.decompress(data, wbits)
            except zlib.error:
                pass
    if "br" in encodings and brotli is not None:
        try:
            return bytes(brotli.decompress(data))
        except brotli.error:
            pass
    return data


def _body(msg: dict[str, Any]) -> Any:
    """Return the body as a parsed JSON value (dict/list), a text str, or None."""
    if "parsed_body" in msg:  # pydantic-ai: mapping for JSON, text for SSE
        return msg["parsed_body"]
    raw: Any = msg.get("body")
    if isinstance(raw, dict):
        raw = raw.get("string")
    if raw is None:
        raw = msg.get("content")
    if raw is None:
        return None
    if isinstance(raw, (bytes, bytearray)):
        raw = _decode_bytes(bytes(raw), _headers(msg).get("content-encoding", ""))
        raw = raw.decode("utf-8", errors="replace")
    if not isinstance(raw, str):
        return raw
    text = raw.strip()
    if text.startswith(("{", "[")):
        try:
            return json.loads(text)
        except ValueError:
            pass
    return raw


def _sse_events(text: str) -> list[dict[str, Any]]:
    """JSON payloads of every ``data:`` line in an SSE stream (``[DONE]`` skipped)."""
    events: list[dict[str, Any]] = []
    for line in text.splitlines():
        if not line.startswith("data:"):
            continue
        payload = line[5:].strip()
        if not payload or payload == "[DONE]":
            continue
        try:
            obj = json.loads(payload)
        except ValueError:
            continue
        if isinstance(obj, dict):
            events.append(obj)
    return events


# --------------------------------------------------------------------------- usage


def _int(d: dict[str, Any], key: str) -> int:
    v = d.get(key)
    return int(v) if isinstance(v, (int, float)) else 0


def _anthropic_usage(body: Any) -> tuple[int, int] | None:
    usage: dict[str, Any] | None = None
    if isinstance(body, dict):
        u = body.get("usage")
        usage = dict(u) if isinstance(u, dict) else None
    elif isinstance(body, str):
        for ev in _sse_events(body):
            if ev.get("type") == "message_start":
                u = (ev.get("message") or {}).get("usage")
                if isinstance(u, dict):
                    usage = dict(u)
            elif ev.get("type") == "message_delta" and isinstance(ev.get("usage"), dict):
                # cumulative: every field the delta carries overrides message_start
                usage = {**(usage or {}), **{k: v for k, v in ev["usage"].items() if v is not None}}
    if usage is None:
        return None
    # Top-level usage only. NB: compaction / advisor responses also carry usage["iterations"];
    # the top level covers only the "message" iterations, not "compaction"/"advisor_message".
    prompt = sum(
        _int(usage, k)
        for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    )
    return prompt, _int(usage, "output_tokens")


def _chat_usage(body: Any) -> tuple[int, int] | None:
    usage: Any = None
    if isinstance(body, dict):
        usage = body.get("usage")
    elif isinstance(body, str):
        for ev in _sse_events(body):  # only the final chunk (include_usage) carries it
            if isinstance(ev.get("usage"), dict):
                usage = ev["usage"]
    if not isinstance(usage, dict):
        return None
    return _int(usage, "prompt_tokens"), _int(usage, "completion_tokens")


_FINAL_RESPONSE_EVENTS = ("response.completed", "response.incomplete")


def _responses_usage(body: Any) -> tuple[int, int] | None:
    usage: Any = None
    if isinstance(body, dict):
        usage = body.get("usage")
    elif isinstance(body, str):
        for ev in _sse_events(body):
            resp = ev.get("response")
            done = ev.get("type") in _FINAL_RESPONSE_EVENTS
            if done and isinstance(resp, dict):
                usage = resp.get("usage")
    if not isinstance(usage, dict):
        return None
    return _int(usage, "input_tokens"), _int(usage, "output_tokens")


def _converse_usage(body: Any) -> tuple[int, int] | None:
    usage = body.get("usage") if isinstance(body, dict) else None
    if not isinstance(usage, dict):
        return None
    prompt = sum(
        _int(usage, k) for k in ("inputTokens", "cacheReadInputTokens", "cacheWriteInputTokens")
    )
    return prompt, _int(usage, "outputTokens")


_USAGE = {
    "anthropic": _anthropic_usage,
    "chat": _chat_usage,
    "responses": _responses_usage,
    "converse": _converse_usage,
}


def _kind(request: dict[str, Any]) -> str | None:
    url = urlsplit(str(request.get("uri", "")))
    host = (url.hostname or "").lower()
    return ENDPOINTS.get((host, url.path.rstrip("/")))


def _extra_kind(request: dict[str, Any]) -> str | None:
    url = urlsplit(str(request.get("uri", "")))
    host, path = (url.hostname or "").lower(), url.path.rstrip("/")
    if request.get("method") != "POST":
        return None
    if host.startswith("bedrock-runtime.") and _BEDROCK_CONVERSE.search(path.replace("%3A", ":")):
        return "converse"
    if _OTHER_CHAT_HOST.search(host) and path.endswith("/chat/completions"):
        return "chat"
    return EXTRA_ENDPOINTS.get((host, path))


# --------------------------------------------------------------------------- public API


@functools.lru_cache(maxsize=2)
def _interactions(path: pathlib.Path) -> tuple[dict[str, Any], ...]:
    return tuple(load_cassette(path))


def load_cassette(path: pathlib.Path) -> list[dict[str, Any]]:
    data = yaml.load(path.read_text(encoding="utf-8"), Loader=_OracleLoader)  # SafeLoader subclass
    if isinstance(data, dict):
        return list(data.get("interactions") or [])
    return list(data or [])


def oracle(path: pathlib.Path, *, extra: bool = False) -> OracleFile:
    """The manifest's LLM calls of a file (with ``extra``: the billed calls beyond them)."""
    kind_of = _extra_kind if extra else _kind
    calls = with_usage = prompt = output = 0
    for interaction in _interactions(path):
        kind = kind_of(interaction.get("request") or {})
        if kind is None:
            continue
        calls += 1
        response = interaction.get("response") or {}
        usage = _USAGE[kind](_body(response))
        if usage is None:
            continue
        with_usage += 1
        prompt += usage[0]
        output += usage[1]
    return OracleFile(calls, with_usage, prompt, output)


def extra_oracle(path: pathlib.Path) -> OracleFile:
    return oracle(path, extra=True)


def read_manifest(corpus: pathlib.Path) -> dict[str, dict[str, str]]:
    with (corpus / "MANIFEST.tsv").open(encoding="utf-8", newline="") as fh:
        return {row["file"]: row for row in csv.DictReader(fh, delimiter="\t")}
