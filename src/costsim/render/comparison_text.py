"""A comparison (``compare``, ``simulate``) as text: the answer line, the table, the details.

The answer comes first: which variant is cheapest, what it saves in dollars and percent, and
how sure that is (its band). The table keeps to the columns that answer "what does it cost,
what does it save, how sure" and fits the width; ``wide`` adds the full token split. Below it,
per variant: its strategies (in the syntax ``-s`` and ``--costsim-strategies`` read back), the
attribution of a stack, unpriced calls and why, and its events: divergences and notes first,
every event with ``verbose``, otherwise ``and N more (use -v)``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from decimal import Decimal

from costsim.analysis.comparison import Comparison, VariantSummary, delta_pct
from costsim.pricing.ledger import Totals, UnpricedCall
from costsim.render.text import (
    Column,
    decimals_for,
    display_path,
    markdown_table,
    money_cells,
    more_line,
    percent,
    plural,
    shorten_left,
    signed_percent,
    table,
    wrap,
)
from costsim.strategies.trace import Event

__all__ = [
    "EVENTS_SHOWN",
    "Cheapest",
    "answer_line",
    "band_cell",
    "cheapest",
    "render_markdown",
    "render_table",
]

EVENTS_SHOWN = 3
"""Events listed per variant without ``verbose`` (divergences and notes first)."""
UNPRICED_SHOWN = 3


def band_cell(summary: VariantSummary) -> str:
    """How far the variant's figures may be off, in the band column and the answer line. The
    one place that decides how a band is written (prompt tokens today; dollars once the
    comparison carries them)."""
    band = summary.band
    if not band.estimated_calls or not band.tokens:
        return "exact"
    return f"±{band.tokens:,} tok"


def _band_detail(summary: VariantSummary) -> str | None:
    """Where the band comes from, under the variant (None when nothing was re-estimated)."""
    band = summary.band
    if not band.estimated_calls or not band.tokens:
        return None
    return (
        f"band {band_cell(summary)}: {plural(band.estimated_calls, 'changed call')} metered by "
        f"calibrated estimate, p90 error {band.p90_ape or 0:.1f}% of the change"
    )


def _saving(base: Totals, totals: Totals) -> Decimal | None:
    if base.cost_usd is None or totals.cost_usd is None:
        return None
    return base.cost_usd - totals.cost_usd


@dataclass(frozen=True, slots=True)
class _Money:
    """The cost and change cells of a comparison, each column with one precision."""

    cost: list[str]
    """Baseline first, then one per variant."""
    delta: list[str]
    """One per variant."""
    decimals: int


def _money(comparison: Comparison) -> _Money:
    base = comparison.baseline
    costs = [base.cost_usd, *(v.totals.cost_usd for v in comparison.variants)]
    deltas = [
        None if saving is None else -saving
        for saving in (_saving(base, v.totals) for v in comparison.variants)
    ]
    decimals = decimals_for([*costs, *deltas])
    return _Money(
        money_cells(costs, decimals=decimals),
        money_cells(deltas, signed=True, missing="-", decimals=decimals),
        decimals,
    )


@dataclass(frozen=True, slots=True)
class Cheapest:
    """The variant that costs least, and what it saves against the recording."""

    index: int
    summary: VariantSummary
    saving: Decimal
    """Recorded cost minus the variant's (negative: the variant costs more)."""
    saving_pct: float


def cheapest(comparison: Comparison) -> Cheapest | None:
    """The cheapest fully priced variant (the first listed on a tie); None when the recording
    or every variant has unpriced calls."""
    base = comparison.baseline
    priced = [
        (saving, index, summary)
        for index, summary in enumerate(comparison.variants)
        if (saving := _saving(base, summary.totals)) is not None
    ]
    if not priced or not base.cost_usd:
        return None
    saving, index, summary = max(priced, key=lambda item: (item[0], -item[1]))
    return Cheapest(index, summary, saving, float(saving / base.cost_usd * 100))


def answer_line(comparison: Comparison, cells: _Money | None = None) -> str:
    """One sentence: the cheapest variant, its saving in $ and %, its band, its risks."""
    cells = cells or _money(comparison)
    if comparison.baseline.cost_usd is None:
        return "No answer: the recording itself has unpriced calls (see below)."
    best = cheapest(comparison)
    if best is None:
        return "No answer: no variant could be priced (see the unpriced calls below)."
    change = cells.delta[best.index].lstrip("+-")
    summary = best.summary
    risks = f"; {plural(summary.divergences, 'divergence')}" if summary.divergences else ""
    name = summary.variant.name
    if best.saving <= 0:
        verb = (
            "costs the same as"
            if best.saving == 0
            else f"adds {change} (+{-best.saving_pct:.1f}%) to"
        )
        return f"No variant saves: the least dear, {name}, {verb} {cells.cost[0]}{risks}."
    return (
        f"Cheapest: {name}, saves {change} ({best.saving_pct:.1f}%) of {cells.cost[0]}, "
        f"band {band_cell(summary)}{risks}."
    )


def _columns(wide: bool) -> list[Column]:
    split = [
        Column("uncached"), Column("cache read"), Column("write 5m"), Column("write 1h"),
        Column("output"), Column("thinking"),
    ] if wide else []  # fmt: skip
    return [
        Column("variant", align="left", cut="right", min_width=12),
        Column("calls"),
        Column("prompt"),
        *split,
        Column("hit rate"),
        Column("cost"),
        Column("Δ cost"),
        Column("Δ %"),
        Column("band"),
        Column("diverge"),
    ]


