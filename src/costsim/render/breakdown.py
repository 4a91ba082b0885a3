"""Breakdowns as tables and JSON: cost per cassette, model, provider, flavour or agent;
tokens per tool. One column per variant (the baseline first); a table wider than the terminal
is printed in blocks of columns."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

from costsim.analysis.bands import Band
from costsim.analysis.breakdown import Breakdown, ToolUse
from costsim.analysis.spread import Spread
from costsim.pricing.ledger import Totals
from costsim.pricing.money import amount_text
from costsim.render.band_text import half_text
from costsim.render.comparison import band_json
from costsim.render.report import FORMAT_VERSION
from costsim.render.rows import cost_cells, merged, others_label, others_note, ranked, split_rows
from costsim.render.text import (
    Column,
    decimals_for,
    display_path,
    markdown_table,
    table_blocks,
    wrap,
)

__all__ = ["breakdown_document", "breakdown_json", "breakdown_markdown", "breakdown_table"]

_TOOL_NOTE = "Token counts are offline tokenizer counts of the requests (not calibrated)."


def _key(table: Breakdown, key: str) -> str:
    return display_path(Path(key)) if table.by == "cassette" else key


def _unit(table: Breakdown) -> str:
    if table.by == "tool":
        return "sent / definition tokens / result tokens"
    banded = table.spreads is not None and any(
        spread is not None for row in table.spreads.values() for spread in row
    )
    return "cost, ± its p90 band," if banded else "cost"


Values = tuple[Totals | ToolUse | None, ...]
Spreads = tuple[Spread | None, ...] | None
"""Per column, the p90 spread of a row's cost (None: exact); None: not known."""
Row = tuple[str, Values, Spreads]


def _weight(row: tuple[Values, Spreads]) -> Decimal:
    """What ranks a row: its largest cost in any column (the priced part), so that a row a
    variant makes costly is listed too; or a tool's largest token count."""
    weights = [Decimal(0)]
    for value in row[0]:
        if isinstance(value, Totals):
            weights.append(value.priced_cost)
        elif isinstance(value, ToolUse):
            weights.append(Decimal(value.definition_tokens + value.result_tokens))
    return max(weights)


def _unknown(row: Row) -> bool:
    """A row with a cost not fully known in some column: never folded away."""
    return any(isinstance(value, Totals) and value.cost_usd is None for value in row[1])


def _summed(values: list[Totals | ToolUse | None]) -> Totals | ToolUse | None:
    """One column's cells of the rows left out, added up (None when none has a value)."""
    tools = [v for v in values if isinstance(v, ToolUse)]
    if tools:
        return sum(tools[1:], tools[0])
    costs = [v for v in values if isinstance(v, Totals)]
    return merged(costs, Totals()) if costs else None


def _listed(table: Breakdown, every: bool) -> tuple[list[Row], int]:
    """The rows, biggest first: every one, or the biggest (and those of unknown cost) and one
    row that sums the others; and how many that row sums."""
    spreads = table.spreads
    named = (
        (_key(table, key), (values, spreads[key] if spreads is not None else None))
        for key, values in table.rows.items()
    )
    rows = [(label, values, spread) for label, (values, spread) in ranked(named, _weight)]
    shown, others = split_rows(rows, every=every, keep=_unknown)
    if not others:
        return shown, 0
    columns = range(len(table.columns))
    summed = tuple(_summed([values[i] for _, values, _ in others]) for i in columns)
    summed_spreads = (
        tuple(_summed_spread([row[2][i] for row in others if row[2] is not None]) for i in columns)
        if spreads is not None
        else None
    )
    return [*shown, (others_label(len(others)), summed, summed_spreads)], len(others)


def _tool_cell(value: Totals | ToolUse | None, summed: bool) -> str:
    """``sent / definition tokens / result tokens``; summed over tools, requests sending any
    of them are not known (one request sends many): ``-``."""
    if not isinstance(value, ToolUse):
        return "-"
    sent = "-" if summed else str(value.sent)
    return f"{sent} / {value.definition_tokens:,} / {value.result_tokens:,}"


def _rows(listed: list[Row], table: Breakdown, *, calls: bool, summed: int) -> list[list[str]]:
    """The cells of ``listed`` (the last one sums others when ``summed``), column by column."""
    decimals = decimals_for(  # a lower bound's cell shows its priced part
        v.priced_cost if v.cost_usd is None else v.cost_usd
        for values in table.rows.values()
        for v in values
        if isinstance(v, Totals)
    )
    columns: list[list[str]] = []
    for index in range(len(table.columns)):
        values = [row[index] for _, row, _ in listed]
        if table.by == "tool":
            last = len(values) - 1
            columns.append(
                [_tool_cell(v, bool(summed) and i == last) for i, v in enumerate(values)]
            )
            continue
        totals = [v if isinstance(v, Totals) else None for v in values]
        costs = cost_cells(totals, decimals=decimals)
        spreads = [None if row[2] is None else row[2][index] for row in listed]
        costs = [
            cost + _band(t, spread, decimals)
            for t, cost, spread in zip(totals, costs, spreads, strict=True)
        ]
        columns.append(
            [
                cost if t is None or not calls else f"{t.llm_calls} / {cost}"
                for t, cost in zip(totals, costs, strict=True)
            ]
        )
    return [[label, *(column[row] for column in columns)] for row, (label, *_) in enumerate(listed)]


