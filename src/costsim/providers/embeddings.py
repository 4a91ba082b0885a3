"""Embeddings requests: not LLM calls (no strategy changes them, and they are in no LLM
total), but billed, so a report says what they cost beside the LLM calls.

An embeddings request is a successful POST to a path ending in ``/embeddings`` (OpenAI's
``/v1/embeddings``, Azure OpenAI's ``/openai/deployments/NAME/embeddings``, and the
OpenAI-compatible hosts: OpenRouter, Mistral, Together, Voyage). Its tokens are the usage its
JSON response reports: ``usage.prompt_tokens`` (OpenAI) or ``usage.total_tokens`` (Voyage),
all input. A response without usable usage leaves them to be estimated from the request's
``input`` (a string or a list of them; token arrays count as their length), never dropped;
one whose input cannot be read either (or that names no model) is a note. Its model is the
one the response names, else the request's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from costsim.io.bodies import parse_json
from costsim.io.cassette import Body, Interaction
from costsim.io.limits import MAX_TOKENS
from costsim.model import (
    EmbeddingCall,
    EmbeddingInput,
    InteractionNote,
    Note,
    NoteKind,
    Provenance,
)

__all__ = ["embedding_of"]

_PATH_END = "/embeddings"


def embedding_of(interaction: Interaction) -> EmbeddingCall | InteractionNote | None:
    """The embeddings request the interaction made; the note of one whose tokens cannot be
    known; None when it is not one."""
    if interaction.method != "POST" or not 200 <= interaction.status < 300:
        return None
    if not interaction.url_path.rstrip("/").endswith(_PATH_END):
        return None
    response = _json(interaction.response_body) or {}
    request = _json(interaction.request_body) or {}
    model = response.get("model")
    if not isinstance(model, str) or not model:
        model = request.get("model")
    where = Provenance(interaction.path, interaction.index)
    if not isinstance(model, str) or not model:
        return _unreadable(where, "names no model, so it cannot be priced")
    tokens = _reported(response.get("usage"))
    sent = None if tokens is not None else _sent(request)
    if tokens is None and sent is None:
        return _unreadable(where, "without usage whose input cannot be read")
    return EmbeddingCall(where, model, tokens, interaction.host, interaction.recorded_at, sent)


def _reported(usage: object) -> int | None:
    """The input tokens the response's usage reports; None without a usable count (a count
    past any model's is corrupt)."""
    if not isinstance(usage, Mapping):
        return None
    tokens = usage.get("prompt_tokens", usage.get("total_tokens"))
    if type(tokens) is not int or not 0 <= tokens <= MAX_TOKENS:
        return None
    return tokens


def _sent(request: Mapping[str, Any]) -> EmbeddingInput | None:
    """The request's input (Ollama's ``/api/embeddings``: its ``prompt``): a string, a list
    of strings, a token array or a list of them; None for anything else."""
    given = request.get("input", request.get("prompt"))
    if isinstance(given, str):
        return EmbeddingInput(texts=(given,))
    if not isinstance(given, list):
        return None
    if all(isinstance(item, str) for item in given):
        return EmbeddingInput(texts=tuple(given))
    if all(_token_array(item) for item in given):
        return EmbeddingInput(tokens=sum(len(item) for item in given))
    if _token_array(given):
        return EmbeddingInput(tokens=len(given))
    return None


def _token_array(item: object) -> bool:
    return (
        isinstance(item, Sequence)
        and not isinstance(item, str)
        and all(type(token) is int for token in item)
    )


def _unreadable(where: Provenance, why: str) -> InteractionNote:
    message = f"embeddings request {why}: in no embeddings figure"
    return InteractionNote(where, Note(NoteKind.UNREADABLE_EMBEDDINGS, message))


def _json(body: Body) -> Mapping[str, Any] | None:
    if body.problem is not None:
        return None
    if isinstance(body.parsed, Mapping):
        return body.parsed
    raw = body.raw or b""
    if not raw.lstrip().startswith(b"{"):
        return None
    try:
        parsed = parse_json(raw)
    except ValueError:
        return None
    return parsed if isinstance(parsed, Mapping) else None
