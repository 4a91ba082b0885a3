"""``truncation``: cap the text of large tool results.

A result over ``max_chars`` keeps its first ``head`` and last ``tail`` characters around the
marker ``[... N lines truncated for context efficiency ...]`` (N = line breaks in the removed
middle, at least 1); an error result is capped at ``error_max_chars``. The same result is
truncated the same way in every later request that re-sends it.

Divergence: a later assistant message (a recorded response, or an assistant turn re-sent in a
later request) quotes a line that existed only in a removed middle, or names a distinctive
token (:func:`costsim.strategies.distinctive.distinctive`: an identifier, a path, a quoted
string, a number) that only a removed middle held: the recorded future depended on text the
variant would not have sent.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import Field, model_validator

from costsim.model import Block, Call, Message, TextBlock, ToolResultBlock, ToolUseBlock
from costsim.model.quoting import short_name
from costsim.strategies.base import Context, Params
from costsim.strategies.distinctive import distinctive
from costsim.strategies.trace import Event, SimCall, SimTrace

__all__ = ["Truncation", "TruncationParams", "truncate_text"]

MARKER = "[... {n} lines truncated for context efficiency ...]"
_QUOTE_MIN_CHARS = 24


class TruncationParams(Params):
    max_chars: int = Field(default=8000, ge=1)
    """Tool results longer than this many characters are cut."""
    head: int = Field(default=3000, ge=0)
    """Characters kept from the start of a cut result (default: 3/8 of max_chars)."""
    tail: int = Field(default=2000, ge=0)
    """Characters kept from the end of a cut result (default: 1/4 of max_chars)."""
    error_max_chars: int = Field(default=2000, ge=1)
    """Error results are capped at this many characters."""

    def written(self) -> dict[str, Any]:
        """Besides what differs from the defaults, ``head`` and ``tail`` where they differ from
        what follows from ``max_chars`` (``max_chars=9000,head=3000`` keeps its 3,000: left
        out, head would follow to 3,375)."""
        values = super().written()
        follows = {"head": self.max_chars * 3 // 8, "tail": self.max_chars // 4}
        for name, value in follows.items():
            if getattr(self, name) == value:
                values.pop(name, None)
            else:
                values[name] = getattr(self, name)
        return values

    @model_validator(mode="after")
    def _fits(self) -> TruncationParams:
        # max_chars alone: head and tail keep their share of it (3/8 and 1/4, as 3000 and
        # 2000 are of the default 8000), so any max_chars works on its own; they stay unset
        # (the variant reads as it was written)
        if "max_chars" in self.model_fields_set:
            if "head" not in self.model_fields_set:
                object.__setattr__(self, "head", self.max_chars * 3 // 8)
            if "tail" not in self.model_fields_set:
                object.__setattr__(self, "tail", self.max_chars // 4)
        if self.head + self.tail >= self.max_chars:
            raise ValueError(
                f"head ({self.head}) + tail ({self.tail}) must be below "
                f"max_chars ({self.max_chars})"
            )
        return self


def truncate_text(text: str, *, head: int, tail: int) -> tuple[str, str]:
    """(truncated text, removed middle)."""
    middle = text[head : len(text) - tail]
    lines = max(1, middle.count("\n"))
    kept_tail = text[len(text) - tail :] if tail else ""
    return f"{text[:head]}\n{MARKER.format(n=lines)}\n{kept_tail}", middle


@dataclasses.dataclass(slots=True)
class _Truncator:
    params: TruncationParams
    done: dict[int, tuple[ToolResultBlock, ToolResultBlock, str]] = dataclasses.field(
        default_factory=dict
    )
    """id(original block) -> (original, truncated, removed text): one result, one truncation."""

    def result(self, block: ToolResultBlock) -> tuple[ToolResultBlock, str]:
        hit = self.done.get(id(block))
        if hit is not None and hit[0] is block:
            return hit[1], hit[2]
        limit, head, tail = self.params.max_chars, self.params.head, self.params.tail
        if block.is_error:
            limit, head, tail = self.params.error_max_chars, self.params.error_max_chars, 0
        removed: list[str] = []
        content: list[Block] = []
        for part in block.content:
            if isinstance(part, TextBlock) and len(part.text) > limit:
                text, middle = truncate_text(part.text, head=head, tail=tail)
                removed.append(middle)
                content.append(dataclasses.replace(part, text=text))
            else:
                content.append(part)
        new = dataclasses.replace(block, content=tuple(content)) if removed else block
        self.done[id(block)] = (block, new, "\n".join(removed))
        return new, "\n".join(removed)

    def message(self, message: Message) -> tuple[Message, list[tuple[ToolResultBlock, str]]]:
        changed: list[tuple[ToolResultBlock, str]] = []
        content: list[Block] = []
        for block in message.content:
            if not isinstance(block, ToolResultBlock):
                content.append(block)
                continue
            new, removed = self.result(block)
            if new is not block:
                changed.append((block, removed))
            content.append(new)
        if not changed:
            return message, changed
        return dataclasses.replace(message, content=tuple(content)), changed


def _texts(block: ToolResultBlock) -> tuple[str, ...]:
    return tuple(part.text for part in block.content if isinstance(part, TextBlock))


def _said(block: Block) -> str | None:
    """What an assistant block says: its text, or a tool call's input values, a line each."""
    if isinstance(block, TextBlock):
        return block.text
    if isinstance(block, ToolUseBlock):
        return "\n".join(_leaves(block.input))
    return None


