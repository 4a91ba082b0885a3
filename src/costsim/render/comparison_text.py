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
from decimal import Decimal

from costsim.analysis.comparison import Comparison, VariantSummary, delta_pct
from costsim.pricing.ledger import Totals, UnpricedCall
from costsim.pricing.reads import ReadPricing
from costsim.render.band_text import band_cell, band_detail, band_text, half_text
from costsim.render.comparison_answer import (
    BestSaving,
    Money,
    answer_line,
    best_saving,
    money_of,
    nothing_to_save,
)
from costsim.render.economics_text import economics_lines
from costsim.render.events_text import event_line, said_once
from costsim.render.report import (
    ESTIMATED,
    UNMETERED,
    UNREPORTED_THINKING,
    read_pricing_notes,
    snapshot_notes,
    thinking_cell,
)
from costsim.render.text import (
    Column,
    finer,
    markdown_table,
    money_cells,
    more_line,
    percent,
    plural,
    signed_percent,
    table,
    wrap,
)
from costsim.strategies.trace import Event

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
    "snapshot_lines",
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
    if baseline.left_out_calls:
        missed = plural(baseline.left_out_calls, "LLM-looking interaction")
        text = f"* {missed} costsim cannot meter: in no sum, so costs are a lower bound"
        lines += wrap(text + " (costsim report lists them).", width, subsequent="  ")
    reads: dict[ReadPricing, dict[str, int]] = {}
    for totals in (baseline, *(summary.totals for summary in comparison.variants)):
        for how, counts in totals.read_pricing.items():
            reads.setdefault(how, {}).update(counts)
    for note in read_pricing_notes(reads, counted=False):
        lines += wrap(f"* {note}", width, subsequent="  ")
    return lines


def snapshot_lines(comparison: Comparison) -> list[str]:
    """Models priced at the as-of date though their snapshot is later: the recording's, and
    those a variant routes to, each once."""
    runs = (comparison.baseline, *(summary.totals for summary in comparison.variants))
    return snapshot_notes(*(totals.early_snapshots for totals in runs))


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


def _rows(comparison: Comparison, cells: Money, wide: bool) -> list[list[str]]:
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
    decimals = finer(decimals, [value for _, value, _ in parts])
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
    if summary.totals.unpriced_alike(summary.baseline):
        count = summary.totals.unpriced_calls
        lines += wrap(
            f"unpriced: the recording's {plural(count, 'call')} without a price, billed alike "
            f"({'its' if count == 1 else 'their'} cost cancels in Δ)",
            width,
            indent="  ",
            subsequent="    ",
        )
    else:
        lines += _unpriced_lines("unpriced", summary.totals.unpriced, width, indent="  ")
    # -v lists every event where it happened; else a note said of many cassettes once
    events = sorted(
        summary.events if verbose else said_once(summary.events), key=lambda e: _ORDER[e.kind]
    )
    shown = events if verbose else _sample(events)
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


def _sample(events: list[Event]) -> list[Event]:
    """The events listed without -v: the first of each kind but changes (ten divergences
    must not hide the one note), then the next ones, :data:`EVENTS_SHOWN` in all (more when
    there are more kinds), in their order."""
    listed = [event for event in events if event.kind != "change"]
    firsts: dict[str, int] = {}
    for index, event in enumerate(listed):
        firsts.setdefault(event.kind, index)
    picked = set(firsts.values())
    for index in range(len(listed)):
        if len(picked) >= EVENTS_SHOWN:
            break
        picked.add(index)
    return [listed[index] for index in sorted(picked)]


FIRST_RUN = (
    "Warm starts: the first run after each change ships (--warm first): a cache the recording "
    "found warm is read only as far as a changed prompt is unchanged."
)


def warm_line(comparison: Comparison) -> str:
    """What the comparison assumes of warm starts, when not the default steady state."""
    return FIRST_RUN if comparison.warm_starts == "first" else ""


def render_table(comparison: Comparison, *, width: int, verbose: bool, wide: bool) -> str:
    cells = money_of(comparison)
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
        for note in snapshot_lines(comparison):
            lines += wrap(note, width, subsequent="  ")
    if said := warm_line(comparison):
        lines += wrap(said, width, subsequent="  ")
    return "\n".join(lines) + "\n"


def render_markdown(comparison: Comparison, *, verbose: bool) -> str:
    cells = money_of(comparison)
    title = f"## {comparison.title or 'costsim comparison'}\n\n"
    description = f"{comparison.description}\n\n" if comparison.description else ""
    rows = markdown_table(_columns(True), _rows(comparison, cells, True))
    details = [line.removeprefix("* ") for line in _baseline_notes(comparison, 10**6)]
    for summary in comparison.variants:
        details += _variant_details(summary, 10**6, verbose, cells.decimals)
    if comparison.as_of:
        details.append(f"Prices as of {comparison.as_of.date().isoformat()}.")
        details += snapshot_lines(comparison)
    if said := warm_line(comparison):
        details.append(said)
    notes = "\n".join(
        f"- {line.strip()}" if not line.startswith("  ") else f"  - {line.strip()}"
        for line in details
    )
    answer = f"**{answer_line(comparison, cells)}**\n\n"
    return title + answer + description + "\n".join(rows) + "\n\n" + notes + "\n"
