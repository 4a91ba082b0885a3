"""A comparison (``compare``, ``simulate``) as text: the answer line, the table, the details.

The answer comes first: which variant saves most against the recording, what it saves in dollars
and percent, and how sure that is (its band). The table keeps to the columns that answer "what
does it cost, what does it save, how sure" and fits the width; ``wide`` adds the full token
split. Below it, per variant: its strategies (in the syntax ``-s`` and
``--costsim-strategies`` read back), the attribution of a stack, unpriced calls and why, and
its events: divergences and notes first, every event with ``verbose``, otherwise ``and N more
(use -v)``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal

from costsim.analysis.comparison import Comparison, VariantSummary, delta_pct
from costsim.pricing.ledger import Totals, UnpricedCall
from costsim.pricing.reads import ReadPricing
from costsim.render.band_text import band_cell, band_detail, band_text, delta_range, half_text
from costsim.render.economics_text import economics_lines
from costsim.render.events_text import event_line, said_once
from costsim.render.report import (
    ESTIMATED,
    UNMETERED,
    UNREPORTED_THINKING,
    read_pricing_notes,
    thinking_cell,
)
from costsim.render.text import (
    Column,
    decimals_for,
    markdown_table,
    money_cells,
    more_line,
    percent,
    plural,
    signed_percent,
    table,
    wrap,
)

__all__ = [
    "EVENTS_SHOWN",
    "BestSaving",
    "answer_line",
    "band_cell",
    "band_text",
    "best_saving",
    "nothing_to_save",
    "render_markdown",
    "render_table",
]

EVENTS_SHOWN = 3
"""Events listed per variant without ``verbose`` (divergences and notes first)."""
UNPRICED_SHOWN = 3


def _baseline_notes(comparison: Comparison, width: int) -> list[str]:
    """What the figures rest on: calls of the recording whose usage is estimated, or missing;
    cache reads, recorded or simulated, of models without a cached-input price."""
    baseline = comparison.baseline
    notes = [
        (baseline.estimated_calls, f"{ESTIMATED}; costsim cassettes check names them"),
        (baseline.unmetered_calls, UNMETERED),
        (baseline.unreported_thinking_calls, UNREPORTED_THINKING),
    ]
    lines: list[str] = []
    for count, text in notes:
        if count:
            lines += wrap(f"* baseline: {plural(count, 'call')} {text}", width, subsequent="  ")
    reads: dict[ReadPricing, dict[str, int]] = {}
    for totals in (baseline, *(summary.totals for summary in comparison.variants)):
        for how, counts in totals.read_pricing.items():
            reads.setdefault(how, {}).update(counts)
    for note in read_pricing_notes(reads, counted=False):
        lines += wrap(f"* {note}", width, subsequent="  ")
    return lines


def _saving(summary: VariantSummary) -> Decimal | None:
    """What the variant saves against the recording (negative: it costs more)."""
    return None if summary.delta.value is None else -summary.delta.value


@dataclass(frozen=True, slots=True)
class _Money:
    """The cost and change cells of a comparison, each column with one precision."""

    cost: list[str]
    """Baseline first, then one per variant."""
    delta: list[str]
    """One per variant."""
    decimals: int


def _money(comparison: Comparison) -> _Money:
    runs = [comparison.baseline, *(v.totals for v in comparison.variants)]
    deltas = [v.delta.value for v in comparison.variants]
    decimals = decimals_for([*(t.cost_usd for t in runs), *deltas])
    return _Money(
        [_cost_cell(totals, decimals) for totals in runs],
        money_cells(deltas, signed=True, missing="-", decimals=decimals),
        decimals,
    )


def _cost_cell(totals: Totals, decimals: int) -> str:
    """The run's cost; with unpriced calls, the priced part as a lower bound (``≥$0.0107*``,
    the star explained under the table), or ``unknown`` when nothing could be priced."""
    if totals.cost_usd is not None:
        return money_cells([totals.cost_usd], decimals=decimals)[0]
    if not totals.priced_cost:
        return "unknown"
    return f"≥{money_cells([totals.priced_cost], decimals=decimals)[0]}*"


@dataclass(frozen=True, slots=True)
class BestSaving:
    """The variant that saves most against the recording, and what it saves."""

    index: int
    summary: VariantSummary
    saving: Decimal
    """The recorded cost minus the variant's (negative: it costs more)."""
    saving_pct: float


