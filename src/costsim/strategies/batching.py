"""``batching``: merge consecutive tool-only round trips into one.

A run of consecutive calls of one conversation whose recorded responses only call tools (no
text) from the batchable set becomes one round trip: the first call asks for every tool call
of the run at once, the intermediate requests disappear, and later requests carry one
assistant turn with all the calls and their results together instead of one pair per turn.
The merged call's output is the run's outputs together.

Divergence: a tool input in the run uses a value that first appeared in an earlier result of
the same run, so the calls could not have been issued together.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import re
from collections.abc import Iterator, Sequence
from itertools import pairwise

from pydantic import Field

from costsim.model import (
    Block,
    Call,
    Flavour,
    Message,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from costsim.model.continuity import continues
from costsim.strategies.base import Context, Params
from costsim.strategies.tool_input import input_values
from costsim.strategies.trace import Event, SimCall, SimTrace

__all__ = ["Batching", "BatchingParams"]

_VALUE = re.compile(r"[\w./:-]{6,}")
_REFERENCE = re.compile(r"[a-z]{1,3}\d+(?:[a-z]\d+)*")
"""A short reference a tool input may take from an earlier result (``e7``, ``s2e14``)."""


class BatchingParams(Params):
    tools: list[str] = Field(default_factory=lambda: ["*"])
    """Batchable tools: names or globs (default: every tool)."""
    min_run: int = Field(default=2, ge=2)
    """Tool-only round trips in a row needed before they are merged."""


def _tool_only(call: Call, params: BatchingParams) -> bool:
    uses = [b for b in call.response if isinstance(b, ToolUseBlock)]
    others = [b for b in call.response if not isinstance(b, ToolUseBlock | ThinkingBlock)]
    return (
        bool(uses)
        and not others
        and all(
            any(fnmatch.fnmatchcase(use.name, pattern) for pattern in params.tools) for use in uses
        )
    )


def _continues(first: Call, second: Call) -> bool:
    """``second`` carries on ``first``'s conversation (a rolling breakpoint aside)."""
    return len(second.messages) > len(first.messages) and continues(first.messages, second.messages)


def _runs(calls: Sequence[SimCall], params: BatchingParams) -> list[tuple[int, int]]:
    """(start, end) index ranges of batchable runs, end exclusive."""
    runs: list[tuple[int, int]] = []
    start = 0
    while start < len(calls):
        end = start
        while (
            end < len(calls)
            and calls[end].origin is not None
            and _tool_only(calls[end].call, params)
            and (end == start or _continues(calls[end - 1].call, calls[end].call))
        ):
            end += 1
        if end - start >= params.min_run:
            runs.append((start, end))
            start = end
        else:
            start += 1
    return runs


def _merge_history(
    messages: tuple[Message, ...], start: int, turns: int, flavour: Flavour
) -> tuple[Message, ...]:
    """Replace ``turns`` (assistant tool calls, results) pairs starting at ``start`` with one
    assistant turn holding every call and its results together."""
    uses: list[Block] = []
    results: list[Message] = []
    index = start
    for _ in range(turns):
        assistant = messages[index]
        uses.extend(assistant.content)
        index += 1
        while index < len(messages) and any(
            isinstance(b, ToolResultBlock) for b in messages[index].content
        ):
            results.append(messages[index])
            index += 1
    merged_assistant = Message("assistant", tuple(uses))
    if flavour is Flavour.OPENAI_CHAT:  # one tool message per result
        merged_results: tuple[Message, ...] = tuple(results)
    else:
        merged_results = (
            (Message(results[0].role, tuple(b for m in results for b in m.content)),)
            if results
            else ()
        )
    return (*messages[:start], merged_assistant, *merged_results, *messages[index:])


def _dependent_input(run: Sequence[SimCall]) -> str | None:
    """A tool input of the run that uses a value first seen in an earlier result of the run:
    a word of six characters or more, or a short reference (``e7``, ``s2e14``: a snapshot's
    element) found as a whole word; not one the run's own earlier inputs wrote (a page that
    echoes the URL the model asked for)."""
    seen_before = "\n".join(
        str(getattr(b, "text", "")) for m in run[0].call.messages for b in m.content
    )
    results_so_far, own = "", ""
    for earlier, item in pairwise(run):
        own += "\n".join(v for b in _uses(earlier.call) for v in input_values(b.input))
        new = item.call.messages[len(run[0].call.messages) :]
        results_so_far += "\n".join(
            b.text for m in new for b in m.content if isinstance(b, ToolResultBlock)
        )
        for use in _uses(item.call):
            for value in _values(use.input):
                if value in own or value in seen_before:
                    continue
                if _found(value, results_so_far):
                    return f"{use.name} uses {value[:40]!r} from an earlier result in the batch"
    return None


def _uses(call: Call) -> list[ToolUseBlock]:
    return [b for b in call.response if isinstance(b, ToolUseBlock)]


def _values(tool_input: object) -> Iterator[str]:
    """The words of a tool input's values worth tracing: long ones, and short references."""
    for text in input_values(tool_input):
        yield from _VALUE.findall(text)
        if _REFERENCE.fullmatch(text):
            yield text


def _found(value: str, text: str) -> bool:
    if len(value) >= 6:
        return value in text
    return re.search(rf"(?<![\w-]){re.escape(value)}(?![\w-])", text) is not None


class Batching:
    name = "batching"
    summary = "merge consecutive tool-only round trips into one"
    params = BatchingParams

    def apply(
        self, trace: SimTrace, params: BatchingParams, context: Context
    ) -> tuple[SimTrace, list[Event]]:
        calls = list(trace.calls)
        runs: list[list[Event]] = []  # each run's events; the runs are merged last first
        for start, end in reversed(_runs(calls, params)):
            run = calls[start:end]
            first = run[0]
            outputs = [
                item.output if item.output is not None else _recorded_output(item) for item in run
            ]
            merged_response = tuple(b for item in run for b in item.call.response)
            merged = dataclasses.replace(
                first,
                call=dataclasses.replace(first.call, response=merged_response),
                output=None if None in outputs else sum(o for o in outputs if o is not None),
            )
            boundary = len(first.call.messages)
            later: list[SimCall] = []
            last = run[-1].call
            for item in calls[end:]:
                if continues(last.messages, item.call.messages):
                    rewritten = _merge_history(
                        item.call.messages, boundary, len(run), item.call.flavour
                    )
                    later.append(
                        dataclasses.replace(
                            item, call=dataclasses.replace(item.call, messages=rewritten)
                        )
                    )
                else:
                    later.append(item)
            calls[start:] = [merged, *later]
            events = [
                Event(
                    self.name,
                    "change",
                    f"merged {len(run)} tool-only round trips into one "
                    f"({len(run) - 1} request(s) removed)",
                    first.call.provenance,
                )
            ]
            dependency = _dependent_input(run)
            if dependency is not None:
                events.append(Event(self.name, "divergence", dependency, first.call.provenance))
            runs.append(events)
        # told in the trace's order, as every other strategy tells its events
        return SimTrace(trace.path, tuple(calls)), [e for events in reversed(runs) for e in events]


def _recorded_output(item: SimCall) -> int | None:
    usage = item.origin.usage if item.origin is not None else None
    return usage.output if usage is not None else None
