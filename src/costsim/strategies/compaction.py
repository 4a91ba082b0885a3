"""``compaction``: replace the middle of a long conversation with a summary.

When a conversation's history exceeds ``trigger`` (a fraction of the model's context window)
or ``max_messages``, the first ``keep_first`` messages and the last ``keep_last`` are kept and
the middle is replaced by a summary of ``summary_tokens`` tokens written by
``summary_model``. The summary call is itself a billed call in the simulated trace (input: the
summarised messages plus an instruction; output: the summary). Later calls of the same
conversation (recognised by message-prefix identity) continue from the compacted history, and
compact again when they outgrow it. A tool_use is never separated from its tool_result.

Divergence: a later recorded response refers to something that only the compacted messages
held (a distinctive token: a path, an identifier with digits, a long number, a quoted string).
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from itertools import takewhile
from typing import Literal

from pydantic import Field

from costsim.model import Call, Message, TextBlock, ToolResultBlock, ToolUseBlock, Usage
from costsim.model.continuity import continues
from costsim.pricing.prices import price
from costsim.pricing.window import context_window
from costsim.strategies.base import Context, Params
from costsim.strategies.trace import Event, SimCall, SimTrace

__all__ = ["Compaction", "CompactionParams"]

SUMMARY_PROMPT = (
    "Summarise the conversation above for the assistant that continues it: decisions, open "
    "tasks, file names, identifiers and results it will need. Be brief."
)
DEFAULT_SUMMARY_MODELS = {"anthropic": "claude-haiku-4-5", "openai": "gpt-4.1-mini"}
_DISTINCTIVE = re.compile(
    r"(?:[\w.-]+/)+[\w.-]+|\b[A-Za-z_]+\d+[A-Za-z_\d]*\b|\b\d{4,}\b|\"[^\"\n]{8,60}\""
)


class CompactionParams(Params):
    trigger: float = Field(default=0.75, gt=0, le=1)
    """Compact when the prompt exceeds this fraction of the model's context window."""
    max_messages: int = Field(default=50, ge=2)
    """Compact when the conversation holds more messages than this (system and developer
    messages that open it not counted, as an Anthropic history does not hold its system)."""
    keep_first: int = Field(default=1, ge=0)
    """Messages kept from the start of the conversation (after the system and developer
    messages that open an OpenAI history, which are its system prompt and always kept)."""
    keep_last: int = Field(default=10, ge=1)
    """Messages kept from the end of the history."""
    summary_tokens: int = Field(default=300, ge=1)
    """Length of the summary that replaces the middle."""
    summary_model: str | None = None
    """The light model that writes the summary; unset: the provider's default below."""
    fallback: Literal["skip", "drop"] = "skip"
    """When the summary model cannot be priced: ``skip`` compaction, or ``drop`` the middle
    without a summary call."""


@dataclass(slots=True)
class _Conversation:
    recorded: tuple[Message, ...]
    """The last recorded history of this conversation."""
    first: int
    """Messages kept from the start: its opening system messages and ``keep_first`` more."""
    cut: int = 0
    """Recorded messages [first, cut) are replaced by ``summary``."""
    summary: Message | None = None
    compacted_text: list[str] = field(default_factory=list)


def _opening(messages: tuple[Message, ...]) -> int:
    """The system and developer messages that open an OpenAI history (its system prompt)."""
    count = 0
    while count < len(messages) and messages[count].role in ("system", "developer"):
        count += 1
    return count


def _text_of(messages: tuple[Message, ...]) -> str:
    parts: list[str] = []
    for message in messages:
        for block in message.content:
            if isinstance(block, TextBlock | ToolResultBlock):
                parts.append(block.text)
            elif isinstance(block, ToolUseBlock):
                parts.append(str(block.input))
    return "\n".join(parts)


def _safe_cut(messages: tuple[Message, ...], cut: int, floor: int) -> int:
    """Move the cut earlier while the first kept message answers a tool call in the summary."""
    while cut > floor and any(isinstance(b, ToolResultBlock) for b in messages[cut].content):
        cut -= 1
    return cut


def _summary_message(tokens: int, summarised: int) -> Message:
    # A stand-in of the right size: the words are not a real summary, the token count is.
    filler = " ".join(["summary"] * max(tokens - 12, 1))
    text = f"[Summary of {summarised} earlier messages, {tokens} tokens]\n{filler}"
    return Message("user", (TextBlock(text),))


def _with_summary(
    call: Call, messages: tuple[Message, ...], keep_first: int, cut: int, summary: Message
) -> Call:
    head, tail = messages[:keep_first], messages[cut:]
    if tail and tail[0].role == summary.role:  # keep roles alternating: merge into the next turn
        merged = Message(tail[0].role, (*summary.content, *tail[0].content), tail[0].name)
        return dataclasses.replace(call, messages=(*head, merged, *tail[1:]))
    return dataclasses.replace(call, messages=(*head, summary, *tail))


def _priced(model: str, provider: str) -> bool:
    return (
        bool(model)
        and price(Usage(uncached_input=1), model=model, provider=provider, at=None).priced
    )


def _summary_call(call: Call, model: str, middle: tuple[Message, ...]) -> Call:
    instruction = TextBlock(SUMMARY_PROMPT)
    if middle and middle[-1].role == "user":
        last = middle[-1]
        body = (*middle[:-1], Message("user", (*last.content, instruction)))
    else:
        body = (*middle, Message("user", (instruction,)))
    # the agent's system prompt goes with it, as it does where the API takes it apart (its
    # ``system``, kept): a Chat Completions summary call sent none, cost less than the same
    # call elsewhere, and matched no agent in a breakdown by agent
    system = tuple(takewhile(lambda m: m.role in ("system", "developer"), call.messages))
    return dataclasses.replace(
        call,
        model=model,
        response_model=None,
        messages=(*system, *body),
        tools=(),
        tool_choice=None,
        thinking=None,
        output_schema=None,
        cache_control=None,
        response=(TextBlock("(summary)"),),
        usage=None,
    )


