"""Turn a cassette's interactions into calls: recognise LLM calls, parse them, keep the rest.

A request is recognised by its adapter (path and body shape). When its body is not one costsim
reads, the response still tells (:mod:`costsim.providers.usage_only`): a billed call is metered
from its recorded usage and flagged, and an LLM-looking call costsim cannot meter is noted,
never silently counted as "other". Usage that cannot be true is dropped (the call is then
estimated) and noted; so is a stream cut before its final usage event.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from costsim.errors import InteractionError
from costsim.io.bodies import SseEvent, json_kind, looks_like_sse, parse_json, parse_sse
from costsim.io.cassette import Cassette, Interaction, cassette_from_bytes, load_cassette
from costsim.io.eventstream import looks_like_eventstream, parse_eventstream
from costsim.model import (
    Call,
    CassetteTrace,
    EmbeddingCall,
    Flavour,
    InteractionNote,
    Note,
    NoteKind,
    Provenance,
)
from costsim.model.sharing import shared_calls
from costsim.pricing.hosts import host_provider
from costsim.pricing.tiers import CONTEXTS
from costsim.providers import Adapter, ParsedResponse, adapter_for
from costsim.providers._window import windowed
from costsim.providers.background import body_of, completed, is_pending, noted
from costsim.providers.batches import batch_results_note
from costsim.providers.chains import chained
from costsim.providers.embeddings import embedding_of
from costsim.providers.openai_chat import searched
from costsim.providers.routes import Route, route_of
from costsim.providers.told import billed_error, tier_of, usage_told
from costsim.providers.usage_only import Recognised, looks_like_llm_path, recognise
from costsim.providers.write_ttl import split_writes

__all__ = [
    "CALL_LEFT_OUT",
    "CassetteTrace",
    "InteractionNote",
    "call_from_interaction",
    "left_out",
    "load_trace",
    "normalise",
    "trace_from_bytes",
]


def load_trace(path: Path, *, lenient: bool = False) -> CassetteTrace:
    """Load and normalise one cassette file (``lenient``: see :func:`normalise`)."""
    return normalise(load_cassette(path), lenient=lenient)


def trace_from_bytes(path: Path, data: bytes, *, lenient: bool = False) -> CassetteTrace:
    """Normalise the cassette file at ``path`` from its bytes (read by the caller)."""
    return normalise(cassette_from_bytes(path, data), lenient=lenient)


def normalise(cassette: Cassette, *, lenient: bool = False) -> CassetteTrace:
    """The cassette's calls. An interaction that cannot be read raises its error; with
    ``lenient`` it is left out of the calls, a note naming it and why (the cassette's other
    calls are read: a gateway's HTML page in one response loses nothing else)."""
    calls: list[Call] = []
    notes: list[InteractionNote] = []
    embeddings: list[EmbeddingCall] = []
    for interaction in cassette.interactions:
        try:
            call = _call_of(interaction)
        except InteractionError as exc:
            if not lenient or exc.path != interaction.path:
                raise
            call = _left_out(interaction, exc.problem)
        if isinstance(call, InteractionNote):
            notes.append(call)
        elif call is not None:
            calls.append(_served(call))
        elif isinstance(embedding := embedding_of(interaction), InteractionNote):
            notes.append(embedding)  # an embeddings request it cannot count: said
        elif embedding is not None:
            embeddings.append(embedding)
    return CassetteTrace(
        path=cassette.path,
        calls=shared_calls(chained(completed(calls, cassette.interactions))),
        other_interactions=len(cassette.interactions) - len(calls),
        size_bytes=cassette.size_bytes,
        notes=tuple(notes),
        versioned=cassette.versioned,
        embeddings=tuple(embeddings),
    )


_LEFT_OUT = ": left out of the totals (--lenient)"
CALL_LEFT_OUT = "only that call is left out (--lenient)"
"""How a warning of a call a lenient read left out ends (the rest of its file is read)."""


def _left_out(interaction: Interaction, problem: str) -> InteractionNote:
    return InteractionNote(
        Provenance(interaction.path, interaction.index),
        Note(NoteKind.UNREADABLE_CALL, f"{problem}{_LEFT_OUT}"),
    )


def left_out(trace: CassetteTrace) -> list[str]:
    """What a lenient read of ``trace`` left out: one sentence per call that cannot be read,
    naming the file and the interaction (a strict read of the same bytes raises: such a
    trace is never kept in the cache)."""
    return [
        f"{trace.path}: interaction {note.provenance.index}: {note.note.message[: -len(_LEFT_OUT)]}"
        f": {CALL_LEFT_OUT}"
        for note in trace.notes
        if note.note.message.endswith(_LEFT_OUT)
    ]


def _served(call: Call) -> Call:
    """The call, billed by the price list of the provider whose host served it when that is
    another provider's (Azure OpenAI, OpenRouter, Groq, ...; genai-prices knows their hosts),
    not the API's maker, a gateway or proxy on an unknown host, or the platform serving it."""
    provider = host_provider(call.host)
    if provider is None or provider in (call.provider, call.price_provider):
        return call
    return dataclasses.replace(call, served_by=provider)


def call_from_interaction(interaction: Interaction) -> Call | InteractionNote | None:
    """The LLM call an interaction made to Anthropic or OpenAI (or a gateway); the note of
    one that looks like an LLM call costsim cannot meter (as :func:`normalise` notes it);
    None for other traffic."""
    call = _call_of(interaction)
    return noted(_served(call), interaction) if isinstance(call, Call) else call


def _call_of(interaction: Interaction) -> Call | InteractionNote | None:
    """The interaction's call (or note). One whose body cannot be read (corrupt gzip) is an
    error when it looks like an LLM call (its path, or its request's shape); another
    service's (an MCP server's own traffic) is an other interaction, as a readable one is."""
    problem = interaction.request_body.problem or interaction.response_body.problem
    if problem is None:
        return _call(interaction)
    if _looks_like_llm(interaction):
        raise interaction.fail(problem)
    return None


def _looks_like_llm(interaction: Interaction) -> bool:
    if looks_like_llm_path(interaction.url_path) or _is_llm_path(interaction.url_path):
        return True
    try:
        request = None if interaction.request_body.problem else _request_json(interaction)
    except InteractionError:
        return True
    return request is not None and bool(
        adapter_for(interaction.method, interaction.url_path, request)
    )


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


def _call(interaction: Interaction) -> Call | InteractionNote | None:
    request = _request_json(interaction)
    adapter = adapter_for(interaction.method, interaction.url_path, request or {})
    if request is None or adapter is None:
        return _unrecognised(interaction, request)
    parsed = adapter.parse_request(request)
    route = route_of(interaction.url_path)
    return _build(
        interaction,
        adapter.flavour,
        _response(interaction, adapter),
        route,
        model=parsed.model or route.model,
        system=parsed.system,
        messages=parsed.messages,
        tools=parsed.tools,
        tool_choice=parsed.tool_choice,
        thinking=parsed.thinking,
        output_schema=parsed.output_schema,
        cache_control=parsed.cache_control,
        stream=parsed.stream or route.stream,
        extra=parsed.extra,
    )


def _build(
    interaction: Interaction,
    flavour: Flavour,
    response: ParsedResponse,
    route: Route,
    *,
    notes: tuple[Note, ...] = (),
    **request: Any,
) -> Call:
    options = request.get("extra", {}).get("stream_options")
    asked = isinstance(options, Mapping) and bool(options.get("include_usage"))
    usage, hint, told = usage_told(response, flavour, stream=request.get("stream") and not asked)
    extra_notes = [*notes, *told]
    if response.unpriced_fees and usage is not None:
        extra_notes.append(
            Note(
                NoteKind.UNPRICED_FEE,
                f"{', '.join(response.unpriced_fees)} recorded: costsim knows no per-use price "
                "for them, so the cost leaves them out",
            )
        )
    call = Call(
        flavour=flavour,
        provenance=Provenance(interaction.path, interaction.index),
        host=interaction.host,
        response_model=response.model,
        response=response.blocks,
        usage=usage,
        status=interaction.status,
        error=None if billed_error(response) else response.error,
        recorded_at=interaction.recorded_at or response.created,
        platform=route.platform,
        endpoint=interaction.url_path,
        notes=tuple(extra_notes),
        usage_hint=hint,
        recorded_cost=response.recorded_cost if usage is not None else None,
        response_id=response.response_id,
        **request,
    )
    call = searched(call)
    if response.service_tier in CONTEXTS:
        call = _at_service_tier(call, response.service_tier)
    call = split_writes(call, response.unsplit_writes)
    return windowed(call, interaction.request_headers)


def _at_service_tier(call: Call, tier: str) -> Call:
    """``call`` with its usage billed at ``tier``'s prices (see :mod:`costsim.pricing.tiers`)."""
    usage, hint = call.usage, call.usage_hint
    return dataclasses.replace(
        call,
        service_tier=tier,
        usage=None if usage is None else dataclasses.replace(usage, tier=tier),
        usage_hint=None if hint is None else dataclasses.replace(hint, tier=tier),
    )


def _unrecognised(
    interaction: Interaction, request: Mapping[str, Any] | None
) -> Call | InteractionNote | None:
    """A POST whose request no adapter reads: metered from its response when that shows a
    usage block, noted when it only looks like an LLM call, else an "other" interaction."""
    if interaction.status >= 400:
        return _llm_looking(interaction, None)
    batch = batch_results_note(interaction)
    if batch is not None:
        return batch
    if interaction.method != "POST":  # a GET of a stored response bills nothing
        looks = looks_like_llm_path(interaction.url_path) and request is not None
        return _llm_looking(interaction, _recognise_response(interaction)) if looks else None
    found = _recognise_response(interaction)
    if found is None or not found.meterable or found.flavour is None or found.parsed is None:
        return _llm_looking(interaction, found)
    route = route_of(interaction.url_path)
    body = "a body costsim does not read" if request is not None else "a body that is not JSON"
    return _build(
        interaction,
        found.flavour,
        found.parsed,
        route,
        notes=(
            Note(
                NoteKind.USAGE_ONLY,
                f"request to {interaction.url_path or '/'} has {body}; metered from the "
                f"recorded usage of {found.what}",
            ),
        ),
        model=route.model,
        stream=route.stream,
        extra=dict(request or {}),
    )


def _llm_looking(interaction: Interaction, found: Recognised | None) -> InteractionNote | None:
    if found is None and not looks_like_llm_path(interaction.url_path):
        return None
    if found is None and interaction.status >= 400:
        return None  # a failed call to an LLM-looking path bills nothing
    why = f"its response has {found.what}" if found else "by its path"
    return InteractionNote(
        Provenance(interaction.path, interaction.index),
        Note(
            NoteKind.UNRECOGNISED_CALL,
            f"{interaction.method} {interaction.host}{interaction.url_path} looks like an LLM "
            f"call ({why}) but costsim cannot meter it: not in the totals",
        ),
    )


def _recognise_response(interaction: Interaction) -> Recognised | None:
    body = interaction.response_body
    if isinstance(body.parsed, Mapping):
        return recognise(document=body.parsed)
    raw = body.raw or b""
    try:
        events = _events(raw)
        if events is not None:
            return recognise(events=events)
        return recognise(document=parse_json(raw)) if raw.lstrip().startswith(b"{") else None
    except ValueError:
        return None  # an unreadable body of an unknown request: nothing to meter


def _events(raw: bytes) -> list[SseEvent] | None:
    if looks_like_eventstream(raw):
        return parse_eventstream(raw)
    if looks_like_sse(raw):
        return parse_sse(raw)
    return None


def _response(interaction: Interaction, adapter: Adapter) -> ParsedResponse:
    body = interaction.response_body
    failed = interaction.status >= 400
    if isinstance(body.parsed, Mapping):
        parsed = adapter.parse_response(body.parsed)
        parsed = dataclasses.replace(parsed, service_tier=tier_of([body.parsed]))
    elif body.empty:
        # A success whose body was not recorded was still billed: estimated, not unbilled.
        return ParsedResponse(error=f"HTTP {interaction.status}" if failed else None)
    else:
        parsed = _parse_raw(interaction, adapter, body.raw or b"", failed)
    if failed:  # a request the API refused is not billed, whatever its body says of usage
        error = parsed.error or f"HTTP {interaction.status}"
        return dataclasses.replace(
            parsed, error=error, usage=None, usage_problems=(), incomplete=False
        )
    if (
        parsed.usage is None
        and not parsed.blocks
        and parsed.error is None
        and not parsed.usage_problems
        and not parsed.incomplete
        and not is_pending(body_of(interaction))  # completed by a later retrieval
    ):
        article = "an" if str(adapter.flavour)[:1] in "aeiou" else "a"
        raise interaction.fail(
            f"response to {article} {adapter.flavour} request has an unknown shape "
            "(no content, usage or error)"
        )
    return parsed


def _parse_raw(
    interaction: Interaction, adapter: Adapter, raw: bytes, failed: bool
) -> ParsedResponse:
    try:
        events = _events(raw)
        if events is not None:
            tier = tier_of([e.data for e in events if isinstance(e.data, Mapping)])
            return dataclasses.replace(adapter.parse_stream(events), service_tier=tier)
        decoded = parse_json(raw)
    except ValueError as exc:
        if failed:  # an HTML error page from a gateway, say
            return ParsedResponse(error=f"HTTP {interaction.status}")
        raise interaction.fail(f"response body {exc}") from None
    if not isinstance(decoded, Mapping):
        if failed:
            return ParsedResponse(error=f"HTTP {interaction.status}")
        raise interaction.fail(f"response body is a JSON {json_kind(decoded)}, not an object")
    return dataclasses.replace(adapter.parse_response(decoded), service_tier=tier_of([decoded]))
