"""``thinking_budget``: cap extended thinking at a token budget.

For every call with thinking enabled, the thinking it spent (reported by the provider, else
counted offline from its thinking text, and said so) is capped at ``budget``; the output
shrinks by the excess. The request's ``budget_tokens`` becomes the budget, which changes the
thinking parameters and so invalidates the cached messages part. Models that keep earlier
thinking in later requests (Opus 4.5+, Sonnet 4.6+; DESIGN.md section 6) are billed for it as
input, so those re-sent thinking blocks shrink by the same proportion; older models and Haiku
strip them, and their input does not change.

Divergence: a call whose recorded thinking exceeded the budget ``divergence_ratio`` times over:
its answer likely needed the thinking.
"""

from __future__ import annotations

import dataclasses

from pydantic import Field

from costsim.engine.registry import Context, Params, register
from costsim.engine.trace import Event, SimCall, SimTrace
from costsim.metering.models import encoding_for, keeps_thinking
from costsim.metering.tokenizers import counter
from costsim.model import (
    Block,
    Call,
    Flavour,
    Message,
    ReasoningBlock,
    ThinkingBlock,
    ThinkingConfig,
)

__all__ = ["ThinkingBudget", "ThinkingBudgetParams"]


class ThinkingBudgetParams(Params):
    budget: int = Field(ge=1024)
    """Thinking tokens allowed per call (Anthropic's minimum budget is 1,024)."""
    divergence_ratio: float = Field(default=2.0, gt=1)


def _thinking_tokens(call: Call) -> tuple[int, bool]:
    """(thinking tokens of the recorded response, estimated?)."""
    if call.usage is not None and call.usage.reasoning is not None:
        return call.usage.reasoning, False
    count = counter(encoding_for(call))
    texts = [b.text for b in call.response if isinstance(b, ThinkingBlock)]
    texts += [b.summary for b in call.response if isinstance(b, ReasoningBlock)]
    return sum(count(text) for text in texts), True


@dataclasses.dataclass(slots=True)
class _Shortener:
    """Shortens re-sent thinking blocks consistently (same block object, same result)."""

    ratios: dict[str, float] = dataclasses.field(default_factory=dict)
    """Thinking text (the response's) -> kept fraction."""
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

    def apply(
        self, trace: SimTrace, params: ThinkingBudgetParams, context: Context
    ) -> tuple[SimTrace, list[Event]]:
        shortener = _Shortener()
        events: list[Event] = []
        calls: list[SimCall] = []
        for item in trace.calls:
            call = item.call
            if keeps_thinking(call.model) and shortener.ratios:
                messages = shortener.messages(call.messages)
                if any(a is not b for a, b in zip(messages, call.messages, strict=True)):
                    call = dataclasses.replace(call, messages=messages)
            capped = self._cap(item, call, params, shortener, events)
            calls.append(capped)
        return SimTrace(trace.path, tuple(calls)), events

    def _cap(
        self,
        item: SimCall,
        call: Call,
        params: ThinkingBudgetParams,
        shortener: _Shortener,
        events: list[Event],
    ) -> SimCall:
        changed = item if call is item.call else dataclasses.replace(item, call=call)
        if call.thinking is None or not call.thinking.enabled or item.origin is None:
            return changed
        thinking, estimated = _thinking_tokens(item.origin)
        usage = item.origin.usage
        if thinking <= params.budget or usage is None:
            return changed
        excess = thinking - params.budget
        for block in item.origin.response:
            if isinstance(block, ThinkingBlock) and block.text:
                shortener.ratios[block.text] = params.budget / thinking
        if call.flavour is Flavour.ANTHROPIC_MESSAGES:
            call = dataclasses.replace(
                call, thinking=ThinkingConfig(True, params.budget, call.thinking.effort)
            )
        how = "estimated from its thinking text" if estimated else "as reported"
        events.append(
            Event(
                self.name,
                "change",
                f"thinking {thinking:,} -> {params.budget:,} tokens ({how}); output -{excess:,}",
                call.provenance,
            )
        )
        if call.flavour is not Flavour.ANTHROPIC_MESSAGES:
            events.append(
                Event(
                    self.name,
                    "note",
                    "OpenAI sets reasoning effort, not a token budget",
                    call.provenance,
                )
            )
        if thinking > params.budget * params.divergence_ratio:
            events.append(
                Event(
                    self.name,
                    "divergence",
                    f"recorded thinking was {thinking / params.budget:.1f}x the budget",
                    call.provenance,
                )
            )
        return dataclasses.replace(
            item, call=call, output=max(0, usage.output - excess), reasoning=params.budget
        )


register(ThinkingBudget())
