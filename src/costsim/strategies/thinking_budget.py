"""``thinking_budget``: cap extended thinking at a token budget.

A call thinks when its request enables thinking, or sets nothing and its recording shows
thinking (reasoning tokens reported, or thinking blocks in the response). Its thinking is the
reported count, else, on Anthropic, the recorded output less the visible answer counted
offline (Claude 4 returns a summary of its thinking and bills all of it, so the thinking text
undercounts; a call without recorded usage falls back on that text), and the event says
which; OpenAI reasoning summaries are not the reasoning, so there only reported counts are
used.

Thinking above ``budget`` is cut to the budget and the output shrinks by the excess. In a
trace where the budget bites, every Anthropic request that enables thinking carries it as
``budget_tokens`` (lowered, never raised; adaptive thinking gets it too), as a client
configured with it would send; the changed thinking settings re-key the cached messages part.
A request with no thinking setting (a model that thinks by default) is left as sent.

Models that keep earlier thinking in later requests (Opus 4.5+, Sonnet 4.6+; DESIGN.md
section 6) bill it as input, so there re-sent thinking blocks keep the same leading fraction
of their text; older models and Haiku strip them, and their input does not change.

OpenAI takes an effort level, not a budget: its calls are left as recorded, a note counting
them, unless ``effort_as_budget`` asks to cap them the same way (a note per call says the
request cannot express it).

Divergence: a call whose recorded thinking exceeded the budget more than
``divergence_ratio`` times: its answer likely needed the thinking.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from pydantic import Field

from costsim.metering.models import encoding_for, keeps_thinking
from costsim.metering.tokenizers import counter
from costsim.model import (
    THINKING_BLOCKS,
    Block,
    Call,
    Flavour,
    Message,
    ThinkingBlock,
    ThinkingConfig,
)
from costsim.model.quoting import short_name
from costsim.strategies.base import Context, Params
from costsim.strategies.trace import Event, SimCall, SimTrace

__all__ = ["ThinkingBudget", "ThinkingBudgetParams"]


class ThinkingBudgetParams(Params):
    budget: int = Field(ge=1024)
    """Thinking tokens allowed per call (Anthropic's minimum ``budget_tokens`` is 1,024)."""
    divergence_ratio: float = Field(default=2.0, gt=1)
    """Recorded thinking above this many budgets is a divergence."""
    effort_as_budget: bool = False
    """OpenAI takes a reasoning effort, not a token budget: its calls are left as recorded,
    unless this is true, when their reasoning is capped as if a lower effort kept it within
    the budget (a what-if no request can express exactly)."""


@dataclass(frozen=True, slots=True)
class _Thinking:
    """What a recorded call spent on thinking, and the output it is part of."""

    tokens: int
    estimated: bool
    output: int
    how: str = "as reported"
    error: float = 0.0
    """Expected error (p90, tokens) of an estimated count."""


def _thinks(call: Call) -> bool:
    if call.thinking is not None:
        return call.thinking.enabled
    usage = call.usage
    return bool(usage is not None and usage.reasoning) or any(
        isinstance(b, ThinkingBlock) for b in call.response
    )


def _thinking(item: SimCall, context: Context) -> _Thinking | None:
    """The recorded thinking of ``item`` (None when unknown); the output it is part of."""
    origin = item.origin
    if origin is None or origin.errored or not _thinks(origin):
        return None
    usage = origin.usage
    output = item.output
    if output is None:
        output = usage.output if usage is not None else context.meter.estimate_output(origin)
    if item.reasoning is not None:
        return _Thinking(min(item.reasoning, output), False, output)
    if usage is not None and usage.reasoning is not None:
        return _Thinking(min(usage.reasoning, output), False, output)
    if origin.flavour is not Flavour.ANTHROPIC_MESSAGES:
        return None
    thought = [b for b in origin.response if isinstance(b, THINKING_BLOCKS)]
    if not thought:
        return None
    if usage is not None:
        # Claude 4 returns a summary of its thinking and bills the whole of it: the recorded
        # output less the visible answer is the thinking billed
        said = dataclasses.replace(
            origin, response=tuple(b for b in origin.response if not isinstance(b, THINKING_BLOCKS))
        )
        visible = context.meter.estimate_output(said)
        error = visible * context.meter.expected_output_error(said).p90 / 100
        how = "the recorded output less its visible answer"
        return _Thinking(max(0, min(output - visible, output)), True, output, how, error)
    texts = [b.text for b in thought if isinstance(b, ThinkingBlock) and b.text]
    if not texts:
        return None
    count = counter(encoding_for(origin))
    tokens = min(sum(count(t) for t in texts), output)
    p90 = context.meter.expected_output_error(origin).p90
    return _Thinking(tokens, True, output, "estimated from its thinking text", tokens * p90 / 100)


@dataclass(slots=True)
class _Shortener:
    """Shortens re-sent thinking blocks consistently: the same text keeps the same fraction,
    and the same block object always maps to the same new object."""

    ratios: dict[str, float] = dataclasses.field(default_factory=dict)
    """Thinking text of a capped response -> fraction kept."""
    done: dict[int, tuple[Block, Block]] = dataclasses.field(default_factory=dict)

    def block(self, block: Block) -> Block:
        if not isinstance(block, ThinkingBlock) or block.text not in self.ratios:
            return block
        hit = self.done.get(id(block))
        if hit is not None and hit[0] is block:
            return hit[1]
        keep = round(len(block.text) * self.ratios[block.text])
        new = dataclasses.replace(block, text=block.text[:keep])
        self.done[id(block)] = (block, new)
        return new

    def messages(self, messages: tuple[Message, ...]) -> tuple[Message, ...]:
        result = []
        for message in messages:
            content = tuple(self.block(b) for b in message.content)
            changed = any(a is not b for a, b in zip(content, message.content, strict=True))
            result.append(dataclasses.replace(message, content=content) if changed else message)
        return tuple(result)


class ThinkingBudget:
    name = "thinking_budget"
    summary = "cap thinking tokens at a budget; output shrinks by the excess"
    params = ThinkingBudgetParams
    removes_only = True
    """It only takes content away from requests (or changes none): see
    :func:`costsim.analysis.prompt_band.removes_only`."""

    def apply(
        self, trace: SimTrace, params: ThinkingBudgetParams, context: Context
    ) -> tuple[SimTrace, list[Event]]:
        spent = [_thinking(item, context) for item in trace.calls]
        held = _effort_only(trace, spent, params)
        bites = any(
            s is not None and s.tokens > params.budget and i not in held
            for i, s in enumerate(spent)
        )
        shortener = _Shortener()
        events: list[Event] = []
        calls: list[SimCall] = []
        for index, (item, thinking) in enumerate(zip(trace.calls, spent, strict=True)):
            if index in held:  # its request cannot carry a budget: as recorded
                calls.append(item)
                continue
            call = self._resend(item.call, shortener, events)
            if bites:
                call = self._budget(call, params.budget)
            origin = item.origin
            if origin is not None and not origin.errored and _thinks(origin) and thinking is None:
                events.append(
                    Event(
                        self.name,
                        "note",
                        "thinking tokens unknown (none reported, no thinking text): "
                        "output left as recorded",
                        call.provenance,
                    )
                )
            if thinking is None or thinking.tokens <= params.budget:
                if call is not item.call:
                    self._rebudgeted(item.call, call, thinking, events)
                calls.append(item if call is item.call else dataclasses.replace(item, call=call))
                continue
            calls.append(self._cap(item, call, thinking, params, shortener, events))
        if held:
            first = trace.calls[min(held)].call.provenance
            events.append(
                Event(
                    self.name,
                    "note",
                    "OpenAI sets a reasoning effort, not a token budget: "
                    f"{len(held):,} call{'' if len(held) == 1 else 's'} reasoning beyond "
                    f"{params.budget:,} tokens left as recorded (effort_as_budget=true caps "
                    "them as a lower effort might)",
                    first,
                )
            )
        return SimTrace(trace.path, tuple(calls)), events

    def _resend(self, call: Call, shortener: _Shortener, events: list[Event]) -> Call:
        """Earlier thinking re-sent by a model that keeps it: the capped fraction only."""
        if (
            not shortener.ratios
            or call.flavour is not Flavour.ANTHROPIC_MESSAGES
            or not keeps_thinking(call.model)
        ):
            return call
        messages = shortener.messages(call.messages)
        shortened = sum(
            1
            for new, old in zip(messages, call.messages, strict=True)
            for a, b in zip(new.content, old.content, strict=True)
            if a is not b
        )
        if not shortened:
            return call
        events.append(
            Event(
                self.name,
                "change",
                f"{shortened} re-sent thinking block(s) shortened like their capped originals "
                f"({short_name(call.model)} bills earlier thinking as input)",
                call.provenance,
            )
        )
        return dataclasses.replace(call, messages=messages)

    @staticmethod
    def _budget(call: Call, budget: int) -> Call:
        """An Anthropic thinking request with ``budget_tokens`` lowered to ``budget`` (an
        adaptive one gets the budget; a request with no thinking setting is left alone)."""
        thinking = call.thinking
        if call.flavour is not Flavour.ANTHROPIC_MESSAGES or thinking is None:
            return call
        if not thinking.enabled or (
            thinking.budget_tokens is not None and thinking.budget_tokens <= budget
        ):
            return call
        return dataclasses.replace(call, thinking=ThinkingConfig(True, budget))

    def _rebudgeted(
        self, before: Call, after: Call, thinking: _Thinking | None, events: list[Event]
    ) -> None:
        if before.thinking == after.thinking:
            return
        within = f"; thinking {thinking.tokens:,} within it" if thinking is not None else ""
        events.append(
            Event(
                self.name,
                "change",
                f"budget_tokens {_describe(before.thinking)} -> {_describe(after.thinking)}"
                f"{within}",
                after.provenance,
            )
        )

    def _cap(
        self,
        item: SimCall,
        call: Call,
        thinking: _Thinking,
        params: ThinkingBudgetParams,
        shortener: _Shortener,
        events: list[Event],
    ) -> SimCall:
        origin = item.origin
        if origin is None:  # only recorded calls have thinking to cap
            return item
        excess = thinking.tokens - params.budget
        output = thinking.output - excess
        for block in origin.response:
            if isinstance(block, ThinkingBlock) and block.text:
                shortener.ratios[block.text] = params.budget / thinking.tokens
        how = thinking.how
        budget = ""
        if call.thinking != item.call.thinking:
            budget = f"; budget_tokens {_describe(item.call.thinking)} -> {params.budget:,}"
        events.append(
            Event(
                self.name,
                "change",
                f"thinking {thinking.tokens:,} -> {params.budget:,} tokens ({how}); "
                f"output {thinking.output:,} -> {output:,}{budget}",
                call.provenance,
                tokens=excess,
            )
        )
        if call.flavour is not Flavour.ANTHROPIC_MESSAGES:
            events.append(
                Event(
                    self.name,
                    "note",
                    "OpenAI sets a reasoning effort, not a token budget: the request is "
                    "unchanged and the cap stands for a lower effort (effort_as_budget)",
                    call.provenance,
                )
            )
        if thinking.tokens > params.budget * params.divergence_ratio:
            events.append(
                Event(
                    self.name,
                    "divergence",
                    f"recorded thinking was {thinking.tokens / params.budget:.1f}x the budget "
                    f"({thinking.tokens:,} tokens): the answer likely needed it",
                    call.provenance,
                )
            )
        error = min(thinking.error, float(output))
        return dataclasses.replace(
            item,
            call=call,
            output=output,
            # thinking the recording did not report stays unreported (it is in the output):
            # reported as the budget, it would read as thinking the variant added
            reasoning=None if thinking.estimated else params.budget,
            output_error=error,
        )


def _effort_only(
    trace: SimTrace, spent: list[_Thinking | None], params: ThinkingBudgetParams
) -> set[int]:
    """The calls whose thinking the budget would cut but whose request cannot carry one
    (OpenAI's), unless ``effort_as_budget``: they are left as recorded."""
    if params.effort_as_budget:
        return set()
    return {
        index
        for index, (item, thinking) in enumerate(zip(trace.calls, spent, strict=True))
        if thinking is not None
        and thinking.tokens > params.budget
        and item.call.flavour is not Flavour.ANTHROPIC_MESSAGES
    }


def _describe(thinking: ThinkingConfig | None) -> str:
    if thinking is None or thinking.budget_tokens is None:
        return "(none)"
    return f"{thinking.budget_tokens:,}"
