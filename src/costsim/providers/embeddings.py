"""Embeddings requests: not LLM calls (no strategy changes them, and they are in no LLM
total), but billed, so a report says what they cost beside the LLM calls.

An embeddings request is a successful POST to a path ending in ``/embeddings`` (OpenAI's
``/v1/embeddings``, Azure OpenAI's ``/openai/deployments/NAME/embeddings``, and the
OpenAI-compatible hosts: OpenRouter, Mistral, Together, Voyage) whose JSON response reports
its usage: ``usage.prompt_tokens`` (OpenAI) or ``usage.total_tokens`` (Voyage), all input. Its
model is the one the response names, else the request's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from costsim.io.bodies import parse_json
from costsim.io.cassette import Body, Interaction
from costsim.io.limits import MAX_TOKENS
from costsim.model import EmbeddingCall, Provenance

__all__ = ["embedding_of"]

_PATH_END = "/embeddings"


def embedding_of(interaction: Interaction) -> EmbeddingCall | None:
    """The embeddings request the interaction made; None when it is not one (or its usage
    cannot be read: it stays other traffic, as it was)."""
    if interaction.method != "POST" or not 200 <= interaction.status < 300:
        return None
    if not interaction.url_path.rstrip("/").endswith(_PATH_END):
        return None
    response = _json(interaction.response_body)
    usage = response.get("usage") if response is not None else None
    if not isinstance(usage, Mapping):
        return None
    tokens = usage.get("prompt_tokens", usage.get("total_tokens"))
    if type(tokens) is not int or not 0 <= tokens <= MAX_TOKENS:  # a corrupt count: not billed
        return None
    request = _json(interaction.request_body) or {}
    model = response.get("model") if response is not None else None
    if not isinstance(model, str) or not model:
        model = request.get("model")
    if not isinstance(model, str) or not model:
        return None
    return EmbeddingCall(
        Provenance(interaction.path, interaction.index),
        model,
        tokens,
        interaction.host,
        interaction.recorded_at,
    )


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
