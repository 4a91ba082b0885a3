"""Whether an Anthropic call's recorded prompt could be billed at a long-context tier.

Anthropic bills a prompt above 200K tokens at its long-context rates only when the request
enables the 1M-token context window (the ``context-1m-…`` beta: the ``anthropic-beta`` header,
or ``anthropic_beta`` in the body on Bedrock and Vertex); without it no single request may pass
the standard window. A response that ran server tools (web search, web fetch, code execution)
records usage summed over its sampling iterations, so that sum can pass 200K while no
iteration did: such a call is billed at the base tier (:attr:`costsim.model.Usage.base_tier`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from costsim.model import Call, Flavour, Note, NoteKind, Usage
from costsim.pricing.window import context_window

__all__ = [
    "BASE_TIER_NOTE",
    "LONG_CONTEXT_FROM",
    "LONG_WINDOW_BETA",
    "UNSEEN_WINDOW_NOTE",
    "hides_its_window",
    "long_window",
    "sums_standard_samplings",
    "windowed",
]

LONG_WINDOW_BETA = "context-1m"
"""The prefix of the beta that enables the 1M-token window (``context-1m-2025-08-07``)."""
LONG_CONTEXT_FROM = 200_000
"""The prompt above which Anthropic's long-context rates apply (with the 1M window)."""
BASE_TIER_NOTE = (
    "a prompt over 200K tokens summed over server-tool iterations, without the 1M-context "
    "beta: priced at the base tier (no iteration could pass 200K)"
)


UNSEEN_WINDOW_NOTE = (
    "a prompt over 200K tokens from a request the recording shows without the 1M-context "
    "beta, which the API needs for it (the recorder dropped the anthropic-beta header?): "
    "priced as billed, at the long-context rate where the model has one"
)


def _betas(value: Any) -> list[str]:
    if isinstance(value, str):
        return [part.strip() for part in value.split(",")]
    if isinstance(value, list | tuple):
        return [part for item in value for part in _betas(item)]
    return []


def long_window(headers: Mapping[str, str], body: Mapping[str, Any]) -> bool:
    """Whether the request enables the 1M-token context window."""
    betas = _betas(headers.get("anthropic-beta")) + _betas(body.get("anthropic_beta"))
    betas += _betas(body.get("betas"))
    return any(beta.startswith(LONG_WINDOW_BETA) for beta in betas)


def sums_standard_samplings(call: Call, headers: Mapping[str, str]) -> bool:
    """Whether the call's usage sums server-tool iterations of a request that does not
    enable the long window, so each iteration stayed within the standard one."""
    return (
        call.flavour is Flavour.ANTHROPIC_MESSAGES
        and bool(call.server_tools)
        and not long_window(headers, call.extra)
    )


def hides_its_window(call: Call, headers: Mapping[str, str]) -> bool:
    """Whether an Anthropic call without server tools billed a prompt over 200K tokens while
    its recorded request does not enable the long window: it must have (no single request
    passes the standard window), so the recording lost that."""
    usage = call.usage if call.usage is not None else call.usage_hint
    if (
        call.flavour is not Flavour.ANTHROPIC_MESSAGES
        or call.server_tools
        or usage is None
        or usage.prompt_total <= LONG_CONTEXT_FROM
        or long_window(headers, call.extra)
    ):
        return False
    # a model whose standard window is 1M tokens (Sonnet 4.6, Opus 4.6 and later) needs no beta
    window = context_window(call.priced_model, call.price_provider)
    return window is not None and window <= LONG_CONTEXT_FROM


def windowed(call: Call, headers: Mapping[str, str]) -> Call:
    """``call`` billed at the tier its window allows: at the base tier when its usage sums
    server-tool iterations of a request without the long window, noted when its recording
    hides a long window it must have had."""
    if sums_standard_samplings(call, headers):
        return _at_base_tier(call)
    if hides_its_window(call, headers):
        note = Note(NoteKind.LONG_WINDOW_UNSEEN, UNSEEN_WINDOW_NOTE)
        return dataclasses.replace(call, notes=(*call.notes, note))
    return call


def _at_base_tier(call: Call) -> Call:
    """``call`` with its usage (and a cut stream's partial usage) flagged as billed at the
    base tier, and a note when that moves its price (a prompt over 200K tokens)."""

    def flagged(usage: Usage | None) -> Usage | None:
        return None if usage is None else dataclasses.replace(usage, base_tier=True)

    usage, hint = flagged(call.usage), flagged(call.usage_hint)
    known = usage if usage is not None else hint
    notes = call.notes
    if known is not None and known.prompt_total > LONG_CONTEXT_FROM:
        notes = (*notes, Note(NoteKind.BASE_TIER, BASE_TIER_NOTE))
    return dataclasses.replace(call, usage=usage, usage_hint=hint, notes=notes)
