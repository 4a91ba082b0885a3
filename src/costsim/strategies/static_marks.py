"""Where the ``caching`` strategy's static policy puts breakpoints, and what it says of them.

A request keeps the breakpoints it carries (within the limit of 4); a ``ttl`` set is the TTL
of every one of them (``1h`` raises its 5m ones, ``5m`` lowers its 1h ones: a client that
chooses a TTL sets it on its breakpoints), and unset, placed breakpoints are 5m and a 5m
breakpoint placed before a recorded 1h one is made 1h: the API takes 1h breakpoints only
before 5m ones. Placed breakpoints whose prefix is below the
model's minimum cache nothing, as online; :class:`ShortMarks` counts them per trace and model.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from dataclasses import dataclass, field
from typing import Literal, Protocol, TypeVar

from costsim.cache.prefix import Prefix
from costsim.model import Block, CacheControl, Call, Message, Provenance, ToolDef
from costsim.model.quoting import model_family
from costsim.strategies.base import Context
from costsim.strategies.trace import Event

__all__ = [
    "Placement",
    "ShortMarks",
    "count_breakpoints",
    "marks_in",
    "place",
    "placement_events",
]


class Placement(Protocol):
    """What the static placement reads of the strategy's parameters."""

    @property
    def ttl(self) -> Literal["5m", "1h"] | None: ...
    @property
    def placement(self) -> tuple[str, ...]: ...
    @property
    def rolling(self) -> int: ...
    @property
    def max_breakpoints(self) -> int: ...


def count_breakpoints(call: Call) -> int:
    marks = [t.cache_control for t in call.tools] + [b.cache_control for b in call.system]
    marks += [b.cache_control for m in call.messages for b in m.content]
    return sum(1 for mark in marks if mark is not None) + (call.cache_control is not None)


def marks_in(call: Call) -> list[CacheControl | None]:
    """The breakpoint of every block of ``call`` in prefix order (tools, system, messages)."""
    marks = [t.cache_control for t in call.tools] + [b.cache_control for b in call.system]
    return marks + [b.cache_control for m in call.messages for b in m.content]


_Marked = TypeVar("_Marked", Block, ToolDef)
_Part = TypeVar("_Part")
_HOUR = CacheControl("1h")
_OTHER = {"1h": "5m", "5m": "1h"}


def _retime_all(blocks: tuple[_Marked, ...], mark: CacheControl) -> tuple[_Marked, ...]:
    """``blocks`` with their breakpoints set to ``mark``'s TTL; ``blocks`` itself when all
    have it (an object left as it was keeps what was counted of it, see :func:`_same_or`)."""
    retimed = tuple(
        dataclasses.replace(b, cache_control=mark)
        if b.cache_control is not None and b.cache_control.ttl != mark.ttl
        else b
        for b in blocks
    )
    return _same_or(blocks, retimed)


def _same_or(old: tuple[_Part, ...], new: tuple[_Part, ...]) -> tuple[_Part, ...]:
    """``old`` when ``new`` holds the same objects: a request, message or block a placement
    leaves as it was stays the same object, so what the engine counted of it (token
    features, prefix digests, remembered by object) serves again."""
    return old if all(a is b for a, b in zip(old, new, strict=True)) else new


def _with_content(message: Message, content: tuple[Block, ...]) -> Message:
    return message if content is message.content else dataclasses.replace(message, content=content)


def retimed(call: Call, ttl: Literal["5m", "1h"]) -> tuple[Call, int]:
    """``call`` with every breakpoint it carries (the automatic one too) set to ``ttl``, and
    how many were changed."""
    mark = CacheControl(ttl)
    count = sum(1 for found in marks_in(call) if found is not None and found.ttl != ttl)
    automatic = call.cache_control is not None and call.cache_control.ttl != ttl
    if not count and not automatic:
        return call, 0
    changed = dataclasses.replace(
        call,
        tools=_retime_all(call.tools, mark),
        system=_retime_all(call.system, mark),
        messages=_same_or(
            call.messages,
            tuple(_with_content(m, _retime_all(m.content, mark)) for m in call.messages),
        ),
        cache_control=mark if automatic else call.cache_control,
    )
    return changed, count + automatic


def _mark_last(blocks: tuple[Block, ...], mark: CacheControl) -> tuple[Block, ...]:
    if not blocks or blocks[-1].cache_control is not None:
        return blocks
    return (*blocks[:-1], dataclasses.replace(blocks[-1], cache_control=mark))


def place(call: Call, params: Placement) -> tuple[Call, int]:
    """``call`` with the static breakpoints placed, and how many recorded ones were given
    another TTL (``params.ttl``, when set)."""
    call, changed = retimed(call, params.ttl) if params.ttl is not None else (call, 0)
    return _hour_first(call, _place_new(call, params)), changed


