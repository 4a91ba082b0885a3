"""``caching``: place prompt-cache breakpoints, and keep changing system text out of the
cached prefix.

Policies (Anthropic explicit caching):

- ``static`` (default): fixed ``placement`` positions on every request: ``tools`` marks the
  last tool definition, ``system`` the end of the static system prompt, ``messages`` a rolling
  breakpoint on the latest message(s). Breakpoints the request already carries are kept and
  count toward the limit of 4; with ``ttl=1h`` their 5m ones are raised to 1h (a client that
  chooses the hour sets it on its breakpoints, and the API takes 1h breakpoints only before
  5m ones). Placed breakpoints whose prefix is below the model's minimum cache nothing, as
  online: a note per trace says how many.
- ``auto``: what a sensible client does online (see :mod:`costsim.strategies.cache_policies`).
- ``oracle``: knows the trace's future; writes only what is read again, 5m or 1h per prefix;
  never dearer than the placement as recorded.

``auto`` and ``oracle`` replace the recorded breakpoints and ignore ``placement``/``rolling``.

Static/dynamic split: calls of one agent (same system-prompt opening) whose system text
differs between calls share a static head (instructions) and a changing tail (a running
summary, a timestamp). The tail is moved after the static breakpoint, so it stops invalidating
the cached prefix. OpenAI caches automatically; there only the split applies.
"""

from __future__ import annotations

import dataclasses
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Annotated, Literal, TypeVar

from pydantic import Field

from costsim.cache.prefix import Prefix
from costsim.model import (
    Block,
    CacheControl,
    Call,
    Flavour,
    Message,
    Provenance,
    TextBlock,
    ToolDef,
)
from costsim.strategies.base import Context, Params
from costsim.strategies.cache_policies import (
    Marks,
    auto_marks,
    eligible,
    marks_of,
    oracle_marks,
    placed,
)
from costsim.strategies.trace import Event, SimCall, SimTrace

__all__ = ["Caching", "CachingParams"]

Policy = Literal["tools", "system", "messages"]
_MIN_STATIC_CHARS = 200
_AGENT_KEY_CHARS = 120


class CachingParams(Params):
    policy: Literal["static", "auto", "oracle"] = "static"
    """How breakpoints are chosen: fixed ``placement`` positions, an online client's choice,
    or the trace's own future (the README's caching row says how each chooses)."""
    ttl: Literal["5m", "1h"] = "5m"
    """How long a written prefix stays readable (static and auto): 5 minutes, or an hour at a
    dearer write."""
    placement: tuple[Policy, ...] = ("tools", "system", "messages")
    """Where static breakpoints go: after the tool definitions, after the static system
    prompt, on the latest message(s)."""
    rolling: Annotated[int, Field(ge=0, le=2)] = 1
    """How many of the latest messages get a rolling breakpoint (0-2)."""
    split_dynamic_system: bool = True
    max_breakpoints: Annotated[int, Field(ge=1, le=4)] = 4
    """At most this many breakpoints per request, those it already carries included
    (Anthropic accepts 4)."""


def _system_text(call: Call) -> str | None:
    """The system prompt when it is plain text (Anthropic system blocks; OpenAI's first
    system/developer message)."""
    if call.flavour is Flavour.OPENAI_CHAT:
        first = call.messages[0] if call.messages else None
        if first is None or first.role not in ("system", "developer"):
            return None
        blocks = first.content
    else:
        blocks = call.system
    if not blocks or not all(isinstance(b, TextBlock) for b in blocks):
        return None
    return "".join(b.text for b in blocks if isinstance(b, TextBlock))


def static_heads(calls: list[Call]) -> dict[str, str]:
    """Per agent (system prompt opening), the static head shared by calls whose system text
    changes; agents whose system text never changes are left out."""
    groups: dict[str, set[str]] = defaultdict(set)
    for call in calls:
        text = _system_text(call)
        if text and len(text) > _MIN_STATIC_CHARS:
            groups[text[:_AGENT_KEY_CHARS]].add(text)
    heads: dict[str, str] = {}
    for key, texts in groups.items():
        if len(texts) < 2:
            continue
        ordered = sorted(texts)
        first, last = ordered[0], ordered[-1]
        common = 0
        while common < min(len(first), len(last)) and first[common] == last[common]:
            common += 1
        cut = first.rfind("\n", 0, common + 1)
        head = first[: cut + 1] if cut > 0 else first[:common]
        if len(head) >= _MIN_STATIC_CHARS:
            heads[key] = head
    return heads


