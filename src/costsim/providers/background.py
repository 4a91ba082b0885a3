"""OpenAI Responses in background mode: the request is answered at once with the response
``queued`` (or ``in_progress``) and no usage; the client then retrieves it
(``GET /v1/responses/{id}``) until it is done, and that retrieval carries the output and the
usage the request was billed for.

The call is the request; a later retrieval of the same response in the cassette completes it
(one call, billed once: retrievals are not calls). A background response the recording never
retrieved done is estimated, and said so.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from typing import Any

from costsim.io.bodies import parse_json
from costsim.io.cassette import Interaction
from costsim.model import Call, Flavour, Note, NoteKind
from costsim.pricing.tiers import CONTEXTS
from costsim.providers import ParsedResponse, adapter_for

__all__ = ["PENDING", "awaiting", "body_of", "completed", "is_pending", "noted"]

PENDING = frozenset({"queued", "in_progress"})
_RETRIEVAL = re.compile(r"/responses/([^/]+)/?$")
_NOT_RETRIEVED = (
    "a background response ({status} when recorded) the recording never retrieved done: estimated"
)
_UNREADABLE_RETRIEVAL = (
    "a background response ({status} when recorded) whose retrieval, interaction {index}, "
    "cannot be read: estimated"
)


def body_of(interaction: Interaction) -> Any:
    """The response body as JSON (None when it is not)."""
    body = interaction.response_body
    if body.parsed is not None:
        return body.parsed
    raw = (body.raw or b"").lstrip()
    if not raw.startswith(b"{"):
        return None
    try:
        return parse_json(raw)
    except ValueError:
        return None


def is_pending(body: Any) -> bool:
    """A Responses body of a background response not done yet (no usage: not a broken one)."""
    return isinstance(body, Mapping) and body.get("status") in PENDING and not body.get("usage")


def awaiting(call: Call, interaction: Interaction) -> bool:
    """``call`` (of ``interaction``) is a background request its response did not finish."""
    return (
        call.flavour is Flavour.OPENAI_RESPONSES
        and call.usage is None
        and not call.errored
        and is_pending(body_of(interaction))
    )


def noted(call: Call, interaction: Interaction) -> Call:
    """``call`` alone (its retrieval not at hand): a background request says so."""
    return _not_done(call, body_of(interaction)) if awaiting(call, interaction) else call


def completed(calls: list[Call], interactions: Sequence[Interaction]) -> list[Call]:
    """``calls`` with each background request completed by its response's last retrieval
    in ``interactions`` that carries usage."""
    pending = {
        call.provenance.index: body_of(interactions[call.provenance.index])
        for call in calls
        if awaiting(call, interactions[call.provenance.index])
    }
    if not pending:
        return calls
    done = _retrieved(interactions)
    broken = _unreadable_retrievals(interactions)
    result = []
    for call in calls:
        body = pending.get(call.provenance.index)
        if body is None:
            result.append(call)
            continue
        found = done.get(str(body.get("id")))
        if found is not None:
            result.append(_done(call, found))
        else:
            result.append(_not_done(call, body, broken.get(str(body.get("id")))))
    return result


def _unreadable_retrievals(interactions: Sequence[Interaction]) -> dict[str, int]:
    """Retrievals whose body cannot be read (a lenient read leaves them out), by response
    id: the interaction of the last."""
    return {
        match.group(1): interaction.index
        for interaction in interactions
        if interaction.method == "GET"
        and (match := _RETRIEVAL.search(interaction.url_path)) is not None
        and interaction.response_body.problem is not None
    }


def _retrieved(interactions: Sequence[Interaction]) -> dict[str, ParsedResponse]:
    found: dict[str, ParsedResponse] = {}
    adapter = adapter_for("POST", "/v1/responses", {"input": ""})  # the Responses adapter
    for interaction in interactions:
        match = _RETRIEVAL.search(interaction.url_path)
        if interaction.method != "GET" or match is None or adapter is None:
            continue
        body = body_of(interaction)
        if not isinstance(body, Mapping):
            continue
        parsed = adapter.parse_response(body)
        if parsed.usage is not None and not parsed.usage_problems:
            tier = body.get("service_tier")
            found[match.group(1)] = dataclasses.replace(
                parsed, service_tier=tier if isinstance(tier, str) else None
            )
    return found


def _done(call: Call, found: ParsedResponse) -> Call:
    notes = tuple(note for note in call.notes if note.kind is not NoteKind.NO_USAGE)
    tier = found.service_tier if found.service_tier in CONTEXTS else None
    usage = found.usage if found.usage is None else dataclasses.replace(found.usage, tier=tier)
    return dataclasses.replace(
        call,
        usage=usage,
        service_tier=tier,
        response=found.blocks,
        response_model=found.model or call.response_model,
        notes=notes,
    )


def _not_done(call: Call, body: Mapping[str, Any], broken: int | None = None) -> Call:
    notes = tuple(note for note in call.notes if note.kind is not NoteKind.NO_USAGE)
    message = _NOT_RETRIEVED.format(status=body.get("status"))
    if broken is not None:  # retrieved, but that body cannot be read
        message = _UNREADABLE_RETRIEVAL.format(status=body.get("status"), index=broken)
    return dataclasses.replace(call, notes=(*notes, Note(NoteKind.NO_USAGE, message)))
