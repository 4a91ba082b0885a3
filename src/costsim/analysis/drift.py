"""What differs between the request a test sent and the one its cassette recorded.

vcrpy matches requests on method and URL by default, so a test keeps replaying an old response
after the code changed its prompt. Each aspect of a request that can change the bill is one
entry of :data:`ASPECTS`; a difference in none of them (blocks reordered, ``max_tokens``,
``metadata``, streaming on or off) is not drift.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, replace
from typing import Any

from costsim.model import (
    Block,
    Call,
    Message,
    TextBlock,
    ThinkingBlock,
    ThinkingConfig,
    ToolDef,
    ToolResultBlock,
)
from costsim.model.quoting import short_name

__all__ = [
    "ASPECTS",
    "IGNORED_PARAMETERS",
    "SAMPLING_PARAMETERS",
    "Difference",
    "differences",
    "summary",
]

SAMPLING_PARAMETERS = frozenset(
    {
        "temperature", "top_p", "top_k", "seed", "stop", "stop_sequences", "presence_penalty",
        "frequency_penalty", "logit_bias", "logprobs", "top_logprobs", "n",
        "parallel_tool_calls", "verbosity",
    }
)  # fmt: skip
"""Parameters that change what the model generates, not the prompt it is billed for."""

IGNORED_PARAMETERS = frozenset(
    {
        "max_tokens", "max_completion_tokens", "max_output_tokens", "metadata", "user",
        "store", "stream_options", "include", "safety_identifier", "background",
        "anthropic_version",
    }
)  # fmt: skip
"""Parameters that cannot change the bill of a replayed call: never drift (``anthropic_version``
is the API version Bedrock and Vertex AI read from the body, which each SDK sets itself)."""


@dataclass(frozen=True, slots=True)
class Difference:
    """One aspect in which the sent request differs from the recorded one."""

    aspect: str
    detail: str

    def __str__(self) -> str:
        return f"{self.aspect} {self.detail}"


def _key(value: Any) -> str:
    """A stable text form of a block or definition, for comparing without regard to order."""
    return json.dumps(value, sort_keys=True, default=repr)


def _bare(block: Block) -> str:
    """A block without its cache breakpoint (breakpoints are compared on their own)."""
    return _key(asdict(replace(block, cache_control=None)))


def _blocks(blocks: Iterable[Block]) -> Counter[str]:
    return Counter(_bare(block) for block in blocks)


def _message(message: Message) -> tuple[str, str | None, tuple[tuple[str, int], ...]]:
    return message.role, message.name, tuple(sorted(_blocks(message.content).items()))


def _chars(blocks: Iterable[Block]) -> int:
    """Characters of the blocks as written: a text's own (not its JSON, whose escapes and
    quotes counted 921 for a 918-character change), a tool result's content's, else the
    block's JSON (an image, a document, a tool call)."""
    total = 0
    for block in blocks:
        if isinstance(block, TextBlock | ThinkingBlock):
            total += len(block.text)
        elif isinstance(block, ToolResultBlock):
            total += _chars(block.content) + len(_bare(replace(block, content=())))
        else:
            total += len(_bare(block))
    return total


def _model(old: Call, new: Call) -> str | None:
    return None if old.model == new.model else f"{short_name(old.model)} -> {short_name(new.model)}"


_INSTRUCTION_ROLES = frozenset({"system", "developer"})
"""Chat and Responses carry the system prompt as messages with these roles (either name)."""


def _instructions(call: Call) -> list[Block]:
    """The system prompt wherever the API puts it: ``system``, or system/developer messages."""
    found = list(call.system)
    for message in call.messages:
        if message.role in _INSTRUCTION_ROLES:
            found.extend(message.content)
    return found


def _conversation(call: Call) -> list[Message]:
    return [m for m in call.messages if m.role not in _INSTRUCTION_ROLES]


def _system(old: Call, new: Call) -> str | None:
    before, after = _instructions(old), _instructions(new)
    if _blocks(before) == _blocks(after):
        return None
    return f"changed ({_chars(after) - _chars(before):+,} chars)"


def _tool(tool: ToolDef) -> str:
    return _key(asdict(replace(tool, cache_control=None)))


def _tools(old: Call, new: Call) -> str | None:
    before = {tool.name: _tool(tool) for tool in old.tools}
    after = {tool.name: _tool(tool) for tool in new.tools}
    if before == after:
        return None
    parts = [f"+{name}" for name in after if name not in before]
    parts += [f"-{name}" for name in before if name not in after]
    changed = [name for name in after if name in before and before[name] != after[name]]
    if changed:
        parts.append(f"changed {', '.join(changed)}")
    shown = ", ".join(parts[:4]) + (f" and {len(parts) - 4} more" if len(parts) > 4 else "")
    return shown


def _tool_choice(old: Call, new: Call) -> str | None:
    if _key(old.tool_choice) == _key(new.tool_choice):
        return None
    return f"{_key(old.tool_choice)} -> {_key(new.tool_choice)}"


