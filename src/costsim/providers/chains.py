"""OpenAI Responses requests that continue a stored response (``previous_response_id``).

Such a request sends only its new input; the server prepends the stored conversation: the
earlier request's input and the response it gave (instructions and tools are the request's
own, not carried over). Its recorded prompt counts all of it. When the cassette holds the
response it continues, the request is given that history, so the cache simulation sees the
prefix the server saw and a strategy that changes a tool result changes it in every later
request of the chain. When it does not, a note says the history is billed but not visible.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from costsim.model import Block, Call, Flavour, Message, Note, NoteKind, TextBlock

__all__ = ["chained"]


def chained(calls: Sequence[Call], stored: dict[str, Call] | None = None) -> list[Call]:
    """``calls`` with each request that continues a stored response in the list given the
    conversation it continues (in order: a chain's requests each build on the one before).
    ``stored``: the responses seen before ``calls`` (by id; ``calls``' own are added to it),
    for calls that continue across lists (the tests of one run)."""
    stored = {} if stored is None else stored
    result = []
    for sent in calls:
        call = sent
        previous = sent.extra.get("previous_response_id")
        if sent.flavour is Flavour.OPENAI_RESPONSES and isinstance(previous, str) and previous:
            before = stored.get(previous)
            if before is not None:
                history = (*before.messages, *_turns(before.response))
                call = dataclasses.replace(sent, messages=(*history, *sent.messages))
            else:
                call = dataclasses.replace(sent, notes=(*sent.notes, _UNSEEN))
        if call.response_id:
            stored[call.response_id] = call
        result.append(call)
    return result


_UNSEEN = Note(
    NoteKind.UNSEEN_HISTORY,
    "continues a stored response the cassette does not hold (previous_response_id): its "
    "history is in the recorded prompt but not visible, so what-ifs reach only the new input",
)


def _turns(response: tuple[Block, ...]) -> list[Message]:
    """A response's output as the assistant turns the server stores: its text together, each
    other item (a function call, a reasoning item, ...) a turn of its own, in order."""
    turns: list[Message] = []
    text: list[Block] = []
    for block in response:
        if isinstance(block, TextBlock):
            text.append(block)
            continue
        if text:
            turns.append(Message("assistant", tuple(text)))
            text = []
        turns.append(Message("assistant", (block,)))
    if text:
        turns.append(Message("assistant", tuple(text)))
    return turns
