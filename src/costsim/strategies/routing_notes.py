"""What routing says once per trace and pair of models, not at every call: calls sent to a
model whose input price is higher, and calls whose prompt grows or shrinks because Anthropic
adds another tool-use system prompt for the new model (a trial saw a Sonnet 4 trace routed to
Haiku 4.5 gain 13.5% prompt tokens, 183 a call, with nothing saying why), and a target without
a price. The last two name no count of calls: the same note of many cassettes reads once (the
unpriced calls are counted under the table)."""

from __future__ import annotations

from costsim.metering.serialise import tool_prompt
from costsim.model import Call
from costsim.pricing.names import close_model
from costsim.pricing.platform_ids import price_list
from costsim.strategies.trace import Event, SimCall

__all__ = ["RoutedPairs"]


class RoutedPairs:
    """The routed calls of one trace, by the pair of models they went between."""

    def __init__(self, strategy: str) -> None:
        self.strategy = strategy
        self._dearer: dict[tuple[str, str], list[SimCall]] = {}
        # the notes below name no count: the first call of each is where they are said
        self._prompted: dict[tuple[str, str, int, int], SimCall] = {}
        self._unpriced: dict[tuple[str, str], SimCall] = {}

    def add(
        self, item: SimCall, routed: Call, was: str, to: str, *, dearer: bool, priced: bool
    ) -> None:
        """``item`` (as recorded) sent as ``routed``; ``was`` and ``to`` name the models as
        prices name them; ``dearer``: the new model's input price is higher; ``priced``:
        genai-prices has an input price for it (at the provider whose list prices it)."""
        if dearer:
            self._dearer.setdefault((was, to), []).append(item)
        if not priced:
            self._unpriced.setdefault((routed.model, price_list(routed)[1]), item)
        before, after = tool_prompt(item.call), tool_prompt(routed)
        if before != after:
            self._prompted.setdefault((was, to, before, after), item)

    def events(self) -> list[Event]:
        events = [
            Event(
                self.strategy,
                "note",
                f"{_calls(items)} routed from {was} to {to}, whose input price is higher",
                items[0].call.provenance,
            )
            for (was, to), items in self._dearer.items()
        ]
        events += [
            Event(
                self.strategy,
                "note",
                f"calls with tools routed from {was} to {to}: Anthropic adds a "
                f"{after:,}-token tool-use system prompt for {to} where {before:,} for {was} "
                f"({after - before:+,} a call, its documented figures)",
                item.call.provenance,
            )
            for (was, to, before, after), item in self._prompted.items()
        ]
        for (model, provider), item in self._unpriced.items():
            close = close_model(model, provider)
            meant = f" (did you mean {close}?)" if close is not None else ""
            events.append(
                Event(
                    self.strategy,
                    "note",
                    f"{model} has no price in genai-prices at {provider}{meant}: the calls "
                    "routed to it are unpriced",
                    item.call.provenance,
                )
            )
        return events


def _calls(items: list[SimCall]) -> str:
    return f"{len(items)} call{'s' if len(items) > 1 else ''}"
