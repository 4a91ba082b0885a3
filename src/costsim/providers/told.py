"""What a response says it used, and what a reader of the numbers must know about it: usage
estimated instead (invalid, cut short, not recorded), an error the response ends in after
the call began (billed: not an errored, unbilled call), and the service tier that served it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from costsim.model import Flavour, Note, NoteKind, Usage
from costsim.providers.base import ParsedResponse

__all__ = ["UNASKED_USAGE", "billed_error", "tier_of", "usage_told"]


def billed_error(response: ParsedResponse) -> bool:
    """An error the response ends in after the call began (a stream cut by an overload, its
    usage reported at the start): the call was billed, it is not an errored (unbilled) one."""
    return response.error is not None and (response.usage is not None or response.incomplete)


def _short_error(error: str) -> str:
    return repr(error if len(error) <= 80 else error[:79] + "…")


UNASKED_USAGE = (
    "a Chat Completions stream recorded without its usage chunk, which OpenAI sends only when "
    'asked: estimated (record with stream_options={"include_usage": True} to bill it exactly)'
)


def usage_told(
    response: ParsedResponse, flavour: Flavour, *, stream: bool | None = False
) -> tuple[Usage | None, Usage | None, list[Note]]:
    """(usage, usage hint, notes): what the response says it used, and what a reader of the
    numbers must know about it (estimated instead, and why)."""
    if response.usage_problems:
        problems = "; ".join(response.usage_problems)
        return (
            None,
            None,
            [Note(NoteKind.INVALID_USAGE, f"invalid usage ({problems}): estimated instead")],
        )
    if response.incomplete:
        why = (
            f"ends in an error ({_short_error(response.error)}) before its usage is final: billed, "
            if response.error is not None
            else "ends before it finishes (cut recording?): "
        )
        told = f"the stream {why}estimated from what arrived; its output was at least that"
        return None, response.usage, [Note(NoteKind.INCOMPLETE_STREAM, told)]
    usage, error = response.usage, response.error
    if usage is None and error is None and flavour is Flavour.ANTHROPIC_TEXT:
        return (
            None,
            None,
            [
                Note(
                    NoteKind.NO_USAGE, "the legacy Text Completions API records no usage: estimated"
                )
            ],
        )
    if usage is None and error is None and not response.blocks:
        return (
            None,
            None,
            [Note(NoteKind.NO_USAGE, "the response body was not recorded (empty): estimated")],
        )
    if usage is None and error is None and stream and flavour is Flavour.OPENAI_CHAT:
        return None, None, [Note(NoteKind.NO_USAGE, UNASKED_USAGE)]
    if error is not None and usage is not None:
        told = (
            f"the response ends in an error ({_short_error(error)}) after its usage: billed "
            "as recorded"
        )
        return usage, None, [Note(NoteKind.ERROR_AFTER_USAGE, told)]
    return usage, None, []


def tier_of(documents: list[Mapping[str, Any]]) -> str | None:
    """The last service tier the response's documents name: OpenAI's ``service_tier`` (of a
    chunk, or of a stream's ``response``), Anthropic's ``usage.service_tier`` (of a stream's
    ``message``)."""
    tier = None
    for document in documents:
        for holder in (document, document.get("response"), document.get("message")):
            if not isinstance(holder, Mapping):
                continue
            usage = holder.get("usage")
            for found in (
                holder.get("service_tier"),
                usage.get("service_tier") if isinstance(usage, Mapping) else None,
            ):
                if isinstance(found, str) and found:
                    tier = found
    return tier
