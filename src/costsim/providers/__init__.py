"""Provider adapters: one entry per API flavour, tried in order.

Adding a flavour means writing an adapter (see :class:`costsim.providers.base.Adapter`) and
registering it here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from costsim.providers.anthropic import AnthropicMessages
from costsim.providers.base import Adapter, ParsedRequest, ParsedResponse
from costsim.providers.bedrock_converse import BedrockConverse
from costsim.providers.legacy import AnthropicTextCompletions, OpenAICompletions
from costsim.providers.openai_chat import OpenAIChat
from costsim.providers.openai_responses import OpenAIResponses

__all__ = ["ADAPTERS", "Adapter", "ParsedRequest", "ParsedResponse", "adapter_for", "register"]

ADAPTERS: list[Adapter] = [
    AnthropicMessages(),
    AnthropicTextCompletions(),
    BedrockConverse(),
    OpenAIChat(),
    OpenAICompletions(),
    OpenAIResponses(),
]


def register(adapter: Adapter) -> None:
    """Add an adapter; it is tried before the built-in ones."""
    ADAPTERS.insert(0, adapter)


def adapter_for(method: str, url_path: str, request: Mapping[str, Any]) -> Adapter | None:
    """The adapter whose flavour a request belongs to, recognised by path and body shape."""
    for adapter in ADAPTERS:
        if adapter.matches(method, url_path, request):
            return adapter
    return None