def _summed_spread(spreads: list[Spread | None]) -> Spread | None:
    """The spread of the rows left out, summed (None: every one is exact)."""
    known = [spread for spread in spreads if spread is not None]
    return Spread.total(known) if known else None


def cost_band(totals: Totals, spread: Spread | None, *, priced: bool = False) -> Band:
    """A cell's cost (``priced``: its priced part) with its p90 band (``spread`` None:
    exact; a cost is never below $0)."""
    value = totals.priced_cost if priced else totals.cost_usd
    if spread is None:
        return Band(value, floor=Decimal(0))
    return Band(value, spread.rounded(), True, Decimal(0))


def _band(totals: Totals | None, spread: Spread | None, decimals: int) -> str:
    """`` ±$0.0012`` after a cost something estimated lies behind (a lower bound's: the band
    of its priced part); else nothing."""
    if totals is None or spread is None or (totals.cost_usd is None and not totals.priced_cost):
        return ""
    return " " + half_text(cost_band(totals, spread, priced=totals.cost_usd is None), decimals)


def _columns(table: Breakdown) -> list[Column]:
    first = Column(table.by, align="left", cut="left" if table.by == "cassette" else "right")
    return [first, *(Column(name) for name in table.columns)]


def breakdown_table(table: Breakdown, *, width: int, verbose: bool = False) -> str:
    """The breakdown, biggest first; without ``verbose``, a long one's biggest rows (and
    those of unknown cost) and one that sums the others."""
    lines = wrap(f"By {table.by} ({_unit(table)} per variant):", width)
    listed, summed = _listed(table, verbose)
    rows = _rows(listed, table, calls=False, summed=summed)
    lines += table_blocks(_columns(table), rows, width=width)
    if summed:
        least = "smallest" if table.by == "tool" else "cheapest"
        how = "-v lists every one, as do JSON and Markdown"
        lines += wrap(others_note(summed, table.by, how, least), width)
    if table.by == "tool":
        lines += wrap(_TOOL_NOTE, width)
    return "\n".join(lines) + "\n"


def breakdown_markdown(table: Breakdown) -> str:
    unit = "sent / definition tokens / result tokens" if table.by == "tool" else "calls / cost"
    lines = [f"### By {table.by} ({unit})", ""]
    listed = _listed(table, every=True)[0]
    lines += markdown_table(_columns(table), _rows(listed, table, calls=True, summed=0))
    if table.by == "tool":
        lines += ["", _TOOL_NOTE]
    return "\n".join(lines) + "\n"


def _value_json(
    value: Totals | ToolUse | None, spread: Spread | None, *, banded: bool
) -> dict[str, Any] | None:
    if value is None:
        return None
    if isinstance(value, ToolUse):
        return {
            "sent": value.sent,
            "definition_tokens": value.definition_tokens,
            "result_tokens": value.result_tokens,
        }
    cost = (
        band_json(cost_band(value, spread)) if banded else {"cost_usd": amount_text(value.cost_usd)}
    )
    priced = (  # a lower bound's priced part carries the band its cost cannot
        band_json(cost_band(value, spread, priced=True), "priced_cost_usd")
        if banded and value.cost_usd is None
        else {"priced_cost_usd": amount_text(value.priced_cost)}
    )
    return {
        "llm_calls": value.llm_calls,
        "prompt_tokens": value.prompt_tokens,
        "output_tokens": value.output_tokens,
        **cost,
        **priced,
        "unpriced_calls": value.unpriced_calls,
        "left_out_calls": value.left_out_calls,
    }


def breakdown_json(table: Breakdown) -> dict[str, Any]:
    """The rows; each cost with its p90 band (``cost_usd_low`` / ``_high`` / ``_exact``) when
    the bands are known."""
    rows: dict[str, Any] = {}
    banded = table.spreads is not None
    for key, values in table.rows.items():
        spreads = table.spreads[key] if table.spreads is not None else None
        rows[_key(table, key)] = {
            name: _value_json(value, spreads[index] if spreads is not None else None, banded=banded)
            for index, (name, value) in enumerate(zip(table.columns, values, strict=True))
        }
    return {"by": table.by, "columns": list(table.columns), "rows": rows}


def breakdown_document(table: Breakdown) -> dict[str, Any]:
    """A breakdown on its own (``Comparison.breakdown(by).to_json()``)."""
    return {"format_version": FORMAT_VERSION, "kind": "costsim.breakdown", **breakdown_json(table)}
