"""``lean_context``: light side calls get the instructions and the task, not the history.

A call whose task is light (summarise, extract, classify, translate: ``patterns``, case
insensitive, matched on the latest user text, the system prompt, or either) is sent with its
base instructions (system prompt, system / developer messages) and its last ``keep_last``
messages only. When the kept part starts with tool results, the assistant turn that called
those tools is kept too, so the request stays valid. The latest user text is the text of the
latest user (or tool) turn; tool-result content is not user text, so a call answering tool
results is light only by its system prompt.

Divergence: the recorded response (its text or tool inputs) refers to something only the
dropped history held: a distinctive token (:func:`costsim.strategies.distinctive.distinctive`:
an identifier, a quoted string or code span, a number of 3+ digits, a file path) present in the
dropped messages and absent from the kept request.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Literal

from pydantic import Field, field_validator

from costsim.model import Call, Message, TextBlock, ToolResultBlock, ToolUseBlock
from costsim.model.quoting import quoted
from costsim.strategies.base import Context, Params
from costsim.strategies.distinctive import distinctive
from costsim.strategies.trace import Event, SimCall, SimTrace

__all__ = ["LeanContext", "LeanContextParams"]

DEFAULT_PATTERNS = [r"\b(summari[sz]e|extract|classify|categori[sz]e|translate)\b"]


class LeanContextParams(Params):
    patterns: list[str] = Field(default_factory=lambda: list(DEFAULT_PATTERNS))
    """Regexes (case insensitive) recognising a light task."""
    match_on: Literal["user", "system", "both"] = "user"
    """Where to look: the latest user text, the system prompt, or either."""
    keep_last: int = Field(default=1, ge=1)
    """Conversation messages kept (more when a kept tool result needs its tool call)."""

    @field_validator("patterns")
    @classmethod
    def _compiles(cls, value: list[str]) -> list[str]:
        for pattern in value:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"{pattern!r} is not a regular expression: {exc}") from None
        return value


def _text(messages: tuple[Message, ...]) -> str:
    parts = []
    for message in messages:
        for block in message.content:
            if isinstance(block, TextBlock | ToolResultBlock):
                parts.append(block.text)
            elif isinstance(block, ToolUseBlock):
                parts.append(str(block.input))
    return "\n".join(parts)


def _is_instruction(message: Message) -> bool:
    return message.role in ("system", "developer")


def _latest_user_text(call: Call) -> str:
    for message in reversed(call.messages):
        if message.role in ("user", "tool"):
            return "\n".join(b.text for b in message.content if isinstance(b, TextBlock))
    return ""


def _system_text(call: Call) -> str:
    system = [b.text for b in call.system if isinstance(b, TextBlock)]
    instructions = _text(tuple(m for m in call.messages if _is_instruction(m)))
    return "\n".join([*system, instructions])


def _lean(call: Call, keep_last: int) -> tuple[Message, ...]:
    conversation = [m for m in call.messages if not _is_instruction(m)]
    start = max(0, len(conversation) - keep_last)
    while start > 0 and any(isinstance(b, ToolResultBlock) for b in conversation[start].content):
        start -= 1  # keep the assistant turn whose tool calls these results answer
    kept = {id(m) for m in conversation[start:]}
    return tuple(m for m in call.messages if _is_instruction(m) or id(m) in kept)


class LeanContext:
    name = "lean_context"
    summary = "send light side calls their instructions and task only"
    params = LeanContextParams
    removes_only = True
    """It only takes content away from requests (or changes none): see
    :func:`costsim.analysis.prompt_band.removes_only`."""

    def apply(
        self, trace: SimTrace, params: LeanContextParams, context: Context
    ) -> tuple[SimTrace, list[Event]]:
        patterns = [re.compile(p, re.IGNORECASE) for p in params.patterns]
        events: list[Event] = []
        calls: list[SimCall] = []
        for item in trace.calls:
            call = item.call
            text = {
                "user": _latest_user_text(call),
                "system": _system_text(call),
                "both": _latest_user_text(call) + "\n" + _system_text(call),
            }[params.match_on]
            task = next((m for m in (p.search(text) for p in patterns) if m is not None), None)
            if task is None:
                calls.append(item)
                continue
            messages = _lean(call, params.keep_last)
            if len(messages) == len(call.messages):
                calls.append(item)
                continue
            kept_ids = {id(m) for m in messages}
            dropped = tuple(m for m in call.messages if id(m) not in kept_ids)
            events.append(
                Event(
                    self.name,
                    "change",
                    f"light task ({quoted(task.group(0))}): dropped {len(dropped)} of "
                    f"{len(call.messages)} messages",
                    call.provenance,
                )
            )
            reference = self._reference(call, messages, dropped)
            if reference is not None:
                events.append(
                    Event(
                        self.name,
                        "divergence",
                        f"the recorded response refers to {quoted(reference)}, "
                        "only in the dropped history",
                        call.provenance,
                    )
                )
            calls.append(
                dataclasses.replace(item, call=dataclasses.replace(call, messages=messages))
            )
        return SimTrace(trace.path, tuple(calls)), events

    def _reference(
        self, call: Call, kept: tuple[Message, ...], dropped: tuple[Message, ...]
    ) -> str | None:
        response = _text((Message("assistant", call.response),))
        tools = "\n".join(f"{t.name}\n{t.description}" for t in call.tools)
        kept_text = "\n".join((_system_text(call), _text(kept), tools))
        dropped_text = _text(dropped)
        for token in distinctive(response):
            if token in dropped_text and token not in kept_text:
                return token[:60]
        return None
