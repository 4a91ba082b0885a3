"""The band term of a billed call's prompt: how far its true prompt total may lie from the
estimate, in tokens (:mod:`costsim.analysis.bands` prices it).

A changed request is its recorded prompt plus the calibrated delta, unsure by the delta's
increment error; a prompt estimated whole, by the whole-prompt error. A request that only lost
content (strategies that say ``removes_only``) is no longer than recorded, so the error above
the estimate stops there.
"""

from __future__ import annotations

import dataclasses
from decimal import Decimal
from difflib import SequenceMatcher

from costsim.engine.simulate import SimulatedCall, VariantResult
from costsim.metering.classes import content_class, delta_class
from costsim.metering.evaluate import exclusion_reason
from costsim.metering.meter import Meter
from costsim.metering.models import tool_prompt_documented
from costsim.model import Call, Usage
from costsim.pricing.units import UnitPrices
from costsim.strategies.registry import get_strategy

__all__ = [
    "INCREMENT_FACTOR",
    "PROMPT_FACTOR",
    "SELF_CHECKED",
    "SIGN_KNOWN",
    "changed_prompt_error",
    "error_price",
    "prompt_error",
    "prompt_sides",
    "removes_only",
    "self_checked_error",
]

INCREMENT_FACTOR = 6.0
"""A changed request's delta: this many times its table p90 (the larger of the increment and
whole-prompt figures)."""
PROMPT_FACTOR = 10.0
"""A prompt estimated whole (no recorded usage): this many times the whole-prompt p90."""
SIGN_KNOWN = 32
"""A request that only lost content, by at least this many tokens (the offline count,
calibrated), is shorter than recorded: removing that much text cannot make a prompt longer
under the same model (a marker a strategy leaves in its place is a few tokens)."""


def prompt_error(item: SimulatedCall, usage: Usage, meter: Meter) -> float:
    """p90 error in tokens of the call's prompt total."""
    origin, call = item.sim.origin, item.call
    if origin is None:
        return usage.prompt_total * meter.expected_error(call).p90 / 100 * PROMPT_FACTOR
    if origin.usage is None:
        return usage.prompt_total * meter.expected_error(origin).p90 / 100 * PROMPT_FACTOR
    if call is origin or call == origin:
        return 0.0
    # never less sure than estimating the changed prompt afresh: a delta between models
    # (routing) can dwarf the prompt it leads to (an image billed 14,000 tokens on one model
    # and 470 on the other), and its error with it
    whole = usage.prompt_total * meter.expected_error(call).p90 / 100 * PROMPT_FACTOR
    return min(changed_prompt_error(meter, origin, call), whole)


def prompt_sides(
    item: SimulatedCall, usage: Usage, error: float, removes_only: bool
) -> tuple[float, float]:
    """How far (tokens) the true prompt may lie below and above the estimate. A request that
    strategies which only take content away (``removes_only``: a result truncated, tools or
    history left out) shrank by at least :data:`SIGN_KNOWN` tokens for the same model sends no
    more than was recorded: the error above is capped there. An edit that replaces text
    (what the code sends now, a summary for a history) can go either way. No prompt is
    below nothing: the error below stops at the estimate."""
    origin = item.sim.origin
    below = min(error, float(usage.prompt_total))  # a prompt is never below nothing
    if not removes_only or origin is None or origin.usage is None:
        return below, error
    moved = usage.prompt_total - origin.usage.prompt_total
    if item.call.model != origin.model or moved > -SIGN_KNOWN:
        return below, error
    return below, min(error, float(-moved))


def changed_prompt_error(meter: Meter, original: Call, transformed: Call) -> float:
    """p90 error in tokens of a changed request's prompt (recorded plus calibrated delta):
    the table's, widened for sources it was not fitted on; for text and tool calls, no more
    than the recorded prompt itself says the estimator misses on this content
    (:func:`self_checked_error`)."""
    if _rule_only(meter, original, transformed):
        return 0.0
    band = meter.delta_band(original, transformed)  # text added to a reasoning request: text's
    whole = abs(band.delta) * meter.errors.total(transformed.flavour.value, band.klass).p90 / 100
    error = max(band.p90, whole) * INCREMENT_FACTOR
    checked = self_checked_error(meter, original, transformed, band.delta, band.klass)
    return error if checked is None else min(error, checked)


def _rule_only(meter: Meter, original: Call, transformed: Call) -> bool:
    """Whether two requests differ only in what a documented rule counts (the tool-use
    system prompt of another model, Sonnet 4.5's 496 tokens against Opus 4.1's 313): the same
    content, counted alike, with the same coefficients. Its delta is the rule's, exact."""
    if transformed.model == original.model:
        return False
    mine, theirs = meter.features(transformed), meter.features(original)
    if mine.fixed != theirs.fixed and not (
        tool_prompt_documented(transformed.model) and tool_prompt_documented(original.model)
    ):
        return False  # a model the table does not list gets the generic prompt: a guess
    return dataclasses.replace(mine, fixed=0) == dataclasses.replace(
        theirs, fixed=0
    ) and meter.coefficients(transformed) == meter.coefficients(original)


MEDIA = frozenset({"images", "documents"})
"""Request classes whose media a provider's rule counts, beside text a self-check can read."""
SELF_CHECKED = frozenset({"text", "tools"})
"""Content classes whose whole recorded prompt bounds the delta's error (held out by source,
it did; for images, documents and reasoning the increments missed by far more than the
whole prompt did, so their bands stay the table's)."""
SELF_FLOOR = 0.10
SELF_FACTOR = 3.0
SELF_TOKENS = 10.0
"""A delta of a text or tool request is off by at most ``SELF_FACTOR`` times the estimator's
relative miss on the whole recorded prompt, and at least ``SELF_FLOOR`` of the delta, plus
``SELF_TOKENS`` of framing. On the corpus's next-turn increments it applies to (205, held
out by source as ``benchmarks/bench_bands.py`` holds them) it covers what the table rule
covers, 100%, 97.5% and 100% of each source's, at 40% of its width. The three numbers were
chosen with all three sources in view: chosen on two alone, the narrowest that cover 90% of
those cover 84% of the third, so these are wider than that."""