def _split_system(call: Call, head: str, ttl: CacheControl | None) -> Call:
    text = _system_text(call) or ""
    tail = text[len(head) :]
    static = TextBlock(head, cache_control=ttl)
    blocks: tuple[Block, ...] = (static, TextBlock(tail)) if tail else (static,)
    if call.flavour is Flavour.OPENAI_CHAT:
        first = call.messages[0]
        split = (Message(first.role, (TextBlock(head),)), Message(first.role, (TextBlock(tail),)))
        return dataclasses.replace(call, messages=(*split, *call.messages[1:]))
    return dataclasses.replace(call, system=blocks)


def _count_breakpoints(call: Call) -> int:
    marks = [t.cache_control for t in call.tools] + [b.cache_control for b in call.system]
    marks += [b.cache_control for m in call.messages for b in m.content]
    return sum(1 for mark in marks if mark is not None) + (call.cache_control is not None)


def _marks(call: Call) -> list[CacheControl | None]:
    """The breakpoint of every block of ``call`` in prefix order (tools, system, messages)."""
    marks = [t.cache_control for t in call.tools] + [b.cache_control for b in call.system]
    return marks + [b.cache_control for m in call.messages for b in m.content]


_Marked = TypeVar("_Marked", Block, ToolDef)
_HOUR = CacheControl("1h")


def _raise_all(blocks: tuple[_Marked, ...]) -> tuple[_Marked, ...]:
    return tuple(
        dataclasses.replace(b, cache_control=_HOUR)
        if b.cache_control is not None and b.cache_control.ttl == "5m"
        else b
        for b in blocks
    )


def _raised(call: Call) -> tuple[Call, int]:
    """``call`` with its 5m breakpoints raised to 1h, and how many were."""
    count = sum(1 for mark in _marks(call) if mark is not None and mark.ttl == "5m")
    automatic = call.cache_control is not None and call.cache_control.ttl == "5m"
    if not count and not automatic:
        return call, 0
    raised = dataclasses.replace(
        call,
        tools=_raise_all(call.tools),
        system=_raise_all(call.system),
        messages=tuple(
            dataclasses.replace(m, content=_raise_all(m.content)) for m in call.messages
        ),
        cache_control=_HOUR if automatic else call.cache_control,
    )
    return raised, count + automatic


def _mark_last(blocks: tuple[Block, ...], mark: CacheControl) -> tuple[Block, ...]:
    if not blocks or blocks[-1].cache_control is not None:
        return blocks
    return (*blocks[:-1], dataclasses.replace(blocks[-1], cache_control=mark))


def _place(call: Call, params: CachingParams) -> tuple[Call, int]:
    """``call`` with the static breakpoints placed, and how many recorded ones were raised."""
    call, raised = _raised(call) if params.ttl == "1h" else (call, 0)
    return _place_new(call, params), raised


def _place_new(call: Call, params: CachingParams) -> Call:
    mark = CacheControl(params.ttl)
    budget = params.max_breakpoints - _count_breakpoints(call)
    if budget <= 0:
        return call
    if "tools" in params.placement and call.tools and call.tools[-1].cache_control is None:
        call = dataclasses.replace(
            call, tools=(*call.tools[:-1], dataclasses.replace(call.tools[-1], cache_control=mark))
        )
        budget -= 1
    if budget > 0 and "system" in params.placement and call.system:
        static_index = next(
            (i for i, b in enumerate(call.system) if b.cache_control is not None),
            len(call.system) - 1,
        )
        if call.system[static_index].cache_control is None:
            system = list(call.system)
            system[static_index] = dataclasses.replace(system[static_index], cache_control=mark)
            call = dataclasses.replace(call, system=tuple(system))
            budget -= 1
    if "messages" in params.placement and call.messages:
        messages = list(call.messages)
        for index in range(len(messages) - 1, max(len(messages) - 1 - params.rolling, -1), -1):
            if budget <= 0:
                break
            marked = _mark_last(messages[index].content, mark)
            if marked is not messages[index].content:
                messages[index] = dataclasses.replace(messages[index], content=marked)
                budget -= 1
        call = dataclasses.replace(call, messages=tuple(messages))
    return call


def _placement_events(before: Call, after: Call, raised: int, ttl: str) -> list[Event]:
    added = _count_breakpoints(after) - _count_breakpoints(before)
    done = [f"added {added} {ttl} breakpoint(s)"] if added else []
    done += [f"raised {raised} recorded 5m breakpoint(s) to 1h"] if raised else []
    return [Event("caching", "change", "; ".join(done), before.provenance)] if done else []


