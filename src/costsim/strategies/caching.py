"""``caching``: place prompt-cache breakpoints, and keep changing system text out of the
cached prefix.

Policies (Anthropic explicit caching):

- ``static`` (default): fixed ``placement`` positions on every request: ``tools`` marks the
  last tool definition, ``system`` the end of the static system prompt, ``messages`` a rolling
  breakpoint on the latest message(s). Breakpoints the request already carries are kept and
  count toward the limit of 4; a ``ttl`` set is the TTL of every breakpoint, theirs too
  (``1h`` raises their 5m ones, ``5m`` lowers their 1h ones: a client that chooses a TTL sets
  it on its breakpoints); unset, placed ones are 5m and theirs stay as recorded (a 5m one
  placed before a recorded 1h one is made 1h: the API takes 1h breakpoints only before 5m
  ones). Placed breakpoints whose prefix is below the model's minimum cache nothing, as
  online: a note per trace and model says how many.
- ``auto``: what a sensible client does online (see :mod:`costsim.strategies.cache_policies`).
- ``oracle``: knows the trace's future; writes only what is read again, 5m or 1h per prefix;
  never dearer than the placement as recorded.

``auto`` and ``oracle`` replace the recorded breakpoints and ignore ``placement``/``rolling``.

Static/dynamic split (:mod:`costsim.strategies.system_split`): calls of one agent whose system
text differs between calls share static lines (instructions, rules) among changing ones (a
running summary, a timestamp). The changing lines are moved after the static text and its
breakpoint, so they stop invalidating the cached prefix. OpenAI caches
automatically; there only the split applies.
"""

from __future__ import annotations

import dataclasses
from typing import Annotated, Literal

from pydantic import Field

from costsim.model import (
    CacheControl,
    Flavour,
)
from costsim.strategies.base import Context, Params
from costsim.strategies.cache_auto import auto_marks
from costsim.strategies.cache_policies import (
    Marks,
    eligible,
    marks_of,
    oracle_marks,
    placed,
)
from costsim.strategies.static_marks import ShortMarks, marks_in, place, placement_events
from costsim.strategies.system_split import SystemSplit, agent_key, system_splits, system_text
from costsim.strategies.trace import Event, SimCall, SimTrace

__all__ = ["Caching", "CachingParams"]

Policy = Literal["tools", "system", "messages"]


class CachingParams(Params):
    @property
    def knows_the_future(self) -> bool:
        return self.policy == "oracle"

    policy: Literal["static", "auto", "oracle"] = "static"
    """How breakpoints are chosen: fixed ``placement`` positions, an online client's choice,
    or the trace's own future (the README's caching row says how each chooses)."""
    ttl: Literal["5m", "1h"] | None = None
    """How long a written prefix stays readable (static and auto): 5 minutes, or an hour at a
    dearer write, for every breakpoint, those the request carries too; unset: breakpoints
    placed are 5m, those the request carries keep their TTL."""
    placement: tuple[Policy, ...] = ("tools", "system", "messages")
    """Where static breakpoints go: after the tool definitions, after the static system
    prompt, on the latest message(s)."""
    rolling: Annotated[int, Field(ge=0, le=2)] = 1
    """How many of the latest messages get a rolling breakpoint (0-2)."""
    split_dynamic_system: bool = True
    """Move system text that changes between calls of one agent (a running summary, a
    timestamp) after its static lines, so it stops invalidating the cached prefix."""
    max_breakpoints: Annotated[int, Field(ge=1, le=4)] = 4
    """At most this many breakpoints per request, those it already carries included
    (Anthropic accepts 4)."""


def _moved(split: SystemSplit, changing: str) -> str:
    return (
        f"moved {len(changing):,} changing system characters after the "
        f"{len(split.static):,} every call of the agent sends"
    )


class Caching:
    name = "caching"
    summary = "place prompt-cache breakpoints; move changing system text after them"
    params = CachingParams
    removes_only = True
    """It only takes content away from requests (or changes none): see
    :func:`costsim.analysis.prompt_band.removes_only`."""

    def apply(
        self, trace: SimTrace, params: CachingParams, context: Context
    ) -> tuple[SimTrace, list[Event]]:
        splits = (
            system_splits(item.call for item in trace.calls) if params.split_dynamic_system else {}
        )
        events: list[Event] = []
        mark = CacheControl(params.ttl or "5m")
        calls: list[SimCall] = []
        short = ShortMarks()
        for item in trace.calls:
            call = item.call
            text = system_text(call)
            split = splits.get(agent_key(text)) if text else None
            changing = split.changing(text) if split is not None and text else None
            recorded: list[CacheControl | None] | None = None  # None: those of the call
            if split is not None and changing:
                anthropic = call.flavour is Flavour.ANTHROPIC_MESSAGES
                placing = anthropic and params.policy == "static"
                call = split.apply(call, changing, mark if placing else None)
                recorded = marks_in(call)
                recorded[len(call.tools)] = None  # the static part's breakpoint is placed too
                events.append(Event(self.name, "change", _moved(split, changing), call.provenance))
            if call.flavour is Flavour.ANTHROPIC_MESSAGES and params.policy == "static":
                placed_call, changed = place(call, params)
                events += placement_events(call, placed_call, changed, params.ttl)
                if context.layout is not None:
                    short.add(
                        marks_in(call) if recorded is None else recorded,
                        placed_call,
                        context.layout(dataclasses.replace(item, call=placed_call)),
                        context,
                    )
                call = placed_call
            calls.append(dataclasses.replace(item, call=call) if call is not item.call else item)
        result = SimTrace(trace.path, tuple(calls))
        events += short.events(self.name)
        if params.policy == "auto":
            marks = auto_marks(result, params.ttl or "5m", context)
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
        for ttl in (None, "5m", "1h"):
            static = params.model_copy(update={"policy": "static", "ttl": ttl})
            placed_static, _ = self.apply(trace, static, context)
            found.append(
                [marks_of(item.call) if eligible(item) else None for item in placed_static.calls]
            )
            if ttl is not None:
                found.append(auto_marks(split, ttl, context))
        return found

    def _placed(self, trace: SimTrace, marks: list[Marks | None], policy: str) -> list[Event]:
        """One change per request whose breakpoints the policy changed: those it placed, and
        those of the request it took away (a request left as it was has none)."""
        events = []
        for item, mark in zip(trace.calls, marks, strict=True):
            before = marks_of(item.call)
            if mark is None or (mark == before and item.call.cache_control is None):
                continue
            carried = len(before) + (item.call.cache_control is not None)
            if mark:
                ttls = sorted(mark.values())
                described = ", ".join(f"{ttls.count(t)} {t}" for t in sorted(set(ttls)))
                what = f"{len(mark)} breakpoint(s) ({described})"
                what += f" instead of the request's {carried}" if carried else ""
            else:
                what = f"no breakpoint: the request's {carried} taken away"
            events.append(Event(self.name, "change", f"{policy}: {what}", item.call.provenance))
        return events
