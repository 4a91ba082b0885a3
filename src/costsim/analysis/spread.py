"""A dollar amount's p90 range: how far below and above its estimate the true amount may lie.

Each estimated quantity behind an amount is a term (:mod:`costsim.analysis.bands`); terms add
up side by side. A term both of two amounts share moves both the same way, so the range of
their difference counts, per term, how differently they move.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import ROUND_UP, Decimal

__all__ = [
    "NONE",
    "ZERO",
    "Band",
    "Key",
    "RunTerms",
    "Spread",
    "Terms",
    "combined_band",
    "difference",
    "difference_terms",
    "interaction_band",
    "marginal_band",
]

ZERO = Decimal(0)
_CENT_FRACTION = Decimal("0.00000001")


def _up(amount: Decimal) -> Decimal:
    """A half-width rounded up to 1e-8 USD (never narrower than computed)."""
    return amount.quantize(_CENT_FRACTION, rounding=ROUND_UP)


@dataclass(frozen=True, slots=True)
class Spread:
    """How far (p90, USD) a true amount may lie below its estimate, and how far above."""

    below: Decimal = ZERO
    above: Decimal = ZERO

    @classmethod
    def even(cls, half: Decimal) -> Spread:
        return cls(half, half)

    def __add__(self, other: Spread) -> Spread:
        return Spread(self.below + other.below, self.above + other.above)

    def __bool__(self) -> bool:
        return self.below > 0 or self.above > 0

    @property
    def even_sided(self) -> bool:
        return self.below == self.above

    def flipped(self) -> Spread:
        """The spread of the amount's negation (a saving's, from its change of cost's)."""
        return Spread(self.above, self.below)

    def rounded(self) -> Spread:
        return Spread(_up(self.below), _up(self.above))

    @staticmethod
    def total(spreads: Iterable[Spread]) -> Spread:
        return sum(spreads, start=Spread()).rounded()

    @staticmethod
    def moved(up: Decimal, down: Decimal) -> Spread:
        """The spread of a difference whose error is ``up`` when its term's true amount lies
        above the estimate and ``down`` when below (either sign): the range they span with 0."""
        return Spread(max(ZERO, -up, -down), max(ZERO, up, down))


Key = tuple[object, ...]
Terms = dict[Key, Spread]
NONE = Spread()


@dataclass(frozen=True, slots=True)
class Band:
    """A dollar amount and how far below and above it the p90 range reaches; ``estimated`` is
    False only when nothing behind the amount was estimated (the band is then exact)."""

    value: Decimal | None
    spread: Spread = Spread()
    estimated: bool = False
    floor: Decimal | None = None
    """The least the amount can be (a cost: $0; a change of cost: minus what the calls it
    changes cost): ``low`` never goes below it, however wide the band."""

    @property
    def reach(self) -> Spread:
        """How far below and above the amount its range reaches, floor applied."""
        if self.value is None or self.low is None or self.high is None:
            return self.spread
        return Spread(self.value - self.low, self.high - self.value)

    @property
    def half(self) -> Decimal:
        """The wider side of the range (the ``±`` of an even one)."""
        return max(self.spread.below, self.spread.above)

    @property
    def low(self) -> Decimal | None:
        if self.value is None or not self.spread.below:  # the amount as written, not 0E-8 off
            return self.value
        low = self.value - self.spread.below
        return low if self.floor is None else max(low, min(self.floor, self.value))

    @property
    def high(self) -> Decimal | None:
        if self.value is None or not self.spread.above:
            return self.value
        return self.value + self.spread.above

    @property
    def exact(self) -> bool:
        return not self.estimated


def difference(variant: Terms, baseline: Terms) -> Spread:
    """The spread of the variant's cost minus its baseline's: a term both share moves both
    the same way (its true amount is above the estimate in both, or below in both)."""
    if variant is baseline:  # the same terms (a trace a run left as recorded): no difference
        return NONE.rounded()
    return Spread.total(
        Spread.moved(
            variant.get(k, NONE).above - baseline.get(k, NONE).above,
            baseline.get(k, NONE).below - variant.get(k, NONE).below,
        )
        for k in set(variant) | set(baseline)
    )


def difference_terms(variant: Terms, baseline: Terms) -> Terms:
    """The terms of the variant's cost minus its baseline's, each as the lopsided pair it
    moves the difference by when its true amount is above the estimate (``above``) and when
    below (``below``, negated: its own sign) — terms of a difference, to take another
    :func:`difference` of."""
    return {
        k: Spread(
            variant.get(k, NONE).below - baseline.get(k, NONE).below,
            variant.get(k, NONE).above - baseline.get(k, NONE).above,
        )
        for k in set(variant) | set(baseline)
    }


RunTerms = list[tuple[Terms, Terms]]
"""Per trace of a run: the band terms of the variant's calls, and of the recording's
replay (the calls the variant changes, simulated as recorded)."""


def combined_band(value: Decimal | None, weighted: Sequence[tuple[int, RunTerms]]) -> Band:
    """The band of ``value``, a sum of run deltas each times a whole weight (a delta is a
    run's cost minus its recording's replay): per trace and term, the combination moves by
    the weighted sum of how each delta moves with it, so what the runs share cancels."""
    spread = NONE
    for traces in zip(*(terms for _, terms in weighted), strict=True):
        keys: set[Key] = set()
        deltas = []
        for (weight, _), (variant, baseline) in zip(weighted, traces, strict=True):
            keys.update(variant, baseline)
            deltas.append((weight, difference_terms(variant, baseline)))
        spread += Spread.total(
            Spread.moved(
                sum((w * d.get(k, NONE).above for w, d in deltas), start=ZERO),
                -sum((w * d.get(k, NONE).below for w, d in deltas), start=ZERO),
            )
            for k in keys
        )
    return Band(value, spread, bool(spread))


def marginal_band(value: Decimal | None, full: RunTerms, rest: RunTerms) -> Band:
    """The band of a step's marginal saving, ``value``: the delta of the variant without the
    step (rest) minus the delta with it (full). As a delta's band counts what differs from
    its baseline, this counts, per term, how differently the two deltas move with it; so a
    step that changes nothing is exactly 0, and a step that makes the whole change carries
    the whole delta's band."""
    return combined_band(value, [(1, rest), (-1, full)])


def interaction_band(value: Decimal | None, full: RunTerms, rests: Sequence[RunTerms]) -> Band:
    """The band of what a stacked variant's leave-one-out marginals leave of its saving:
    the saving (minus the full delta) less each marginal (a rest's delta minus the full
    delta), that is ``(n - 1)`` times the full delta minus every rest's delta."""
    return combined_band(value, [(len(rests) - 1, full), *((-1, rest) for rest in rests)])
