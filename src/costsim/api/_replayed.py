"""What one interaction a test runner sees vcrpy replay or record is: an LLM call, the note
of one that looks like an LLM call costsim cannot meter, an embeddings request, or other
traffic. Read by the same code as ``costsim report`` reads a cassette
(:mod:`costsim.providers.normalise`), so a test run and a report of its cassettes count
alike."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from costsim.errors import CostsimError
from costsim.io.vcr import interaction_from_vcr
from costsim.model import Call, EmbeddingCall, InteractionNote
from costsim.providers.background import awaiting
from costsim.providers.embeddings import embedding_of
from costsim.providers.normalise import call_from_interaction, load_trace

__all__ = ["read_vcr_call", "read_vcr_interaction"]


def read_vcr_interaction(
    cassette_path: str, index: int, request: Any, response: Mapping[str, Any]
) -> Call | InteractionNote | EmbeddingCall | None:
    """The LLM call of one vcrpy request/response pair; the note of one that looks like an
    LLM call but that costsim cannot meter (``unrecognised-llm-call``, as ``costsim report``
    notes it: Ollama's native ``/api/chat``, a Titan text model on Bedrock); the embeddings
    request it is (``/embeddings``, its usage estimated when none was recorded, as ``costsim
    report`` reads it: billed, in no LLM figure), or the note of one it cannot count
    (``unreadable-embeddings``); None for other traffic (telemetry, ...).

    Raises :class:`~costsim.errors.CostsimError` naming the cassette and interaction when
    the pair looks like an LLM call but cannot be read.
    """
    interaction = interaction_from_vcr(cassette_path, index, request, response)
    found = call_from_interaction(interaction)
    if isinstance(found, Call) and awaiting(found, interaction):
        return _retrieved_later(cassette_path, found)
    if found is None:
        return embedding_of(interaction)
    return found


def read_vcr_call(
    cassette_path: str, index: int, request: Any, response: Mapping[str, Any]
) -> Call | None:
    """The LLM call of one vcrpy request/response pair (None: not an LLM call costsim reads;
    :func:`read_vcr_interaction` tells one it cannot meter apart)."""
    found = read_vcr_interaction(cassette_path, index, request, response)
    return found if isinstance(found, Call) else None


def _retrieved_later(cassette_path: str, call: Call) -> Call:
    """A background request completed from its cassette file, which holds the retrieval
    that carries its usage (as ``costsim report`` reads it); as it is when the file cannot
    be read or holds none (estimated, and said so)."""
    try:
        trace = load_trace(Path(cassette_path))
    except (CostsimError, OSError):
        return call
    done = next((c for c in trace.calls if c.provenance.index == call.provenance.index), None)
    if done is None or done.usage is None:
        return call
    return replace(
        call,
        usage=done.usage,
        service_tier=done.service_tier,
        response=done.response,
        response_model=done.response_model,
        notes=done.notes,
    )
