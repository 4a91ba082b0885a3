"""Turn a cassette's interactions into calls: recognise LLM calls, parse them, keep the rest."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from costsim.io.bodies import looks_like_sse, parse_json, parse_sse
from costsim.io.cassette import Cassette, Interaction, load_cassette
from costsim.model import Call, CassetteTrace, Provenance
from costsim.pricing.prices import host_provider
from costsim.providers import Adapter, ParsedResponse, adapter_for

__all__ = ["CassetteTrace", "call_from_interaction", "load_trace", "normalise"]


def load_trace(path: Path) -> CassetteTrace:
    """Load and normalise one cassette file."""
    return normalise(load_cassette(path))


def normalise(cassette: Cassette) -> CassetteTrace:
    calls: list[Call] = []
    foreign: list[Call] = []
    for interaction in cassette.interactions:
        call = _call(interaction)
        if call is None:
            continue
        if _first_party(call):
            calls.append(call)
        else:
            foreign.append(call)
    return CassetteTrace(
        path=cassette.path,
        calls=tuple(calls),
        other_interactions=len(cassette.interactions) - len(calls) - len(foreign),
        size_bytes=cassette.size_bytes,
        foreign_calls=tuple(foreign),
    )


def _first_party(call: Call) -> bool:
    """The provider itself, or a gateway / proxy in front of it (not another provider)."""
    provider = host_provider(call.host)
    return provider is None or provider == call.provider


def call_from_interaction(interaction: Interaction) -> Call | None:
    """The LLM call an interaction made to Anthropic or OpenAI (or a gateway), else None."""
    call = _call(interaction)
    return call if call is not None and _first_party(call) else None


def _request_json(interaction: Interaction) -> Mapping[str, Any] | None:
    body = interaction.request_body
    if isinstance(body.parsed, Mapping):
        return body.parsed
    raw = (body.raw or b"").lstrip()
    if not raw.startswith(b"{"):
        return None
    try:
        decoded = parse_json(raw)
    except ValueError as exc:
        if _is_llm_path(interaction.url_path):
            raise interaction.fail(f"request body {exc}") from None
        return None
    return decoded if isinstance(decoded, Mapping) else None


def _is_llm_path(path: str) -> bool:
    return path.rstrip("/").endswith(("/messages", "/chat/completions", "/responses"))


def _call(interaction: Interaction) -> Call | None:
    request = _request_json(interaction)
    if request is None:
        return None
    adapter = adapter_for(interaction.method, interaction.url_path, request)
    if adapter is None:
        return None
    parsed = adapter.parse_request(request)
    response = _response(interaction, adapter)
    return Call(
        flavour=adapter.flavour,
        model=parsed.model,
        provenance=Provenance(interaction.path, interaction.index),
        host=interaction.host,
        system=parsed.system,
        messages=parsed.messages,
        tools=parsed.tools,
        tool_choice=parsed.tool_choice,
        thinking=parsed.thinking,
        output_schema=parsed.output_schema,
        cache_control=parsed.cache_control,
        stream=parsed.stream,
        response_model=response.model,
        response=response.blocks,
        usage=response.usage,
        status=interaction.status,
        error=response.error,
        recorded_at=interaction.recorded_at or response.created,
        extra=parsed.extra,
    )


def _response(interaction: Interaction, adapter: Adapter) -> ParsedResponse:
    body = interaction.response_body
    failed = interaction.status >= 400
    if isinstance(body.parsed, Mapping):
        parsed = adapter.parse_response(body.parsed)
    elif body.empty:
        return ParsedResponse(
            error=f"HTTP {interaction.status}" if failed else "empty response body"
        )
    else:
        parsed = _parse_raw(interaction, adapter, body.raw or b"", failed)
    if failed:
        return dataclasses.replace(parsed, error=parsed.error or f"HTTP {interaction.status}")
    if parsed.usage is None and not parsed.blocks and parsed.error is None:
        raise interaction.fail(
            f"response to a {adapter.flavour} request has an unknown shape "
            "(no content, usage or error)"
        )
    return parsed


def _parse_raw(
    interaction: Interaction, adapter: Adapter, raw: bytes, failed: bool
) -> ParsedResponse:
    try:
        if looks_like_sse(raw):
            return adapter.parse_stream(parse_sse(raw))
        decoded = parse_json(raw)
    except ValueError as exc:
        if failed:  # an HTML error page from a gateway, say
            return ParsedResponse(error=f"HTTP {interaction.status}")
        raise interaction.fail(f"response body {exc}") from None
    if not isinstance(decoded, Mapping):
        if failed:
            return ParsedResponse(error=f"HTTP {interaction.status}")
        raise interaction.fail(f"response body is JSON {type(decoded).__name__}, not an object")
    return adapter.parse_response(decoded)