def _messages(old: Call, new: Call) -> str | None:
    old_messages, new_messages = _conversation(old), _conversation(new)
    before = [_message(m) for m in old_messages]
    after = [_message(m) for m in new_messages]
    if before == after:
        return None
    if len(before) != len(after):
        return f"{len(before)} -> {len(after)} ({len(after) - len(before):+d})"
    changed = [index for index, (a, b) in enumerate(zip(before, after, strict=True)) if a != b]
    where = ", ".join(f"#{index}" for index in changed[:3])
    more = f" and {len(changed) - 3} more" if len(changed) > 3 else ""
    chars = sum(_chars(m.content) for m in new_messages) - sum(
        _chars(m.content) for m in old_messages
    )
    return f"{where}{more} changed ({chars:+,} chars)"


def _thinking_text(config: ThinkingConfig | None) -> str:
    if config is None or not config.enabled:
        return "off"
    parts = [
        f"{name}={value}"
        for name, value in (
            ("budget", config.budget_tokens),
            ("effort", config.effort),
            ("summary", config.summary),
        )
        if value is not None
    ]
    return ",".join(parts) or "on"


def _thinking(old: Call, new: Call) -> str | None:
    before, after = _thinking_text(old.thinking), _thinking_text(new.thinking)
    return None if before == after else f"{before} -> {after}"


def _output_schema(old: Call, new: Call) -> str | None:
    if _key(old.output_schema) == _key(new.output_schema):
        return None
    return (
        "added"
        if old.output_schema is None
        else "removed"
        if new.output_schema is None
        else ("changed")
    )


def _breakpoints(call: Call, *, from_end: bool) -> list[tuple[str, str]]:
    """Where the request asks for cache breakpoints (place, TTL): each place by its index in
    its part of the request, or counted from that part's end (``from_end``: a tool added
    before a marked last tool moves no breakpoint)."""

    def at(index: int, count: int) -> int:
        return index - count if from_end else index

    tools, system, messages = call.tools, call.system, call.messages
    marks: list[tuple[str, str]] = [
        (f"tools[{at(i, len(tools))}]", t.cache_control.ttl)
        for i, t in enumerate(tools)
        if t.cache_control
    ]
    marks += [
        (f"system[{at(i, len(system))}]", b.cache_control.ttl)
        for i, b in enumerate(system)
        if b.cache_control
    ]
    for m, message in enumerate(messages):
        marks += [
            (f"messages[{at(m, len(messages))}][{i}]", b.cache_control.ttl)
            for i, b in enumerate(message.content)
            if b.cache_control
        ]
    if call.cache_control is not None:
        marks.append(("request", call.cache_control.ttl))
    return marks


def _cache(old: Call, new: Call) -> str | None:
    for from_end in (False, True):  # the same places counted from the start, or the end
        before, after = _breakpoints(old, from_end=from_end), _breakpoints(new, from_end=from_end)
        if before == after:
            return None
        if [place for place, _ in before] == [place for place, _ in after]:  # TTLs changed
            pairs = zip(before, after, strict=True)
            changed = Counter((was, now) for (_, was), (_, now) in pairs if was != now)
            return ", ".join(
                f"TTL {was} -> {now} on {n} breakpoint{'s' if n > 1 else ''}"
                for (was, now), n in changed.items()
            )
    count, now = len(_breakpoints(old, from_end=False)), len(_breakpoints(new, from_end=False))
    if count == now:
        return f"{count} breakpoint{'s' if count > 1 else ''} moved"
    return f"{count} -> {now} breakpoints"


def _changed_parameters(old: Call, new: Call, *, sampling: bool) -> list[str]:
    keys = sorted(set(old.extra) | set(new.extra))
    return [
        key
        for key in keys
        if key not in IGNORED_PARAMETERS
        and (key in SAMPLING_PARAMETERS) is sampling
        and _key(old.extra.get(key)) != _key(new.extra.get(key))
    ]


def _parameter_detail(old: Call, new: Call, keys: list[str]) -> str | None:
    if not keys:
        return None
    return ", ".join(
        f"{key} {_key(old.extra.get(key))} -> {_key(new.extra.get(key))}" for key in keys[:3]
    )


def _sampling(old: Call, new: Call) -> str | None:
    return _parameter_detail(old, new, _changed_parameters(old, new, sampling=True))


def _other_parameters(old: Call, new: Call) -> str | None:
    return _parameter_detail(old, new, _changed_parameters(old, new, sampling=False))


ASPECTS: Mapping[str, Callable[[Call, Call], str | None]] = {
    "model": _model,
    "system": _system,
    "tools": _tools,
    "tool_choice": _tool_choice,
    "messages": _messages,
    "thinking": _thinking,
    "output schema": _output_schema,
    "cache breakpoints": _cache,
    "sampling": _sampling,
    "parameters": _other_parameters,
}
"""Each aspect of a request that can change what a call is billed, with how it differs."""


def differences(recorded: Call, sent: Call) -> list[Difference]:
    """How ``sent`` differs from ``recorded`` in ways that can change the bill (empty: none)."""
    found = []
    for aspect, compare in ASPECTS.items():
        detail = compare(recorded, sent)
        if detail is not None:
            found.append(Difference(aspect, detail))
    return found


def summary(found: list[Difference]) -> str:
    """A short classification of a drifted call: the aspects, or "sampling parameters only"."""
    aspects = [item.aspect for item in found]
    if aspects == ["sampling"]:
        return "sampling parameters only"
    return ", ".join(aspects)
