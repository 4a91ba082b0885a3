"""Metered calls and their totals: what each call used and cost, summed honestly.

A call that errored is unbilled (cost zero, no tokens). A call whose model has no price is
*unpriced*: its tokens count, and any total that includes it has no cost (``None``), never $0.
A call with no usage at all is *unmetered* until an estimate is supplied; it, too, makes the
cost of its totals unknown.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal

from costsim.model import (
    THINKING_BLOCKS,
    Call,
    Provenance,
    Usage,
    UsageSource,
)
from costsim.model.reasoning import output_hidden, reasons
from costsim.pricing.hosts import host_provider
from costsim.pricing.linear import counts as token_counts
from costsim.pricing.names import model_label
from costsim.pricing.platform_ids import price_list
from costsim.pricing.prices import Price, price, today
from costsim.pricing.reads import ReadPricing
from costsim.pricing.snapshots import EarlySnapshot, early_snapshot
from costsim.pricing.split import ClassCost, split_cost

__all__ = ["MeteredCall", "Totals", "UnpricedCall", "forget_metered", "meter"]


def _billed(usage: Usage) -> tuple[int, ...]:
    """What a call is billed for: its tokens of each kind, thinking and web searches."""
    return (*token_counts(usage), usage.reasoning or 0, usage.web_searches)


def _unpriced_key(item: UnpricedCall) -> tuple[object, ...]:
    return (str(item.provenance.path), item.provenance.index, item.model, item.billed, item.floor)


@dataclass(frozen=True, slots=True)
class UnpricedCall:
    provenance: Provenance
    model: str
    reason: str
    billed: tuple[int, ...] = ()
    """The tokens it is billed for, by class: two runs that bill an unpriced call alike owe
    the same unknown amount for it."""
    floor: Decimal = Decimal(0)
    """The priced part of its cost (in ``Totals.priced_cost``)."""


@dataclass(frozen=True, slots=True)
class MeteredCall:
    """A call with the usage it is billed for (recorded or estimated) and its price."""

    call: Call
    usage: Usage | None
    price: Price | None
    split: ClassCost | None = None
    """The cost split by class (see :mod:`costsim.pricing.split`); None: no known cost."""

    @property
    def unpriced(self) -> bool:
        return self.usage is not None and self.price is not None and not self.price.priced

    @property
    def billed_model(self) -> str:
        """The model as a breakdown names it: one name per price, as the traffic names it, so
        a variant's request and the recorded response (which may name a dated version) are
        one model (see :mod:`costsim.pricing.names`)."""
        name = self.call.priced_model
        if not name:
            return "(no model)"
        price = self.price
        model_id = price.model_id if price is not None and price.source == "genai-prices" else None
        return model_label(name, self.call.price_provider, model_id)


_MEMO_SIZE = 1 << 14
_METERED: dict[tuple[int, Usage | None, datetime, bool, bool], tuple[Call, MeteredCall]] = {}
"""Metered calls by call (its identity: the entry holds the call, so the id stays its own),
usage and moment (today, for a call priced at today's prices; and whether --as-of set it): a
comparison bills each unchanged call once per variant that changes its trace, and in the
baseline again. Bounded."""


def forget_metered() -> None:
    """Empty the memo of metered calls (a comparison run does as it ends: the memo holds its
    requests)."""
    _METERED.clear()


def meter(call: Call, *, as_of: datetime | None = None, usage: Usage | None = None) -> MeteredCall:
    """Price a call's usage (its recorded usage unless ``usage`` is given) at its date.

    When genai-prices has no price for the model but a gateway recorded what the call cost
    (OpenRouter's ``usage.cost``), that recorded cost is used, labelled ``gateway``; only for
    the recorded usage, never for a changed or estimated one.
    """
    billed = usage if usage is not None else call.usage
    when = as_of or call.recorded_at
    # undated: said so, apart; pinned (--as-of): a model's later snapshot said, apart
    key = (id(call), billed, when or today(), when is None, as_of is not None)
    hit = _METERED.get(key)
    if hit is not None and hit[0] is call:
        return hit[1]
    if len(_METERED) >= _MEMO_SIZE:
        _METERED.clear()
    metered = _meter(call, billed, when, pinned=as_of is not None)
    _METERED[key] = (call, metered)
    return metered


def _meter(
    call: Call, billed: Usage | None, when: datetime | None, *, pinned: bool = False
) -> MeteredCall:
    if call.errored and billed is None:
        return MeteredCall(call, None, Price(Decimal(0)), ClassCost())
    if billed is None:
        return MeteredCall(call, None, None)
    model, provider = price_list(call, prompt=billed.prompt_total)
    result = price(billed, model=model, provider=provider, at=when)
    if not result.priced and call.platform is not None and call.served_by is None:
        # A model the platform's price list does not carry (a routed-to model, say): the
        # provider's own list price, which Vertex AI matches for Claude models; Bedrock's
        # regional endpoints bill more, and routing says so where it falls back here.
        fallback = price(billed, model=call.priced_model, provider=call.provider, at=when)
        if fallback.priced:
            result, model, provider = fallback, call.priced_model, call.provider
    if not result.priced and call.recorded_cost is not None and billed == call.usage:
        result = Price(
            call.recorded_cost,
            model_id=call.priced_model,
            priced_at=result.priced_at,
            undated=result.undated,
            source="gateway",
        )
    if pinned and when is not None and result.source == "genai-prices" and result.model_id:
        # --as-of before the model's snapshot: genai-prices prices it all the same (said so)
        names = (call.priced_model, call.response_model, call.model)
        early = early_snapshot(names, model, provider, when)
        result = result if early is None else dataclasses.replace(result, early=early)
    return MeteredCall(call, billed, result, split_cost(call, billed, result))


def _thought(call: Call) -> bool:
    """The call's response holds thinking (Anthropic thinking or redacted thinking blocks)."""
    return any(isinstance(block, THINKING_BLOCKS) for block in call.response)


@dataclass(slots=True)
class Totals:
    """Sums over metered calls. ``cost_usd`` is None when any call's cost is unknown."""

    llm_calls: int = 0
    calls_with_usage: int = 0
    estimated_calls: int = 0
    errored_calls: int = 0
    """Calls the API answered with an error and billed nothing for (an error after usage was
    reported, at the end of a stream, is billed as recorded)."""
    unmetered_calls: int = 0
    left_out_calls: int = 0
    """Interactions that look like LLM calls but that costsim cannot meter (an API it does
    not read, a body a lenient read could not read): in no sum, so the cost is unknown (the
    priced part a lower bound)."""
    prompt_tokens: int = 0
    uncached_input_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_5m_tokens: int = 0
    cache_write_1h_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0
    undated_calls: int = 0
    """Calls priced at today's prices because neither the recording nor --as-of gave a date."""
    gateway_priced_calls: int = 0
    """Calls priced from the cost a gateway recorded (no genai-prices price for the model)."""
    web_searches: int = 0
    unreported_thinking_calls: int = 0
    """Calls that thought without reporting how much (Anthropic bills thinking inside output
    and does not count it apart): their thinking is in ``output_tokens``, not in
    ``reasoning_tokens``."""
    hidden_output_calls: int = 0
    """Calls whose output is an estimate that may lie well above what was recorded (a cut
    stream, a reasoning model recorded without usage): their output is a lower bound."""
    read_pricing: dict[ReadPricing, dict[str, int]] = field(default_factory=dict)
    """Calls whose cache reads the model has no cached-input price for, by how they were
    priced, then by model (see :mod:`costsim.pricing.reads`); string keys, so the cache
    stores and reads it back as it is."""
    early_snapshots: dict[str, EarlySnapshot] = field(default_factory=dict)
    """Models priced at ``--as-of`` before the snapshot date their id names, by id: the first
    call of each (see :mod:`costsim.pricing.snapshots`)."""
    priced_cost: Decimal = Decimal(0)
    unpriced: list[UnpricedCall] = field(default_factory=list)
    split: ClassCost = field(default_factory=ClassCost)
    """The priced part of the cost split by class (uncached, cache read and write, output,
    other): what charts stack."""

    @classmethod
    def of(cls, calls: Iterable[MeteredCall]) -> Totals:
        totals = cls()
        splits: list[ClassCost] = []
        for metered in calls:
            split = totals._count(metered)
            if split is not None:
                splits.append(split)
        if splits:
            totals.split = ClassCost.total_of(splits, start=totals.split)
        return totals

    def add(self, metered: MeteredCall) -> None:
        split = self._count(metered)
        if split is not None:
            self.split = self.split + split

    def _count(self, metered: MeteredCall) -> ClassCost | None:
        """Add everything of ``metered`` but its split by class, which is returned (to be
        added, in order, by the caller)."""
        self.llm_calls += 1
        call, usage = metered.call, metered.usage
        if usage is None:
            if call.errored:  # answered with an error: unbilled
                self.errored_calls += 1
            else:
                self.unmetered_calls += 1
            return None
        if usage.source is UsageSource.ESTIMATED:
            self.estimated_calls += 1
        else:
            self.calls_with_usage += 1
        # the prompt total's parts, added here (this runs per call, per table, per variant)
        uncached, read = usage.uncached_input, usage.cache_read
        write_5m, write_1h = usage.cache_write_5m, usage.cache_write_1h
        self.prompt_tokens += uncached + read + write_5m + write_1h
        self.uncached_input_tokens += uncached
        self.cache_read_tokens += read
        self.cache_write_5m_tokens += write_5m
        self.cache_write_1h_tokens += write_1h
        self.output_tokens += usage.output
        self.reasoning_tokens += usage.reasoning or 0
        if usage.reasoning is None and (_thought(call) or (usage.estimated and reasons(call))):
            self.unreported_thinking_calls += 1
        if output_hidden(call, usage):
            self.hidden_output_calls += 1
        self.web_searches += usage.web_searches
        cost = metered.price
        if cost is None:
            return None
        self._how_priced(cost, call)
        if cost.amount is not None:
            self.priced_cost += cost.amount
            self.gateway_priced_calls += cost.source == "gateway"
            return metered.split
        self.priced_cost += cost.lower_bound
        reason = cost.unpriced_reason or "no price"
        if (
            cost.unpriced_reason is not None
            and cost.unpriced_reason.startswith("genai-prices has no price for")
            and call.host
            and call.platform is None
            and host_provider(call.host) is None
        ):  # the model is unknown, perhaps a private gateway's: say where it was called
            reason += f" at {call.host}, a host genai-prices does not know"
        self.unpriced.append(
            UnpricedCall(
                call.provenance, call.priced_model, reason, _billed(usage), cost.lower_bound
            )
        )
        return None

    def _how_priced(self, cost: Price, call: Call) -> None:
        """Count what the notes say of how a call was priced: undated, before its model's
        snapshot, its cache reads without a price of their own."""
        if cost.undated:
            self.undated_calls += 1
        if cost.early is not None:
            self.early_snapshots.setdefault(cost.early.model, cost.early)
        if cost.reads is not ReadPricing.OWN:
            models = self.read_pricing.setdefault(cost.reads, {})
            model = cost.model_id or call.priced_model
            models[model] = models.get(model, 0) + 1

    def merge(self, other: Totals) -> None:
        """Add ``other``'s sums to these (field by field: merging runs once per table cell)."""
        self.llm_calls += other.llm_calls
        self.calls_with_usage += other.calls_with_usage
        self.estimated_calls += other.estimated_calls
        self.errored_calls += other.errored_calls
        self.unmetered_calls += other.unmetered_calls
        self.left_out_calls += other.left_out_calls
        self.prompt_tokens += other.prompt_tokens
        self.uncached_input_tokens += other.uncached_input_tokens
        self.cache_read_tokens += other.cache_read_tokens
        self.cache_write_5m_tokens += other.cache_write_5m_tokens
        self.cache_write_1h_tokens += other.cache_write_1h_tokens
        self.output_tokens += other.output_tokens
        self.reasoning_tokens += other.reasoning_tokens
        self.unreported_thinking_calls += other.unreported_thinking_calls
        self.hidden_output_calls += other.hidden_output_calls
        self.undated_calls += other.undated_calls
        self.gateway_priced_calls += other.gateway_priced_calls
        self.web_searches += other.web_searches
        for how, counts in other.read_pricing.items():
            models = self.read_pricing.setdefault(how, {})
            for model, count in counts.items():
                models[model] = models.get(model, 0) + count
        for model, early in other.early_snapshots.items():
            self.early_snapshots.setdefault(model, early)
        self.priced_cost += other.priced_cost
        self.unpriced.extend(other.unpriced)
        self.split = self.split + other.split

    @property
    def cache_write_tokens(self) -> int:
        return self.cache_write_5m_tokens + self.cache_write_1h_tokens

    @property
    def unpriced_calls(self) -> int:
        return len(self.unpriced)

    @property
    def cache_hit_rate(self) -> float | None:
        """Cache read / prompt total; None when there were no prompt tokens."""
        return self.cache_read_tokens / self.prompt_tokens if self.prompt_tokens else None

    @property
    def cost_usd(self) -> Decimal | None:
        if self.unpriced or self.unmetered_calls or self.left_out_calls:
            return None
        return self.priced_cost

    def change_from(self, before: Totals) -> Decimal | None:
        """These sums' cost minus ``before``'s: known when both are priced, and when both
        bill the same calls without a price alike, or leave the same number of interactions
        out (their unknown cost is then the same on both sides, and the difference is that
        of the priced parts); else None."""
        after_cost, before_cost = self.cost_usd, before.cost_usd
        if after_cost is not None and before_cost is not None:
            return after_cost - before_cost
        if self.unmetered_calls or before.unmetered_calls:
            return None
        if self.left_out_calls != before.left_out_calls:  # the same interactions, left out
            return None
        if (self.unpriced or before.unpriced) and not self.unpriced_alike(before):
            return None
        return self.priced_cost - before.priced_cost

    def unpriced_alike(self, other: Totals) -> bool:
        """Both bill the same calls without a price, each for the same tokens (and some)."""
        if not self.unpriced or len(self.unpriced) != len(other.unpriced):
            return False
        return Counter(map(_unpriced_key, self.unpriced)) == Counter(
            map(_unpriced_key, other.unpriced)
        )