def _leaves(value: Any) -> list[str]:
    """The strings and numbers of a JSON value, in order."""
    if isinstance(value, dict):
        return [leaf for item in value.values() for leaf in _leaves(item)]
    if isinstance(value, list):
        return [leaf for item in value for leaf in _leaves(item)]
    return [] if value is None or isinstance(value, bool) else [str(value)]


def _assistant_blocks(call: Call, cut: _Removed) -> list[Block]:
    """The assistant's blocks in the history and the recorded response (tool calls included:
    an agent passes what it read on as tool input), but those of a message ``cut`` has read
    whole already: a conversation resends its earlier turns, the same message objects, and
    looking at each of their blocks again made a trace's checks grow with its turns squared."""
    history = [
        b for m in call.messages if m.role == "assistant" and cut.unread(m) for b in m.content
    ]
    return [*history, *call.response]


def _once(call: Call) -> Callable[[], str]:
    """The text of ``call`` as sent, made on the first call only (most requests never need
    it; a ``functools.cache`` per request cost more than the text)."""
    made: list[str] = []

    def text() -> str:
        if not made:
            made.append(_request_text(call))
        return made[0]

    return text


@dataclass(slots=True)
class _Removed:
    """The middles cut so far, by tool result, and what an assistant message may take from
    them: whole lines, or distinctive tokens (computed once per middle)."""

    middles: dict[str, tuple[str, frozenset[str]]] = field(default_factory=dict)
    flagged: set[str] = field(default_factory=set)
    read: dict[int, Block] = field(default_factory=dict)
    """Assistant blocks already checked, by id: a conversation re-sends its earlier turns
    (the same objects), and a text said before a result was cut cannot have taken from it."""
    messages: dict[int, Message] = field(default_factory=dict)
    """Assistant messages whose blocks are all in ``read``, by id."""

    def unread(self, message: Message) -> bool:
        """Whether ``message`` is new to the trace's checks (and it is read from now on)."""
        if self.messages.get(id(message)) is message:
            return False
        self.messages[id(message)] = message
        return True

    def add(self, tool_use_id: str, removed: str) -> None:
        self.middles[tool_use_id] = (removed, frozenset(distinctive(removed)))

    def taken(self, blocks: list[Block], sent: Callable[[], str]) -> list[str]:
        """What was taken, in words, from each middle an assistant text
        quotes a line of, or names a distinctive token of that the request as sent does not
        hold (``sent``: its text, made only when needed); each middle once per trace."""
        found: list[str] = []
        new = [b for b in blocks if self.read.get(id(b)) is not b]
        self.read.update((id(b), b) for b in new)
        texts = [text for text in map(_said, new) if text]
        if not texts or not self.middles:
            return found
        tokens = [token for text in texts for token in distinctive(text)]
        for tool_use_id, (removed, held) in self.middles.items():
            if tool_use_id in self.flagged:
                continue
            quote = _line_quoted(removed, texts, tool_use_id) or next(
                (
                    f"refers to {token[:60]!r}, only in truncated text of {short_name(tool_use_id)}"
                    for token in tokens
                    if token in held and not _mentions(sent(), token)
                ),
                None,
            )
            if quote is not None:
                self.flagged.add(tool_use_id)
                found.append(quote)
        return found