class Compaction:
    name = "compaction"
    summary = "replace the middle of long histories with a summary from a light model"
    params = CompactionParams

    def apply(
        self, trace: SimTrace, params: CompactionParams, context: Context
    ) -> tuple[SimTrace, list[Event]]:
        events: list[Event] = []
        calls: list[SimCall] = []
        conversations: list[_Conversation] = []
        skipped = False
        for original in trace.calls:
            item = original
            call = item.call
            summary_model = params.summary_model or DEFAULT_SUMMARY_MODELS.get(call.provider, "")
            summary_priced = _priced(summary_model, call.provider)
            recorded = call.messages
            conversation = next((c for c in conversations if continues(c.recorded, recorded)), None)
            if conversation is None:
                conversation = _Conversation(recorded, _opening(recorded) + params.keep_first)
                conversations.append(conversation)
            conversation.recorded = recorded
            if conversation.summary is not None:
                self._check_divergence(item, conversation, events)
            transformed = self._current(call, conversation, params)
            if self._over(transformed, item.origin, context, params):
                if summary_priced or params.fallback == "drop":
                    if self._compact(
                        item,
                        conversation,
                        params,
                        (summary_model, summary_priced),
                        context,
                        events,
                        calls,
                    ):
                        transformed = self._current(call, conversation, params)
                elif not skipped:
                    skipped = True
                    events.append(
                        Event(
                            self.name,
                            "note",
                            f"summary model {summary_model!r} has no {call.provider} price: "
                            "compaction skipped (fallback=skip)",
                            call.provenance,
                        )
                    )
            if transformed is not call:
                item = dataclasses.replace(item, call=transformed)
            calls.append(item)
        return SimTrace(trace.path, tuple(calls)), events

    def _current(self, call: Call, conversation: _Conversation, params: CompactionParams) -> Call:
        if conversation.summary is None:
            return call
        return _with_summary(
            call, call.messages, conversation.first, conversation.cut, conversation.summary
        )

    def _over(
        self, call: Call, origin: Call | None, context: Context, params: CompactionParams
    ) -> bool:
        """Over ``max_messages``, or over ``trigger`` of the context window: the prompt as the
        engine bills it (the recorded total, moved by what earlier steps changed), estimated
        whole only for a call the recording does not hold."""
        if len(call.messages) - _opening(call.messages) > params.max_messages:
            return True
        return self._over_window(call, origin, context, params)

    @staticmethod
    def _over_window(
        call: Call, origin: Call | None, context: Context, params: CompactionParams
    ) -> bool:
        window = context_window(call.priced_model, call.provider)
        if window is None:
            return False
        if origin is not None and origin.usage is not None and not origin.errored:
            prompt = context.meter.transformed_prompt(origin, call, origin.usage.prompt_total)
            return prompt > params.trigger * window
        return context.meter.estimate_prompt(call) > params.trigger * window

    def _compact(
        self,
        item: SimCall,
        conversation: _Conversation,
        params: CompactionParams,
        summarised_by: tuple[str, bool],
        context: Context,
        events: list[Event],
        calls: list[SimCall],
    ) -> bool:
        call = item.call
        summary_model, summary_priced = summarised_by
        messages = call.messages
        first = conversation.first
        floor = max(first, conversation.cut)
        cut = _safe_cut(messages, len(messages) - params.keep_last, floor)
        if cut <= floor:
            return False
        middle: tuple[Message, ...] = messages[first:cut]
        previous = conversation.summary
        if previous is not None:  # compacting again: the old summary is summarised too
            middle = (previous, *messages[conversation.cut : cut])
        alone = dataclasses.replace(call, system=(), tools=(), messages=middle)
        if (  # over the window, a history is long whatever its text estimates to
            context.meter.estimate_prompt(alone) <= params.summary_tokens
            and not self._over_window(call, item.origin, context, params)
        ):
            # a summary would be no shorter than what it replaces: not worth a call
            short = f"a history's middle no longer than the {params.summary_tokens}-token summary"
            note = f"{short} that would replace it is kept, not compacted"
            if not any(event.message == note for event in events):  # once per trace
                events.append(Event(self.name, "note", note, call.provenance))
            return False
        conversation.compacted_text.append(_text_of(messages[first:cut]))
        conversation.summary = _summary_message(params.summary_tokens, cut - first)
        conversation.cut = cut
        if summary_priced:
            summary = _summary_call(call, summary_model, middle)
            calls.append(SimCall(summary, None, output=params.summary_tokens, role="summary"))
        events.append(
            Event(
                self.name,
                "change",
                f"compacted {cut - first} message{'s' if cut - first > 1 else ''} into a "
                f"{params.summary_tokens}-token summary by {summary_model}"
                + ("" if summary_priced else " (no summary call: model unpriced, middle dropped)"),
                call.provenance,
            )
        )
        return True

    def _check_divergence(
        self, item: SimCall, conversation: _Conversation, events: list[Event]
    ) -> None:
        response = _text_of((Message("assistant", item.call.response),))
        if not response:
            return
        kept = _text_of(item.call.messages[conversation.cut :])
        compacted = "\n".join(conversation.compacted_text)
        for token in _DISTINCTIVE.findall(response):
            if token in compacted and token not in kept:
                events.append(
                    Event(
                        self.name,
                        "divergence",
                        f"the recorded response refers to {token[:40]!r}, "
                        "only in compacted messages",
                        item.call.provenance,
                    )
                )
                return