def _with_marks(call: Call, marks: list[CacheControl | None]) -> Call:
    """``call`` with the breakpoints ``marks`` (one per block, in prefix order); what already
    carries its mark stays the same object."""
    found = iter(marks)

    def marked(blocks: tuple[_Marked, ...]) -> tuple[_Marked, ...]:
        return _same_or(blocks, tuple(_marked(b, next(found)) for b in blocks))

    tools, system = marked(call.tools), marked(call.system)
    messages = _same_or(
        call.messages, tuple(_with_content(m, marked(m.content)) for m in call.messages)
    )
    if tools is call.tools and system is call.system and messages is call.messages:
        return call
    return dataclasses.replace(call, tools=tools, system=system, messages=messages)


def _marked(block: _Marked, mark: CacheControl | None) -> _Marked:
    return block if block.cache_control == mark else dataclasses.replace(block, cache_control=mark)


def _hour_first(before: Call, after: Call) -> Call:
    """``after`` with the 5m breakpoints it placed before one of ``before``'s 1h breakpoints
    made 1h: the API takes 1h breakpoints only before 5m ones."""
    old, new = marks_in(before), marks_in(after)
    hours = [i for i, mark in enumerate(old) if mark is not None and mark.ttl == "1h"]
    if before.cache_control is not None and before.cache_control.ttl == "1h":
        hours.append(len(old))  # the automatic breakpoint: the last block
    if not hours:
        return after
    placed = [
        _HOUR if i < hours[-1] and mark is not None and old[i] is None else mark
        for i, mark in enumerate(new)
    ]
    return after if placed == new else _with_marks(after, placed)


def _place_new(call: Call, params: Placement) -> Call:
    mark = CacheControl(params.ttl or "5m")
    budget = params.max_breakpoints - count_breakpoints(call)
    if budget <= 0:
        return call
    changes: dict[str, tuple[ToolDef, ...] | tuple[Block, ...] | tuple[Message, ...]] = {}
    if "tools" in params.placement and call.tools and call.tools[-1].cache_control is None:
        changes["tools"] = (
            *call.tools[:-1],
            dataclasses.replace(call.tools[-1], cache_control=mark),
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
            changes["system"] = tuple(system)
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
        if any(a is not b for a, b in zip(messages, call.messages, strict=True)):
            changes["messages"] = tuple(messages)
    return dataclasses.replace(call, **changes) if changes else call  # type: ignore[arg-type]


def placement_events(
    before: Call, after: Call, retimed: int, ttl: Literal["5m", "1h"] | None
) -> list[Event]:
    """What :func:`place` did to a request, as one change (nothing: no event); ``retimed``
    recorded breakpoints were set to ``ttl``."""
    pairs = zip(marks_in(before), marks_in(after), strict=True)
    ttls = [new.ttl for old, new in pairs if new is not None and old is None]
    done = [f"added {ttls.count(ttl)} {ttl} breakpoint(s)" for ttl in ("1h", "5m") if ttl in ttls]
    if retimed and ttl is not None:
        how = "raised" if ttl == "1h" else "lowered"
        done.append(f"{how} {retimed} recorded {_OTHER[ttl]} breakpoint(s) to {ttl}")
    return [Event("caching", "change", "; ".join(done), before.provenance)] if done else []


@dataclass(slots=True)
class ShortMarks:
    """Placed breakpoints whose prefix is below the model's minimum (they cache nothing),
    counted per model over a trace: one note says how many, and where."""

    placed: Counter[str] = field(default_factory=Counter)
    short: Counter[str] = field(default_factory=Counter)
    labels: dict[str, set[str]] = field(default_factory=dict)
    minimum: dict[str, int] = field(default_factory=dict)
    first: dict[str, Provenance] = field(default_factory=dict)
    longest: dict[str, tuple[int, bool]] = field(default_factory=dict)
    """Per model, the longest short prefix and whether its length is estimated (an offline
    count scaled to the recorded prompt, not a recorded number)."""

    def add(
        self, before: list[CacheControl | None], after: Call, layout: Prefix, context: Context
    ) -> None:
        """Count the breakpoints ``after`` has where ``before`` (its marks as recorded, one
        per block in prefix order) had none; ``layout`` is ``after``'s prefix."""
        marks = zip(before, marks_in(after), layout.blocks, strict=True)
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
            longest = max(below, key=lambda block: block.tokens)
            if longest.tokens >= self.longest.get(model, (0, False))[0]:
                self.longest[model] = (longest.tokens, not longest.exact)

    def events(self, strategy: str) -> list[Event]:
        events = []
        for model, count in sorted(self.short.items()):
            where = ", ".join(sorted(self.labels[model]))
            placed = self.placed[model]
            if count == placed:
                which = "the breakpoint placed" if count == 1 else f"all {count} breakpoints placed"
            else:
                which = f"{count} of the {placed} breakpoints placed"
            one = count == 1
            tokens, estimated = self.longest[model]
            longest = (
                f" (the longest, {'an estimated ' if estimated else ''}{tokens:,} tokens)"
                if not one or estimated
                else ""
            )
            events.append(
                Event(
                    strategy,
                    "note",
                    f"{which} ({where}) {'sits' if one else 'sit'} below the "
                    f"{self.minimum[model]:,}-token minimum for {model_family(model)}{longest}: "
                    f"{'it caches' if one else 'they cache'} nothing",
                    self.first[model],
                )
            )
        return events