def self_checked_error(
    meter: Meter, original: Call, transformed: Call, delta: float, changed: str | None = None
) -> float | None:
    """The error of a text or tool delta from how far the calibrated estimate of its
    recorded prompt is from what was billed (the same estimator, on the same content);
    None where that does not bound it: another change, another model, no recorded usage, or
    a call calibration leaves out (a prompt the server extends or does not show). A request
    that also holds images or documents, untouched, is measured on its own text: its miss
    against what was billed for the rest (a screenshot's tokens come from the provider's
    rule, not the tokenizer), so a cut of a text result beside screenshots is not banded at
    the table's width, nine times its text-only twin's. ``changed``: the class of what
    changed, when the caller has it (:func:`~costsim.metering.classes.delta_class`)."""
    usage = original.usage
    whole = content_class(original)
    if (
        usage is None
        or transformed.model != original.model
        or original.server_tools
        or whole not in SELF_CHECKED | MEDIA
        or (changed or delta_class(original, transformed)) not in SELF_CHECKED
        # what calibration does not trust (a prompt the server extends: deferred or server
        # tools, stored conversations, MCP servers) says nothing about the estimator either
        or exclusion_reason(original, meter.features(original)) is not None
    ):
        return None
    media = meter.features(original).fixed if whole in MEDIA else 0
    text = usage.prompt_total - media
    if text <= 0:
        return None
    miss = abs(meter.estimate_prompt(original) - usage.prompt_total) / text
    return abs(delta) * max(SELF_FLOOR, SELF_FACTOR * miss) + SELF_TOKENS


def removes_only(result: VariantResult) -> bool:
    """Every step of the run's variant only takes content away from requests, or changes none
    (a strategy says so: ``removes_only``), and the requests are the recorded ones."""
    return not result.sent and all(
        getattr(get_strategy(step.strategy), "removes_only", False) for step in result.variant.steps
    )


_PER_TOKEN = Decimal("1e-15")


def error_price(
    item: SimulatedCall,
    usage: Usage,
    meter: Meter,
    segments: list[tuple[str, int]],
    prices: UnitPrices,
) -> Decimal:
    """The price per token of a changed request's prompt error: that of the billed segments
    (``segments``: ``read``, ``1h``, ``5m`` or ``uncached`` with their tokens, in prompt
    order) holding what it changed, each by its share of the change. A tool result truncated
    early in a conversation is re-sent in every later request, each reading it from the
    cache the one before wrote: were the cut larger or smaller than estimated, those reads
    would be, at the read price, while a result cut as it is first sent is written (priced
    all at the last segment's, the uncached price, a trial's band on an 85% saving was ten
    times too wide). A prompt estimated whole errs in its last segment."""
    tail = segments[-1][0] if segments else "uncached"
    changed = _changed(item, usage, meter)
    if not changed:
        return prices.of(tail)
    weight = sum(share for _, share in changed)
    if weight <= 0:  # blocks changed in place, each as long as it was: alike
        changed, weight = [(position, 1.0) for position, _ in changed], float(len(changed))

    def at(position: int) -> str:
        end = 0
        for kind, tokens in segments:
            end += tokens
            if position < end:
                return kind
        return tail

    by_kind: dict[str, float] = {}
    for position, share in changed:
        kind = at(position)
        by_kind[kind] = by_kind.get(kind, 0.0) + share
    if len(by_kind) == 1:  # one segment: its price, exactly
        return prices.of(next(iter(by_kind)))
    total = Decimal(str(weight))
    mixed = sum(
        (prices.of(kind) * Decimal(str(share)) / total for kind, share in by_kind.items()),
        start=Decimal(0),
    )
    return mixed.quantize(_PER_TOKEN)  # a price per token: to a billionth of a cent


def _changed(item: SimulatedCall, usage: Usage, meter: Meter) -> list[tuple[int, float]]:
    """Where (prompt tokens before it) the variant changed the recorded request, and by how
    much (raw tokens): each run of blocks it changed, dropped or added, the requests' blocks
    matched in order (one a strategy left alone is the same object, or equal). Empty for a
    prompt estimated whole, one sent to another model (its count changed all along), or one
    whose blocks are all the recorded ones."""
    origin, call = item.sim.origin, item.call
    if origin is None or origin.usage is None or call is origin or call.model != origin.model:
        return []
    mine, theirs = call.prompt_blocks, origin.prompt_blocks
    matcher = SequenceMatcher(None, [_key(b) for b in theirs], [_key(b) for b in mine], False)
    runs = [op for op in matcher.get_opcodes() if op[0] != "equal"]
    if not runs:
        return []
    positions = [0, *(p.cumulative for p in meter.serialiser.positions(call))]
    before = [0, *(p.cumulative for p in meter.serialiser.positions(origin))]
    if positions[-1] <= 0 or len(positions) != len(mine) + 1 or len(before) != len(theirs) + 1:
        return []
    rate = usage.prompt_total / positions[-1]
    return [
        (
            round(positions[j1] * rate),
            float(abs((positions[j2] - positions[j1]) - (before[i2] - before[i1]))),
        )
        for _, i1, i2, j1, j2 in runs
    ]


def _key(block: object) -> object:
    """What matches a block with its recorded self: itself where it can be hashed (a block
    rebuilt equal matches), else the object."""
    try:
        hash(block)
    except TypeError:
        return id(block)
    return block
