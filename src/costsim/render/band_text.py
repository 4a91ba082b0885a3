"""How sure a simulated change is, as text: the band cell, its half-width, its p90 range, and
the recording the change is measured against."""

from __future__ import annotations

from decimal import Decimal

from costsim.analysis.bands import Band, Spread
from costsim.analysis.comparison import VariantSummary
from costsim.render.text import decimals_for, finer, money_cells, plural

__all__ = [
    "band_cell",
    "band_detail",
    "band_text",
    "delta_range",
    "half_text",
    "signed",
    "spread_text",
]


def band_cell(summary: VariantSummary, decimals: int | None = None, *, saving: bool = False) -> str:
    """How far the variant's change in cost may be off (p90, in dollars), in the band column
    and, as a saving (``saving``: below and above swap), in the answer line; ``exact`` when
    nothing behind it was estimated."""
    band = summary.delta
    if band.value is None:
        return "-"  # no change is known, so no range around it
    if band.exact:
        return "exact"
    reach = band.reach
    if not saving or reach.even_sided or band.low is None or band.high is None:
        return spread_text(reach, decimals)
    low, high = money_cells([-band.high, -band.low], decimals=decimals)  # the saving's range
    return f"{low} to {high}"


def delta_range(summary: VariantSummary, decimals: int | None = None) -> str:
    """The p90 range of the variant's change in cost, signed (``-$9.39 to +$3.74``): what an
    answer says of a variant that costs more, which may yet save. A range whose two ends
    read alike at the precision shown is said as the band column says it (``±<$0.0001``),
    not ``+$0.0036 to +$0.0036``."""
    band = summary.delta
    if band.exact:
        return "exact"
    if band.low is None or band.high is None:
        return spread_text(band.reach, decimals)
    places = decimals if decimals is not None else decimals_for([band.low, band.high])
    if round(band.low, places) == round(band.high, places):
        return spread_text(band.reach, places)
    low, high = money_cells([band.low, band.high], signed=True, decimals=places)
    return f"{low} to {high}"


def half_text(band: Band, decimals: int | None = None) -> str:
    """The band's range around its amount (floor applied) as :func:`spread_text` writes it."""
    return spread_text(band.reach, decimals)


def spread_text(spread: Spread, decimals: int | None = None) -> str:
    """``±$0.0123`` for an even range; ``-$0.0123/+$0.0040`` for one reaching further below
    than above; ``<$0.0001`` for a side below the precision (it is not zero)."""
    places = decimals if decimals is not None else decimals_for([spread.below, spread.above])
    if spread.even_sided:
        if spread.below < Decimal(1).scaleb(-places):
            return f"±<${Decimal(1).scaleb(-places):.{places}f}"
        return "±" + money_cells([spread.below], decimals=places)[0]
    return f"-{_side(spread.below, places)}/+{_side(spread.above, places)}"


def _side(amount: Decimal, places: int) -> str:
    smallest = Decimal(1).scaleb(-places)
    if amount and amount < smallest:
        return f"<${smallest:.{places}f}"
    return money_cells([amount], decimals=places)[0]


def signed(value: Decimal, decimals: int) -> str:
    return money_cells([value], signed=True, decimals=decimals)[0]


def band_text(band: Band, decimals: int | None = None) -> str:
    """``-$0.0123 (-$0.0150 to -$0.0096, p90)``, or ``+$0.0000 (exact)``."""
    if band.value is None or band.low is None or band.high is None:
        return "unknown"
    change = money_cells([band.value], signed=True, decimals=decimals)[0]
    if band.exact:
        return f"{change} (exact)"
    low, high = money_cells([band.low, band.high], signed=True, decimals=decimals)
    return f"{change} ({low} to {high}, p90)"


def band_detail(summary: VariantSummary, decimals: int) -> list[str]:
    """The change with its p90 range, against the recording; and, when the simulator's
    replay of the calls it changes is not what they were billed, that gap, which neither the
    cost nor the change includes (:mod:`costsim.engine.anchoring`)."""
    band = summary.delta
    if band.value is None or band.low is None or band.high is None:
        return []
    places = finer(decimals, [band.value])  # a change of a fraction of the table's unit shows
    change = signed(band.value, places)
    if band.exact:
        spread = "exact"
    elif round(band.low, places) == round(band.high, places):  # not "-$0.100 to -$0.100"
        spread = f"{spread_text(band.reach, places)}, p90"
    else:
        spread = f"{signed(band.low, places)} to {signed(band.high, places)}, p90"
    lines = [f"Δ cost {change} ({spread}) against the recording"]
    simulated, recorded = summary.resimulation_gap
    if summary.resimulated_calls and simulated != recorded:
        calls = f"the variant bills {plural(summary.resimulated_calls, 'recorded call')}"
        kept = "differently (those it keeps, as recorded plus the simulated change)"
        if simulated is None or recorded is None:
            lines.append(
                f"{calls} {kept}; the recording's own bill is unknown for some (they "
                "recorded no usable usage, or no price)"
            )
            return lines
        cells = money_cells([simulated, recorded], decimals=decimals)
        lines.append(
            f"{calls} {kept}: replayed as recorded, they cost {cells[0]} where the recording "
            f"billed {cells[1]}; the variant's numbers move from the bill, not from that replay"
        )
    return lines
