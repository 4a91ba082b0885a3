"""``lean_context``: light side calls get the instructions and the task, not the history.

A call whose task is light (summarise, extract, classify, translate: ``patterns`` matched on
the latest user text, the system prompt, or both) is sent with its base instructions (system
prompt, system / developer messages) and its last ``keep_last`` messages only. When the kept
part starts with tool results, the assistant turn that called those tools is kept too, so the
request stays valid.

Divergence: the recorded response refers to something only the dropped history held (a path,
an identifier with digits, a long number, a quoted string).
"""

from __future__ import annotations

import dataclasses
import re
from typing import Literal

from pydantic import Field

from costsim.engine.registry import Context, Params, register
from costsim.engine.trace import Event, SimCall, SimTrace
from costsim.model import Call, Message, TextBlock, ToolResultBlock, ToolUseBlock

__all__ = ["LeanContext", "LeanContextParams"]

DEFAULT_PATTERNS = [r"\b(summari[sz]e|extract|classify|categori[sz]e|translate)\b"]
_DISTINCTIVE = re.compile(
    r"(?:[\w.-]+/)+[\w.-]+|\b[A-Za-z_]+\d+[A-Za-z_\d]*\b|\b\d{3,}\b|\"[^\"\n]{8,60}\""
)


class LeanContextParams(Params):
    patterns: list[str] = Field(default_factory=lambda: list(DEFAULT_PATTERNS))
    match_on: Literal["user", "system", "both"] = "user"
    keep_last: int = Field(default=1, ge=1)


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
    user = tuple(m for m in call.messages if m.role == "user")
    return _text(user[-1:]) if user else ""


def _system_text(call: Call) -> str:
    system = [b.text for b in call.system if isinstance(b, TextBlock)]
    return "\n".join(system) + _text(tuple(m for m in call.messages if _is_instruction(m)))


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
            if not any(p.search(text) for p in patterns):
                calls.append(item)
                continue
            messages = _lean(call, params.keep_last)
            if len(messages) == len(call.messages):
                calls.append(item)
                continue
            dropped = tuple(m for m in call.messages if m not in messages)
            events.append(
                Event(
                    self.name,
                    "change",
                    f"light task: sent {len(messages)} of {len(call.messages)} messages",
                    call.provenance,
                )
            )
            reference = self._reference(call, messages, dropped)
            if reference is not None:
                events.append(
                    Event(
                        self.name,
                        "divergence",
                        f"the recorded response refers to {reference!r}, "
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
        kept_text, dropped_text = _text(kept) + _system_text(call), _text(dropped)
        for match in _DISTINCTIVE.finditer(response):
            token = match.group(0)
            if token in dropped_text and token not in kept_text:
                return token[:40]
        return None


register(LeanContext())
