"""The figures the charts draw, taken from the analysis objects: cost by class, groups of calls,
running token totals per turn, and each variant's error band in dollars (``dollar_band``, the
one place the band is read).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from costsim.analysis.bands import Band
from costsim.analysis.comparison import VariantSummary
from costsim.analysis.turns import turn_series
from costsim.pricing.ledger import MeteredCall, Totals
from costsim.pricing.split import CLASSES, ClassCost

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
    "grouped",
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
        return [cls(item, item.split) for item in calls]


@dataclass(slots=True)
class Spend:
    """What a set of calls cost by class, and the tokens they used."""

    cost: ClassCost = field(default_factory=ClassCost)
    totals: Totals = field(default_factory=Totals)

    @classmethod
    def of_totals(cls, totals: Totals) -> Spend:
        """The spend summed in ``totals`` (which carry their cost split by class)."""
        return cls(totals.split, totals)

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


def grouped(table: dict[str, Totals], name_of: Callable[[str], str] = str) -> dict[str, Spend]:
    """A breakdown table (group -> Totals) as spends, named by ``name_of`` (names that meet
    are summed)."""
    groups: dict[str, Spend] = {}
    for key, totals in table.items():
        name = name_of(key)
        found = groups.get(name)
        if found is None:
            groups[name] = Spend.of_totals(totals)
        else:
            merged = Totals()
            merged.merge(found.totals)
            merged.merge(totals)
            groups[name] = Spend.of_totals(merged)
    return groups


def dollar_band(summary: VariantSummary) -> Band:
    """The variant's cost and its p90 band in dollars (``low``, ``high``; ``exact`` when
    nothing behind it was estimated). Every chart and table reads the band from here."""
    return summary.cost


BAND_NOTE = (
    "The whisker is the variant's p90 error band in dollars: every estimated quantity (a "
    "changed prompt, a simulated cache boundary, an estimated output) priced at its call's "
    "own prices."
)