def best_saving(comparison: Comparison, *, oracles: bool = False) -> BestSaving | None:
    """The fully priced variant that saves most (the first listed on a tie), of those a
    client can deploy when one of them saves (``oracles``: of every variant; an oracle knows
    the trace's future, a bound); None when the recording or every variant has unpriced
    calls."""
    priced = [
        (saving, index, summary)
        for index, summary in enumerate(comparison.variants)
        if (saving := _saving(summary)) is not None and summary.baseline.cost_usd
    ]
    if not priced or not comparison.baseline.cost_usd:
        return None
    deployable = [item for item in priced if not item[2].variant.knows_the_future]
    if not oracles and any(item[0] > 0 for item in deployable):
        priced = deployable
    saving, index, summary = max(priced, key=lambda item: (item[0], -item[1]))
    base = summary.baseline.cost_usd or Decimal(1)
    return BestSaving(index, summary, saving, float(saving / base * 100))


def nothing_to_save(comparison: Comparison) -> str | None:
    """The answer when the recording costs $0 (no LLM calls, or none billed): no variant can
    save on it, and no call is unpriced. None when the recording costs something, or is
    unpriced."""
    baseline = comparison.baseline
    if baseline.cost_usd is None or baseline.cost_usd:
        return None
    if not baseline.llm_calls:
        return "Nothing to save: there are no LLM calls to simulate."
    errored = f", {baseline.errored_calls:,} errored" if baseline.errored_calls else ""
    calls = plural(baseline.llm_calls, "LLM call")
    return f"Nothing to save: the recording costs $0 ({calls}{errored})."


def _unpriced_answer(comparison: Comparison, cells: _Money) -> str:
    """No saving is known: every variant has calls without a price. The one with fewest,
    how many of its calls they are, and the cost of the rest (a lower bound)."""
    summary = min(comparison.variants, key=lambda variant: variant.totals.unpriced_calls)
    totals = summary.totals
    if not totals.unpriced_calls:  # priced, but against a baseline that is not
        return "No answer: no variant's saving could be priced (see the unpriced calls below)."
    floor = money_cells([totals.priced_cost], decimals=cells.decimals)[0]
    return (
        f"No answer: {summary.variant.name} leaves {totals.unpriced_calls:,} of "
        f"{totals.llm_calls:,} calls unpriced (see below), so its cost is only known to be at "
        f"least {floor} against {cells.cost[0]} recorded."
    )


def answer_line(comparison: Comparison, cells: _Money | None = None) -> str:
    """One sentence: the variant that saves most, its saving in $ and %, its band, its risks."""
    cells = cells or _money(comparison)
    if comparison.baseline.cost_usd is None:
        return "No answer: the recording itself has unpriced calls (see below)."
    free = nothing_to_save(comparison)
    if free is not None:
        return free
    best = best_saving(comparison)
    if best is None:
        return _unpriced_answer(comparison, cells)
    change = cells.delta[best.index].lstrip("+-")
    summary = best.summary
    risks = f"; {plural(summary.divergences, 'divergence')}" if summary.divergences else ""
    name = summary.variant.name
    if best.saving <= 0:
        verb = (
            "costs the same as the recording"
            if best.saving == 0
            else f"adds {change} (+{-best.saving_pct:.1f}%)"
        )
        if not summary.delta.exact:
            verb += f", p90 Δ {delta_range(summary, cells.decimals)}"
        if len(comparison.variants) == 1:
            return f"{name} saves nothing: it {verb}{risks}."
        return f"No variant saves: the one that adds least is {name}, which {verb}{risks}."
    basis = cells.cost[0]
    lead = f"{name} saves" if len(comparison.variants) == 1 else f"Saves most: {name},"
    if summary.variant.knows_the_future:
        lead += " an oracle (it knows the trace's future: a bound, not a plan),"
    bound = best_saving(comparison, oracles=True)
    beyond = ""
    if bound is not None and bound.summary is not summary and bound.saving > best.saving:
        saved = cells.delta[bound.index].lstrip("+-")
        beyond = f"; the oracle {bound.summary.variant.name}, which knows the future, saves {saved}"
    return (
        f"{lead} {change} ({best.saving_pct:.1f}%) of {basis}, "
        f"p90 band {band_cell(summary, cells.decimals, saving=True)}{risks}{beyond}."
    )


NAME_ROOM = 24
"""When every variant name is at most this long, columns are left out before a name is cut (a
cut name, ``truncate-co…``, no longer says which variant a row is); longer ones are cut."""


