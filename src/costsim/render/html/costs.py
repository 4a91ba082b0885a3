"""The figures the charts draw, taken from the analysis objects: cost by class, groups of calls,
running token totals per turn, and each variant's error band in dollars (``dollar_band``, the
one place the band is read).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from costsim.analysis.bands import Band
from costsim.analysis.comparison import VariantSummary
from costsim.pricing.ledger import MeteredCall, Totals
from costsim.pricing.split import CLASSES, ClassCost, class_cost

__all__ = [
    "BAND_NOTE",
    "COST_CLASSES",
    "TOKEN_CLASSES",
    "Band",
    "Costed",
    "Spend",
    "cost_classes",
    "dollar_band",
    "group",
    "turn_series",
]

COST_CLASSES: tuple[tuple[str, str], ...] = tuple(
    (f"c-{name}", label)
    for name, label in zip(
        CLASSES,
        ("uncached input", "cache read", "cache write", "output", "other (fees, gateway)"),
        strict=True,
    )
)
"""(css class, label) of each class a cost is split into, in stacking order."""
TOKEN_CLASSES = COST_CLASSES[:4]


@dataclass(frozen=True, slots=True)
class Costed:
    """A metered call and its cost split by class (None: the call has no known cost)."""

    call: MeteredCall
    split: ClassCost | None

    @classmethod
    def of(cls, calls: Iterable[MeteredCall]) -> list[Costed]:
        return [cls(item, class_cost(item)) for item in calls]


@dataclass(slots=True)
class Spend:
    """What a set of calls cost by class, and the tokens they used."""

    cost: ClassCost = field(default_factory=ClassCost)
    totals: Totals = field(default_factory=Totals)

    @classmethod
    def of(cls, calls: Iterable[Costed]) -> Spend:
        spend = cls()
        for item in calls:
            spend.add(item)
        return spend

    def add(self, item: Costed) -> None:
        self.totals.add(item.call)
        if item.split is not None:
            self.cost = self.cost + item.split

    @property
    def complete(self) -> bool:
        """Every call has a known cost (else ``cost`` is the priced part only)."""
        return self.totals.cost_usd is not None

    def segments(self) -> tuple[tuple[str, float], ...]:
        return tuple(
            (cls, float(self.cost.get(name)))
            for (cls, _), name in zip(COST_CLASSES, CLASSES, strict=True)
        )

    def token_segments(self) -> tuple[tuple[str, float], ...]:
        totals = self.totals
        values = (
            totals.uncached_input_tokens,
            totals.cache_read_tokens,
            totals.cache_write_tokens,
            totals.output_tokens,
        )
        return tuple((cls, float(v)) for (cls, _), v in zip(TOKEN_CLASSES, values, strict=True))


def cost_classes(spend: Spend) -> list[tuple[str, str]]:
    """The legend entries a chart needs (``other`` only when some cost is in it)."""
    return [entry for entry in COST_CLASSES if entry[0] != "c-other" or spend.cost.other]


def group(calls: Iterable[Costed], key: Callable[[MeteredCall], str]) -> dict[str, Spend]:
    groups: dict[str, Spend] = {}
    for item in calls:
        groups.setdefault(key(item.call), Spend()).add(item)
    return groups


def turn_series(calls: Sequence[MeteredCall], path: Path) -> tuple[tuple[float, ...], ...]:
    """Running totals after each call of the trace at ``path``: uncached input, cache read,
    cache write, output tokens (a call with no usage adds nothing)."""
    running = [0.0, 0.0, 0.0, 0.0]
    rows: list[tuple[float, ...]] = []
    for item in calls:
        if item.call.provenance.path != path:
            continue
        usage = item.usage
        if usage is not None:
            for index, value in enumerate(
                (usage.uncached_input, usage.cache_read, usage.cache_write, usage.output)
            ):
                running[index] += value
        rows.append(tuple(running))
    return tuple(zip(*rows, strict=True)) if rows else ((), (), (), ())


def dollar_band(summary: VariantSummary) -> Band:
    """The variant's cost and its p90 band in dollars (``low``, ``high``; ``exact`` when
    nothing behind it was estimated). Every chart and table reads the band from here."""
    return summary.cost


BAND_NOTE = (
    "The whisker is the variant's p90 error band in dollars: every estimated quantity (a "
    "changed prompt, a simulated cache boundary, an estimated output) priced at its call's "
    "own prices."
)
