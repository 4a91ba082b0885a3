"""Figures every page uses: a chart and the table of its numbers, built from typed rows.

- ``cost_figure``: cost per row (variant, model, ...) stacked by class, with error bands;
- ``ranked_figure``: the costliest rows (cassettes, tests, agents) and all of them in a table;
- ``turns_figure``: running token totals per turn of one trace, one panel per variant;
- ``waterfall_figure``: a stacked variant's leave-one-out attribution per strategy;
- ``findings_table``: divergences and notes, each with the call it concerns.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal

from costsim.analysis.bands import Band
from costsim.pricing.money import money
from costsim.render.band_text import half_text
from costsim.render.html.area import Panel, area_panels
from costsim.render.html.bars import Bar, Step, stacked_bars, waterfall
from costsim.render.html.costs import TOKEN_CLASSES, Spend, cost_classes
from costsim.render.html.markup import Node, el
from costsim.render.html.page import Figure
from costsim.render.html.svg import short_money, short_tokens
from costsim.render.html.tables import Cell, Table, cell, num
from costsim.render.rows import ranked as rows_ranked
from costsim.render.text import decimals_for, percent

__all__ = [
    "Finding",
    "Row",
    "cost_figure",
    "findings_table",
    "money_cell",
    "ranked_figure",
    "signed_money",
    "spend_label",
    "tokens_cell",
    "turns_figure",
    "waterfall_figure",
]

TOP = 15
"""Rows a ranked chart draws (its table lists them all)."""


@dataclass(frozen=True, slots=True)
class Row:
    """One bar of a cost chart: its label, what it cost, and its error band if any."""

    label: str
    spend: Spend
    band: Band | None = None
    extra: tuple[Cell, ...] = ()
    """Further cells of its table row (the columns named by ``extra_headers``)."""


@dataclass(frozen=True, slots=True)
class Finding:
    """A divergence flag or a note, and the call it concerns."""

    where: str
    kind: str
    source: str
    path: str
    interaction: int | None
    message: str


def money_cell(amount: Decimal | None) -> Cell:
    return num(money(amount), None if amount is None else float(amount))


def tokens_cell(count: int) -> Cell:
    return num(f"{count:,}", count)


def spend_label(spend: Spend) -> str:
    """The cost a bar ends at: exact, or the priced part of a partly unpriced total."""
    totals = spend.totals
    unknown = totals.unpriced_calls + totals.unmetered_calls
    missing = [f"{unknown} unpriced"] if unknown else []
    if totals.left_out_calls:  # LLM-looking interactions in no sum
        missing.append(f"{totals.left_out_calls} not metered")
    text = money(spend.cost.total)
    return text if not missing else f"≥{text} ({', '.join(missing)})"


def _band_text(band: Band | None) -> str:
    """`` ±$0.0012`` after a cost something estimated lies behind; else nothing."""
    if band is None or band.exact or band.value is None:
        return ""
    return " " + half_text(band, decimals_for([band.value]))


def _band_cells(band: Band | None) -> tuple[Cell, Cell]:
    if band is None or band.value is None or band.low is None or band.high is None:
        return cell("-"), cell("")
    if band.exact:
        return money_cell(band.value), cell("exact")
    span = f"{money(max(band.low, Decimal(0)))} to {money(band.high)}"
    spread = band.reach
    reach = (
        f"±{money(spread.below)}"
        if spread.even_sided
        else f"-{money(spread.below)}/+{money(spread.above)}"
    )
    return num(span, float(band.high)), num(reach, float(band.half))


def _whisker(band: Band | None) -> tuple[float, float] | None:
    """A cost's p90 range to draw (a cost is never below zero, whatever its band's width)."""
    if band is None or band.exact or band.low is None or band.high is None:
        return None
    return max(float(band.low), 0.0), float(band.high)


def cost_figure(
    ident: str,
    title: str,
    rows: Sequence[Row],
    *,
    extra_headers: Sequence[str] = (),
    notes: Sequence[str] = (),
    bands: bool = False,
) -> Figure:
    """One bar per row, stacked by cost class; with ``bands`` each row's error band."""
    whole = Spend()
    for row in rows:
        whole.cost = whole.cost + row.spend.cost
    bars = [
        Bar(
            row.label,
            row.spend.segments(),
            spend_label(row.spend),
            _whisker(row.band),
        )
        for row in rows
    ]
    chart = stacked_bars(title, bars, cost_classes(whole), short_money)
    headers = ["", "calls", "uncached", "cache read", "cache write", "output", "other", "cost"]
    if bands:
        headers += ["p90 range", "p90 ±"]
    table_rows = []
    for row in rows:
        parts = row.spend.cost
        cells = [
            cell(row.label),
            tokens_cell(row.spend.totals.llm_calls),
            *(
                money_cell(v)
                for v in (parts.uncached, parts.cache_read, parts.cache_write, parts.output)
            ),
            money_cell(parts.other),
            num(spend_label(row.spend), float(parts.total)),
        ]
        if bands:
            cells += _band_cells(row.band)
        table_rows.append((*cells, *row.extra))
    table = Table(title, (*headers, *extra_headers), table_rows)
    return Figure(ident, title, chart, table, notes)


