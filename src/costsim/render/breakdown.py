"""Breakdowns as tables and JSON: cost per cassette, model, provider, flavour or agent;
tokens per tool. One column per variant (the baseline first); a table wider than the terminal
is printed in blocks of columns."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

from costsim.analysis.breakdown import Breakdown, ToolUse
from costsim.pricing.ledger import Totals
from costsim.pricing.money import amount_text
from costsim.render.report import FORMAT_VERSION
from costsim.render.rows import natural_key, others_label, others_note, split_rows
from costsim.render.text import (
    Column,
    decimals_for,
    display_path,
    markdown_table,
    money_cells,
    table_blocks,
    wrap,
)

__all__ = ["breakdown_document", "breakdown_json", "breakdown_markdown", "breakdown_table"]

_TOOL_NOTE = "Token counts are offline tokenizer counts of the requests (not calibrated)."


def _key(table: Breakdown, key: str) -> str:
    return display_path(Path(key)) if table.by == "cassette" else key


def _unit(table: Breakdown) -> str:
    return "sent / definition tokens / result tokens" if table.by == "tool" else "cost"


Values = tuple[Totals | ToolUse | None, ...]


def _weight(value: Totals | ToolUse | None) -> Decimal:
    """What ranks a row: its baseline cost (the priced part), or a tool's tokens."""
    if isinstance(value, Totals):
        return value.priced_cost
    if isinstance(value, ToolUse):
        return Decimal(value.definition_tokens + value.result_tokens)
    return Decimal(0)


def _summed(values: list[Totals | ToolUse | None]) -> Totals | ToolUse | None:
    """One column's cells of the rows left out, added up (None when none has a value)."""
    tools = [v for v in values if isinstance(v, ToolUse)]
    if tools:
        return sum(tools[1:], tools[0])
    costs = [v for v in values if isinstance(v, Totals)]
    if not costs:
        return None
    whole = Totals()
    for value in costs:
        whole.merge(value)
    return whole


def _listed(table: Breakdown, every: bool) -> tuple[list[tuple[str, Values]], int]:
    """The rows, biggest baseline first: every one, or the biggest and one row that sums the
    others; and how many that row sums."""
    ranked = sorted(
        ((_key(table, key), values) for key, values in table.rows.items()),
        key=lambda row: (-_weight(row[1][0] if row[1] else None), natural_key(row[0])),
    )
    shown, others = split_rows(ranked, every=every)
    if not others:
        return shown, 0
    columns = range(len(table.columns))
    summed = tuple(_summed([values[i] for _, values in others]) for i in columns)
    return [*shown, (others_label(len(others), table.by), summed)], len(others)


def _rows(table: Breakdown, *, calls: bool, every: bool = True) -> list[list[str]]:
    listed = _listed(table, every)[0]
    decimals = decimals_for(
        v.cost_usd for values in table.rows.values() for v in values if isinstance(v, Totals)
    )
    columns: list[list[str]] = []
    for index in range(len(table.columns)):
        values = [row[index] for _, row in listed]
        if table.by == "tool":
            columns.append(
                [
                    "-"
                    if not isinstance(v, ToolUse)
                    else f"{v.sent} / {v.definition_tokens:,} / {v.result_tokens:,}"
                    for v in values
                ]
            )
            continue
        totals = [v if isinstance(v, Totals) else None for v in values]
        costs = money_cells(
            [t.cost_usd if t is not None else None for t in totals], decimals=decimals
        )
        columns.append(
            [
                "-" if t is None else (f"{t.llm_calls} / {cost}" if calls else cost)
                for t, cost in zip(totals, costs, strict=True)
            ]
        )
    return [[label, *(column[row] for column in columns)] for row, (label, _) in enumerate(listed)]


def _columns(table: Breakdown) -> list[Column]:
    first = Column(table.by, align="left", cut="left" if table.by == "cassette" else "right")
    return [first, *(Column(name) for name in table.columns)]


def breakdown_table(table: Breakdown, *, width: int, verbose: bool = False) -> str:
    """The breakdown, biggest first; without ``verbose``, a long one's biggest rows and one
    that sums the others."""
    lines = [f"By {table.by} ({_unit(table)} per variant):"]
    lines += table_blocks(_columns(table), _rows(table, calls=False, every=verbose), width=width)
    summed = _listed(table, verbose)[1]
    if summed:
        lines += wrap(others_note(summed, table.by), width)
    if table.by == "tool":
        lines.append(_TOOL_NOTE)
    return "\n".join(lines) + "\n"


def breakdown_markdown(table: Breakdown) -> str:
    unit = "sent / definition tokens / result tokens" if table.by == "tool" else "calls / cost"
    lines = [f"### By {table.by} ({unit})", ""]
    lines += markdown_table(_columns(table), _rows(table, calls=True))
    if table.by == "tool":
        lines += ["", _TOOL_NOTE]
    return "\n".join(lines) + "\n"


def _value_json(value: Totals | ToolUse | None) -> dict[str, Any] | None:
    if value is None:
        return None
    if isinstance(value, ToolUse):
        return {
            "sent": value.sent,
            "definition_tokens": value.definition_tokens,
            "result_tokens": value.result_tokens,
        }
    cost = value.cost_usd
    return {
        "llm_calls": value.llm_calls,
        "prompt_tokens": value.prompt_tokens,
        "output_tokens": value.output_tokens,
        "cost_usd": amount_text(cost),
        "priced_cost_usd": amount_text(value.priced_cost),
        "unpriced_calls": value.unpriced_calls,
    }


def breakdown_json(table: Breakdown) -> dict[str, Any]:
    return {
        "by": table.by,
        "columns": list(table.columns),
        "rows": {
            _key(table, key): {
                name: _value_json(value) for name, value in zip(table.columns, values, strict=True)
            }
            for key, values in table.rows.items()
        },
    }


def breakdown_document(table: Breakdown) -> dict[str, Any]:
    """A breakdown on its own (``Comparison.breakdown(by).to_json()``)."""
    return {"format_version": FORMAT_VERSION, "kind": "costsim.breakdown", **breakdown_json(table)}
