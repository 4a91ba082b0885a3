"""Breakdowns as tables and JSON: cost per cassette, model, provider, flavour or agent;
tokens per tool. One column per variant (the baseline first); a table wider than the terminal
is printed in blocks of columns."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from costsim.analysis.breakdown import Breakdown, ToolUse
from costsim.pricing.ledger import Totals
from costsim.pricing.money import amount_text
from costsim.render.report import FORMAT_VERSION
from costsim.render.text import (
    Column,
    decimals_for,
    display_path,
    markdown_table,
    money_cells,
    table_blocks,
)

__all__ = ["breakdown_document", "breakdown_json", "breakdown_markdown", "breakdown_table"]

_TOOL_NOTE = "Token counts are offline tokenizer counts of the requests (not calibrated)."


def _key(table: Breakdown, key: str) -> str:
    return display_path(Path(key)) if table.by == "cassette" else key


def _unit(table: Breakdown) -> str:
    return "sent / definition tokens / result tokens" if table.by == "tool" else "cost"


def _rows(table: Breakdown, *, calls: bool) -> list[list[str]]:
    keys = list(table.rows)
    decimals = decimals_for(
        v.cost_usd for values in table.rows.values() for v in values if isinstance(v, Totals)
    )
    columns: list[list[str]] = []
    for index in range(len(table.columns)):
        values = [table.rows[key][index] for key in keys]
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
    return [
        [_key(table, key), *(column[row] for column in columns)] for row, key in enumerate(keys)
    ]


def _columns(table: Breakdown) -> list[Column]:
    first = Column(table.by, align="left", cut="left" if table.by == "cassette" else "right")
    return [first, *(Column(name) for name in table.columns)]


def breakdown_table(table: Breakdown, *, width: int) -> str:
    lines = [f"By {table.by} ({_unit(table)} per variant):"]
    lines += table_blocks(_columns(table), _rows(table, calls=False), width=width)
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
