"""Recognise an LLM call by its response when its request is not a shape costsim reads.

A request body costsim does not model (a new endpoint, a field renamed, a body a recorder
mangled) must not make a billed call vanish into "other interactions". The response tells:
a Messages object or stream, a Chat completion, a Responses object, a Converse usage block.
Each shape is one entry in :data:`SHAPES`, read by the adapter of that flavour, so the usage
is validated exactly as it is for a recognised call. A response that looks like an LLM's but
that costsim cannot meter (Gemini's ``usageMetadata``, an unknown usage block) is reported as
such, never counted silently as "other".
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from costsim.io.bodies import SseEvent
from costsim.model import Flavour, Platform
from costsim.model.quoting import quoted
from costsim.providers.anthropic import AnthropicMessages
from costsim.providers.base import Adapter, ParsedResponse
from costsim.providers.bedrock_converse import BedrockConverse
from costsim.providers.legacy import AnthropicTextCompletions, OpenAICompletions
from costsim.providers.openai_chat import OpenAIChat
from costsim.providers.openai_responses import OpenAIResponses
from costsim.providers.routes import route_of

__all__ = ["SHAPES", "Recognised", "looks_like_llm_path", "recognise"]


@dataclass(frozen=True, slots=True)
class Recognised:
    """What a response shows: a flavour and its parsed response, or only what it looks like."""

    what: str
    """The shape, as a reader would name it ("an Anthropic Messages body")."""
    flavour: Flavour | None = None
    parsed: ParsedResponse | None = None

    @property
    def meterable(self) -> bool:
        parsed = self.parsed
        return (
            self.flavour is not None
            and parsed is not None
            and (parsed.usage is not None or bool(parsed.usage_problems))
        )


def _usage(document: Mapping[str, Any]) -> Mapping[str, Any]:
    usage = document.get("usage")
    return usage if isinstance(usage, Mapping) else {}


def _anthropic(document: Mapping[str, Any]) -> bool:
    return document.get("type") == "message" or "cache_creation_input_tokens" in _usage(document)


def _responses(document: Mapping[str, Any]) -> bool:
    return document.get("object") in ("response", "response.compaction") or (
        "input_tokens" in _usage(document) and "output" in document
    )


def _chat(document: Mapping[str, Any]) -> bool:
    usage = _usage(document)
    return str(document.get("object", "")).startswith("chat.completion") or (
        "prompt_tokens" in usage and "completion_tokens" in usage
    )


def _completion(document: Mapping[str, Any]) -> bool:
    return document.get("object") == "text_completion"


def _converse(document: Mapping[str, Any]) -> bool:
    return "inputTokens" in _usage(document)


def _anthropic_bare(document: Mapping[str, Any]) -> bool:
    usage = _usage(document)
    return "input_tokens" in usage and "output_tokens" in usage


Shape = tuple[str, Callable[[Mapping[str, Any]], bool], Adapter]
SHAPES: list[Shape] = [
    ("an Anthropic Messages body", _anthropic, AnthropicMessages()),
    ("an OpenAI Responses body", _responses, OpenAIResponses()),
    ("an OpenAI Completions body", _completion, OpenAICompletions()),
    ("an OpenAI Chat Completions body", _chat, OpenAIChat()),
    ("a Bedrock Converse body", _converse, BedrockConverse()),
    ("an Anthropic-style usage block", _anthropic_bare, AnthropicMessages()),
]
"""Response shapes, tried in order: (name, test on the decoded JSON, adapter reading it)."""

_STREAM_SHAPES: list[tuple[str, Callable[[SseEvent], bool], Adapter]] = [
    (
        "an Anthropic Messages stream",
        lambda e: e.event == "message_start" or _type(e) == "message_start",
        AnthropicMessages(),
    ),
    ("an OpenAI Responses stream", lambda e: _type(e).startswith("response."), OpenAIResponses()),
    (
        "an OpenAI Chat Completions stream",
        lambda e: str(_get(e, "object")).startswith("chat.completion"),
        OpenAIChat(),
    ),
    ("a Bedrock Converse stream", lambda e: e.event == "metadata", BedrockConverse()),
    (
        "an Anthropic Text Completions stream",
        lambda e: _type(e) == "completion",
        AnthropicTextCompletions(),
    ),
]

_FOREIGN_USAGE = re.compile(r"(?i)usageMetadata|billed_units|token_?count|tokens?_used")


def _get(event: SseEvent, key: str) -> Any:
    return event.data.get(key) if isinstance(event.data, Mapping) else None


def _type(event: SseEvent) -> str:
    kind = _get(event, "type")
    return kind if isinstance(kind, str) else ""


def recognise(document: Any = None, events: list[SseEvent] | None = None) -> Recognised | None:
    """What a decoded response body (JSON ``document`` or stream ``events``) is, if an LLM's."""
    if events:
        for what, test, adapter in _STREAM_SHAPES:
            if any(test(event) for event in events):
                return Recognised(what, adapter.flavour, adapter.parse_stream(events))
        return _foreign([e.data for e in events if isinstance(e.data, Mapping)])
    if isinstance(document, Mapping):
        for what, check, adapter in SHAPES:
            if check(document):
                return Recognised(what, adapter.flavour, adapter.parse_response(document))
        return _foreign([document])
    return None


def _foreign(documents: list[Mapping[str, Any]]) -> Recognised | None:
    for document in documents:
        found = next((key for key in document if _FOREIGN_USAGE.fullmatch(str(key))), None)
        usage = document.get("usage")
        if found is None and isinstance(usage, Mapping) and "completion_tokens" not in usage:
            found = next((k for k in usage if _FOREIGN_USAGE.search(str(k))), None)
        if found is not None:
            return Recognised(f"a usage block costsim does not read ({quoted(found)})")
    return None


_LLM_PATH = re.compile(
    r"(?:/messages|/chat/completions|/completions|/complete|/responses(?:/compact)?|/chat|"
    r"/generate|:generateContent|:streamGenerateContent|:rawPredict|:streamRawPredict|"
    r"/invoke|/invoke-with-response-stream|/converse|/converse-stream)/?$"
)


_EMBEDDINGS_MODEL = re.compile(r"[.-]embed(?:dings?)?(?=[-:.]|$)")
"""A Bedrock model id that names an embeddings model: ``amazon.titan-embed-text-v2:0``,
``cohere.embed-v4:0``, ``amazon.nova-2-multimodal-embeddings-v1:0``."""


def looks_like_llm_path(url_path: str) -> bool:
    """Whether a POST to this path is, by its name, a call to a language model (the
    Assistants API's ``/threads/{id}/messages`` only stores a message; Bedrock's InvokeModel
    of an embeddings model embeds, as ``/embeddings`` does elsewhere: other traffic)."""
    if not _LLM_PATH.search(url_path) or "/threads/" in url_path:
        return False
    route = route_of(url_path)
    return route.platform is not Platform.BEDROCK or not _EMBEDDINGS_MODEL.search(route.model)