def _line_quoted(removed: str, texts: list[str], tool_use_id: str) -> str | None:
    for raw in removed.splitlines():
        line = raw.strip()
        if len(line) >= _QUOTE_MIN_CHARS and any(line in text for text in texts):
            return f"quotes truncated text of {short_name(tool_use_id)}: {line[:60]!r}"
    return None


def _mentions(text: str, token: str) -> bool:
    """``token`` stands in ``text`` as a token of its own (``150`` is not in ``1500``)."""
    return re.search(rf"(?<![\w.]){re.escape(token)}(?!\w)", text) is not None


def _request_text(call: Call) -> str:
    """The text a request sends: system, messages (tool results as cut) and tools."""
    parts = [b.text for b in call.system if isinstance(b, TextBlock)]
    for message in call.messages:
        for block in message.content:
            if isinstance(block, TextBlock):
                parts.append(block.text)
            elif isinstance(block, ToolResultBlock):
                parts.extend(b.text for b in block.content if isinstance(b, TextBlock))
            elif isinstance(block, ToolUseBlock):
                parts.append(json.dumps(block.input, ensure_ascii=False))
    parts.extend(f"{tool.name}\n{tool.description}" for tool in call.tools)
    return "\n".join(parts)


class Truncation:
    name = "truncation"
    summary = "cap large tool results to their head and tail"
    params = TruncationParams
    removes_only = True
    """It only takes content away from requests (or changes none): see
    :func:`costsim.analysis.prompt_band.removes_only`."""

    def apply(
        self, trace: SimTrace, params: TruncationParams, context: Context
    ) -> tuple[SimTrace, list[Event]]:
        truncator = _Truncator(params)
        events: list[Event] = []
        announced: set[tuple[str, tuple[str, ...]]] = set()
        cut = _Removed()
        calls: list[SimCall] = []
        for item in trace.calls:
            call = item.call
            messages: list[Message] = []
            for message in call.messages:
                new_message, changed = truncator.message(message)
                messages.append(new_message)
                for block, removed in changed:
                    cut.add(block.tool_use_id, removed)
                    # each tool result once, where it is first cut (later requests resend
                    # it); by its id and its text (ids are not always unique: a legacy
                    # function result's is its function's name, a missing one "")
                    key = (block.tool_use_id, _texts(block))
                    if key not in announced:
                        announced.add(key)
                        before = sum(len(b.text) for b in block.content if isinstance(b, TextBlock))
                        after = before - len(removed) + len(MARKER) + 8
                        events.append(
                            Event(
                                self.name,
                                "change",
                                f"tool result {short_name(block.tool_use_id)}: "
                                f"{before:,} -> about {after:,} chars",
                                call.provenance,
                            )
                        )
            as_sent = call
            if any(new is not old for new, old in zip(messages, call.messages, strict=True)):
                as_sent = dataclasses.replace(call, messages=tuple(messages))
            for quote in cut.taken(_assistant_blocks(call, cut), _once(as_sent)):
                events.append(
                    Event(self.name, "divergence", f"an assistant message {quote}", call.provenance)
                )
            call = as_sent
            calls.append(dataclasses.replace(item, call=call) if call is not item.call else item)
        return SimTrace(trace.path, tuple(calls)), events
