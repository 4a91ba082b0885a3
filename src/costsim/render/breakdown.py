"""Breakdowns as tables and JSON: cost per model or agent, tokens per tool."""

from __future__ import annotations

from typing import Any

from tabulate import tabulate

from costsim.analysis.breakdown import Breakdown, ToolUse
from costsim.pricing.ledger import Totals
from costsim.pricing.money import money

__all__ = ["breakdown_json", "breakdown_table"]

_TOOL_NOTE = "Token counts are offline tokenizer counts of the requests (not calibrated)."


def _cell(value: Totals | ToolUse | None) -> str:
    if value is None:
        return "-"
    if isinstance(value, ToolUse):
        return f"{value.sent} / {value.definition_tokens:,} / {value.result_tokens:,}"
    cost = money(value.cost_usd) if value.cost_usd is not None else "unknown"
    return f"{value.llm_calls} / {cost}"


def breakdown_table(table: Breakdown) -> str:
    unit = "sent / def tok / result tok" if table.by == "tool" else "calls / cost"
    headers = [table.by, *(f"{name} ({unit})" for name in table.columns)]
    rows = [[key, *(_cell(value) for value in values)] for key, values in table.rows.items()]
    text = tabulate(rows, headers=headers, tablefmt="simple", disable_numparse=True)
    return text + ("\n" + _TOOL_NOTE if table.by == "tool" else "") + "\n"


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
        "cost_usd": None if cost is None else str(cost),
        "priced_cost_usd": str(value.priced_cost),
        "unpriced_calls": value.unpriced_calls,
    }


def breakdown_json(table: Breakdown) -> dict[str, Any]:
    return {
        "by": table.by,
        "columns": list(table.columns),
        "rows": {
            key: {
                name: _value_json(value) for name, value in zip(table.columns, values, strict=True)
            }
            for key, values in table.rows.items()
        },
    }