def _token_cells(totals: Totals, wide: bool) -> list[str]:
    cells = [f"{totals.llm_calls:,}", f"{totals.prompt_tokens:,}"]
    if wide:
        cells += [
            f"{totals.uncached_input_tokens:,}",
            f"{totals.cache_read_tokens:,}",
            f"{totals.cache_write_5m_tokens:,}",
            f"{totals.cache_write_1h_tokens:,}",
            f"{totals.output_tokens:,}",
            f"{totals.reasoning_tokens:,}",
        ]
    return [*cells, percent(totals.cache_hit_rate)]


def _rows(comparison: Comparison, cells: _Money, wide: bool) -> list[list[str]]:
    base = comparison.baseline
    rows = [["baseline (recorded)", *_token_cells(base, wide), cells.cost[0], "", "", "", ""]]
    for index, summary in enumerate(comparison.variants):
        totals = summary.totals
        rows.append(
            [
                summary.variant.name,
                *_token_cells(totals, wide),
                cells.cost[index + 1],
                cells.delta[index],
                signed_percent(delta_pct(totals.cost_usd, base.cost_usd)),
                band_cell(summary),
                str(summary.divergences),
            ]
        )
    return rows


_ORDER = {"divergence": 0, "note": 1, "change": 2}


def _event_line(event: Event, width: int) -> list[str]:
    where = ""
    if event.provenance is not None:
        path = shorten_left(display_path(event.provenance.path), max(width - 40, 20))
        where = f" {path}#{event.provenance.index}"
    return wrap(f"{event.kind} ({event.strategy}){where}: {event.message}", width, indent="  ")


def _unpriced_lines(
    label: str, unpriced: list[UnpricedCall], width: int, indent: str = ""
) -> list[str]:
    """How many calls have no price, and why (grouped by reason)."""
    if not unpriced:
        return []
    reasons = Counter(item.reason for item in unpriced)
    lines = wrap(
        f"{label}: {plural(len(unpriced), 'call')} unpriced, cost unknown", width, indent=indent
    )
    for reason, count in reasons.most_common():
        lines += wrap(f"{reason} ({plural(count, 'call')})", width, indent=indent + "  ")
    return lines


def _saving_text(name: str, value: Decimal | None, cell: str) -> str:
    if value is None:
        return f"{name}: unknown"
    return f"{name} {'adds' if value < 0 else 'saves'} {cell.lstrip('+-')}"


def _attribution(summary: VariantSummary, decimals: int) -> str:
    parts = list(summary.attribution.items())
    if summary.interaction is not None:
        parts.append(("interaction", summary.interaction))
    cells = money_cells([value for _, value in parts], decimals=decimals)
    return "attribution (leave-one-out): " + "; ".join(
        _saving_text(name, value, cell) for (name, value), cell in zip(parts, cells, strict=True)
    )


def _variant_details(
    summary: VariantSummary, width: int, verbose: bool, decimals: int
) -> list[str]:
    kinds = Counter(event.kind for event in summary.events)
    counts = ", ".join(plural(n, kind) for kind, n in sorted(kinds.items()))
    name, label = summary.variant.name, summary.variant.describe()
    lines = wrap(
        (name if name == label else f"{name} = {label}") + (f" ({counts})" if counts else ""),
        width,
        subsequent="    ",
    )
    if summary.attribution:
        lines += wrap(_attribution(summary, decimals), width, indent="  ", subsequent="    ")
    lines += _unpriced_lines("unpriced", summary.totals.unpriced, width, indent="  ")
    events = sorted(summary.events, key=lambda event: _ORDER[event.kind])
    shown = events if verbose else [e for e in events if e.kind != "change"][:EVENTS_SHOWN]
    for event in shown:
        lines += _event_line(event, width)
    lines += more_line(len(events) - len(shown))
    detail = _band_detail(summary)
    if detail is not None:
        lines += wrap(detail, width, indent="  ")
    return lines


def render_table(comparison: Comparison, *, width: int, verbose: bool, wide: bool) -> str:
    cells = _money(comparison)
    head: list[str] = []
    if comparison.title:
        head.append(f"== {comparison.title} ==")
    if comparison.description:
        head += wrap(comparison.description, width, subsequent="")
    lines = [*head, *wrap(answer_line(comparison, cells), width), ""]
    lines += table(_columns(wide), _rows(comparison, cells, wide), width=width)
    lines += ["", *_unpriced_lines("baseline", comparison.baseline.unpriced, width)]
    for summary in comparison.variants:
        lines += _variant_details(summary, width, verbose, cells.decimals)
    if comparison.as_of:
        lines.append(f"Prices as of {comparison.as_of.date().isoformat()}.")
    return "\n".join(lines) + "\n"


def render_markdown(comparison: Comparison, *, verbose: bool) -> str:
    cells = _money(comparison)
    title = f"## {comparison.title or 'costsim comparison'}\n\n"
    description = f"{comparison.description}\n\n" if comparison.description else ""
    rows = markdown_table(_columns(True), _rows(comparison, cells, True))
    details: list[str] = []
    for summary in comparison.variants:
        details += _variant_details(summary, 10**6, verbose, cells.decimals)
    if comparison.as_of:
        details.append(f"Prices as of {comparison.as_of.date().isoformat()}.")
    notes = "\n".join(
        f"- {line.strip()}" if not line.startswith("  ") else f"  - {line.strip()}"
        for line in details
    )
    answer = f"**{answer_line(comparison, cells)}**\n\n"
    return title + description + answer + "\n".join(rows) + "\n\n" + notes + "\n"