def ranked_figure(
    ident: str,
    title: str,
    rows: Sequence[Row],
    *,
    extra_headers: Sequence[str] = (),
    what: str = "cost",
) -> Figure:
    """The ``TOP`` costliest rows as bars stacked by class; all rows in the table (tokens by
    class, hit rate, cost), costliest first."""
    ranked = [
        row
        for _, row in rows_ranked(
            ((r.label, r) for r in rows),
            lambda r: (r.spend.cost.total, r.spend.totals.prompt_tokens),
        )
    ]
    shown = ranked[:TOP]
    whole = Spend()
    for row in rows:
        whole.cost = whole.cost + row.spend.cost
    bars = [Bar(row.label, row.spend.segments(), spend_label(row.spend)) for row in shown]
    chart = stacked_bars(title, bars, cost_classes(whole), short_money)
    headers = (
        "",
        "calls",
        "prompt",
        "uncached",
        "cache read",
        "cache write",
        "output",
        "hit rate",
        what,
        *extra_headers,
    )
    table_rows = [
        (
            cell(row.label),
            tokens_cell(row.spend.totals.llm_calls),
            tokens_cell(row.spend.totals.prompt_tokens),
            tokens_cell(row.spend.totals.uncached_input_tokens),
            tokens_cell(row.spend.totals.cache_read_tokens),
            tokens_cell(row.spend.totals.cache_write_tokens),
            tokens_cell(row.spend.totals.output_tokens),
            num(percent(row.spend.totals.cache_hit_rate), row.spend.totals.cache_hit_rate),
            num(spend_label(row.spend) + _band_text(row.band), float(row.spend.cost.total)),
            *row.extra,
        )
        for row in ranked
    ]
    notes = [f"The {TOP} costliest of {len(rows)} are drawn; the table lists all."] * (
        len(rows) > TOP
    )
    return Figure(ident, title, chart, Table(title, headers, table_rows), notes)


def turns_figure(
    ident: str, title: str, columns: Sequence[tuple[str, tuple[tuple[float, ...], ...]]]
) -> Figure:
    """Running tokens per turn by class; ``columns``: (label, per-class running totals), the
    recorded baseline first (its running total is drawn on every other panel)."""
    reference: tuple[float, ...] = ()
    panels = []
    for position, (label, series) in enumerate(columns):
        layers = tuple(
            (cls, values) for (cls, _), values in zip(TOKEN_CLASSES, series, strict=True)
        )
        totals = tuple(sum(values) for values in zip(*series, strict=True))
        panels.append(Panel(label, layers, reference if position else ()))
        if not position:
            reference = totals
    chart = area_panels(title, panels, TOKEN_CLASSES, short_tokens)
    headers = ["turn"]
    for label, _ in columns:
        headers += [f"{label}: {name}" for _, name in TOKEN_CLASSES]
    turns = max((len(series[0]) for _, series in columns), default=0)
    rows = []
    for turn in range(turns):
        cells: list[Cell] = [num(str(turn + 1), turn + 1)]
        for _, series in columns:
            cells += [
                tokens_cell(int(values[turn])) if turn < len(values) else num("", None)
                for values in series
            ]
        rows.append(tuple(cells))
    return Figure(ident, title, chart, Table(title, tuple(headers), rows))


def _saving_range(band: Band | None) -> Cell:
    if band is None or band.low is None or band.high is None:
        return cell("")
    if band.exact:
        return cell("exact")
    return num(f"{signed_money(band.low)} to {signed_money(band.high)}", float(band.half))


def signed_money(amount: Decimal) -> str:
    return f"-{money(-amount)}" if amount < 0 else money(amount)


def waterfall_figure(
    ident: str,
    title: str,
    baseline: Decimal,
    marginals: Sequence[tuple[str, Decimal, Band | None]],
    interaction: tuple[Decimal, Band | None],
    variant: Decimal,
) -> Figure:
    """From the recorded cost, each strategy's leave-one-out saving (with its
    p90 range), then what they save (or add) together beyond their marginals, down to the
    variant's cost."""
    steps = [Step("recorded", float(baseline), "total", money(baseline))]
    rows: list[tuple[Cell, ...]] = [
        (cell("recorded"), money_cell(baseline), money_cell(baseline), cell(""))
    ]
    running = baseline
    for label, saving, band in [*marginals, ("interaction", *interaction)]:
        running -= saving
        word = "saves" if saving >= 0 else "adds"
        steps.append(Step(label, float(-saving), "change", f"{word} {money(abs(saving))}"))
        rows.append((cell(label), money_cell(-saving), money_cell(running), _saving_range(band)))
    steps.append(Step("variant", float(variant), "total", money(variant)))
    rows.append((cell("variant"), money_cell(variant), money_cell(variant), cell("")))
    chart = waterfall(title, steps, short_money)
    table = Table(title, ("step", "change", "running cost", "saving, p90 range"), rows)
    notes = [
        "Each strategy's bar is its leave-one-out saving: the variant's saving minus its saving "
        "without that step, both against the recording. What the marginals leave "
        "over is the interaction (they overlap when it adds, reinforce each other when it saves)."
    ]
    return Figure(ident, title, chart, table, notes)


def findings_table(
    ident: str, title: str, findings: Sequence[Finding], empty: str = "None."
) -> Node:
    """Divergence flags and notes, each with its file and interaction (no chart: a list)."""
    rows = [
        (
            cell(item.where),
            cell(item.kind),
            cell(item.source),
            cell(item.path),
            num("" if item.interaction is None else str(item.interaction), item.interaction),
            cell(item.message, wrap=True),
        )
        for item in findings
    ]
    headers = ("", "kind", "by", "file", "interaction", "message")
    table = Table(title, headers, rows)
    body: Node = (
        el("div", table.node(), class_="scroll") if findings else el("p", empty, class_="note")
    )
    return el("section", el("h3", title), body, id=ident)