@dataclass(slots=True)
class _ShortMarks:
    """Placed breakpoints whose prefix is below the model's minimum (they cache nothing),
    counted per model over a trace: one note says how many, and where."""

    placed: Counter[str] = field(default_factory=Counter)
    short: Counter[str] = field(default_factory=Counter)
    labels: dict[str, set[str]] = field(default_factory=dict)
    minimum: dict[str, int] = field(default_factory=dict)
    first: dict[str, Provenance] = field(default_factory=dict)

    def add(self, before: Call, after: Call, layout: Prefix, context: Context) -> None:
        marks = zip(_marks(before), _marks(after), layout.blocks, strict=False)
        added = [block for old, new, block in marks if old is None and new is not None]
        if not added:
            return
        model = after.model
        minimum = context.rules.minimum(model, after.recorded_at)
        below = [block for block in added if block.tokens < minimum]
        self.placed[model] += len(added)
        if below:
            self.short[model] += len(below)
            self.labels.setdefault(model, set()).update(block.label for block in below)
            self.minimum[model] = minimum
            self.first.setdefault(model, after.provenance)

    def events(self, strategy: str) -> list[Event]:
        events = []
        for model, count in sorted(self.short.items()):
            where = ", ".join(sorted(self.labels[model]))
            events.append(
                Event(
                    strategy,
                    "note",
                    f"{count} of the {self.placed[model]} breakpoints placed ({where}) "
                    f"{'sits' if count == 1 else 'sit'} below the {self.minimum[model]:,}-token "
                    f"minimum for {model}: {'it caches' if count == 1 else 'they cache'} nothing",
                    self.first[model],
                )
            )
        return events


class Caching:
    name = "caching"
    summary = "place prompt-cache breakpoints; move changing system text after them"
    params = CachingParams

    def apply(
        self, trace: SimTrace, params: CachingParams, context: Context
    ) -> tuple[SimTrace, list[Event]]:
        heads = (
            static_heads([item.call for item in trace.calls]) if params.split_dynamic_system else {}
        )
        events: list[Event] = []
        mark = CacheControl(params.ttl)
        calls: list[SimCall] = []
        short = _ShortMarks()
        for item in trace.calls:
            call = item.call
            text = _system_text(call)
            head = heads.get(text[:_AGENT_KEY_CHARS]) if text else None
            if head is not None and text is not None and text != head:
                anthropic = call.flavour is Flavour.ANTHROPIC_MESSAGES
                call = _split_system(
                    call, head, mark if anthropic and params.policy == "static" else None
                )
                events.append(
                    Event(
                        self.name,
                        "change",
                        f"moved {len(text) - len(head):,} changing system characters after "
                        f"the static {len(head):,}-character head",
                        call.provenance,
                    )
                )
            if call.flavour is Flavour.ANTHROPIC_MESSAGES and params.policy == "static":
                placed_call, raised = _place(call, params)
                events += _placement_events(call, placed_call, raised, params.ttl)
                if context.layout is not None:
                    short.add(
                        call,
                        placed_call,
                        context.layout(dataclasses.replace(item, call=placed_call)),
                        context,
                    )
                call = placed_call
            calls.append(dataclasses.replace(item, call=call) if call is not item.call else item)
        result = SimTrace(trace.path, tuple(calls))
        events += short.events(self.name)
        if params.policy == "auto":
            marks = auto_marks(result, params.ttl, context)
            return placed(result, marks), events + self._placed(result, marks, "auto")
        if params.policy == "oracle":
            chosen, why = oracle_marks(
                result, context, lambda: self._client_marks(trace, result, params, context)
            )
            if chosen is None:
                where = trace.calls[0].call.provenance if trace.calls else None
                note = [Event(self.name, "note", f"oracle: {why}; left as recorded", where)]
                several = sum(1 for item in trace.calls if item.call.provider == "anthropic") > 1
                return trace, note if why and several else []
            return placed(result, chosen), events + self._placed(result, chosen, "oracle")
        return result, events

    def _client_marks(
        self, trace: SimTrace, split: SimTrace, params: CachingParams, context: Context
    ) -> list[list[Marks | None]]:
        """What the client policies would place (static and auto, each TTL) on ``trace``,
        whose changing system text is moved as in ``split``: the oracle weighs them beside
        its own plans, so it is never worse than a placement a client can make."""
        found: list[list[Marks | None]] = []
        for ttl in ("5m", "1h"):
            static = params.model_copy(update={"policy": "static", "ttl": ttl})
            placed_static, _ = self.apply(trace, static, context)
            found.append(
                [marks_of(item.call) if eligible(item) else None for item in placed_static.calls]
            )
            found.append(auto_marks(split, ttl, context))
        return found

    def _placed(self, trace: SimTrace, marks: list[Marks | None], policy: str) -> list[Event]:
        events = []
        for item, mark in zip(trace.calls, marks, strict=True):
            if not mark:
                continue
            ttls = sorted(mark.values())
            described = ", ".join(f"{ttls.count(t)} {t}" for t in sorted(set(ttls)))
            events.append(
                Event(
                    self.name,
                    "change",
                    f"{policy}: {len(mark)} breakpoint(s) ({described})",
                    item.call.provenance,
                )
            )
        return events