def _columns(
    wide: bool, rows: Sequence[Sequence[str]] = (), *, cut_names: bool = False
) -> list[Column]:
    """The comparison's columns; ``cut_names``: names may be cut to 12 characters (when even
    without every droppable column the table does not fit)."""
    longest = max((len(row[0]) for row in rows), default=0)
    name = longest if 12 < longest <= NAME_ROOM and not cut_names else 12
    split = [
        Column("uncached"), Column("cache read"), Column("write 5m"), Column("write 1h"),
        Column("output"), Column("thinking"),
    ] if wide else []  # fmt: skip
    return [
        Column("variant", align="left", cut="right", min_width=name),
        Column("calls", drop=5),
        Column("prompt", drop=4),
        *split,
        Column("hit rate", drop=3),
        Column("cost"),
        Column("Δ cost"),
        Column("Δ %", drop=2),
        Column("p90 band"),
        Column("diverge", drop=1),
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
            thinking_cell(totals),
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
                signed_percent(delta_pct(totals.cost_usd, summary.baseline.cost_usd)),
                band_cell(summary, cells.decimals),
                str(summary.divergences),
            ]
        )
    return rows


_ORDER = {"divergence": 0, "note": 1, "change": 2}


def _unpriced_lines(
    label: str, unpriced: list[UnpricedCall], width: int, indent: str = ""
) -> list[str]:
    """How many calls have no price, and why (grouped by reason)."""
    if not unpriced:
        return []
    reasons = Counter(item.reason for item in unpriced)
    lines = wrap(
        f"{label}: {plural(len(unpriced), 'call')} unpriced: the cost is unknown (* the "
        "priced part, a lower bound)",
        width,
        indent=indent,
    )
    for reason, count in reasons.most_common():
        lines += wrap(f"{reason} ({plural(count, 'call')})", width, indent=indent + "  ")
    return lines


def _saving_text(name: str, value: Decimal | None, cell: str) -> str:
    if value is None:
        return f"{name}: unknown"
    return f"{name} {'adds' if value < 0 else 'saves'} {cell.lstrip('+-')}"


def _attribution(summary: VariantSummary, decimals: int) -> str:
    parts = [(k, v, summary.attribution_bands.get(k)) for k, v in summary.attribution.items()]
    if summary.interaction is not None:
        parts.append(("interaction", summary.interaction, summary.interaction_band))
    cells = money_cells([value for _, value, _ in parts], decimals=decimals)
    texts = []
    for (name, value, band), cell in zip(parts, cells, strict=True):
        spread = None if band is None or band.exact or value is None else band
        if value == 0 and spread is None:  # "saves $0.000000" read as a rounded saving
            text = f"{name} saves nothing"
        else:
            text = _saving_text(name, value, cell)
        if spread is not None:
            text += f" ({half_text(spread, decimals)})"
        elif band is not None and value:
            text += " (exact)"
        texts.append(text)
    return "attribution (leave-one-out): " + "; ".join(texts)


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
    events = sorted(said_once(summary.events), key=lambda event: _ORDER[event.kind])
    shown = events if verbose else [e for e in events if e.kind != "change"][:EVENTS_SHOWN]
    for event in shown:
        lines += event_line(event, width)
    hidden = len(events) - len(shown)
    if shown:
        lines += more_line(hidden)
    elif hidden:  # only changes, and none listed: say where they are
        lines.append(f"  {plural(hidden, 'change')} listed with -v")
    for detail in band_detail(summary, decimals):
        lines += wrap(detail, width, indent="  ", subsequent="    ")
    if verbose:
        lines += economics_lines(summary, width)
    return lines


def render_table(comparison: Comparison, *, width: int, verbose: bool, wide: bool) -> str:
    cells = _money(comparison)
    # the answer right under the scenario's name; what the scenario is about after it
    lines = [f"== {comparison.title} =="] if comparison.title else []
    lines += wrap(answer_line(comparison, cells), width)
    if comparison.description:
        lines += wrap(comparison.description, width, subsequent="")
    lines.append("")
    rows = _rows(comparison, cells, wide)
    fitted = table(_columns(wide, rows), rows, width=width)
    if max(len(line.encode()) for line in fitted) > width:  # names are cut rather than overflow
        fitted = table(_columns(wide, rows, cut_names=True), rows, width=width)
    lines += fitted
    lines.append("")
    lines += _unpriced_lines("baseline", comparison.baseline.unpriced, width)
    lines += _baseline_notes(comparison, width)
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
    details = [line.removeprefix("* ") for line in _baseline_notes(comparison, 10**6)]
    for summary in comparison.variants:
        details += _variant_details(summary, 10**6, verbose, cells.decimals)
    if comparison.as_of:
        details.append(f"Prices as of {comparison.as_of.date().isoformat()}.")
    notes = "\n".join(
        f"- {line.strip()}" if not line.startswith("  ") else f"  - {line.strip()}"
        for line in details
    )
    answer = f"**{answer_line(comparison, cells)}**\n\n"
    return title + answer + description + "\n".join(rows) + "\n\n" + notes + "\n"
