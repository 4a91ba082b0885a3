"""Tools by the tokens they put in prompts: their definitions, and the results sent back.

These are offline token counts (the tokenizer's, not billed figures), so the chart is in
tokens, not dollars.
"""

from __future__ import annotations

from collections.abc import Sequence

from costsim.analysis.breakdown import Breakdown, ToolUse
from costsim.render.html.bars import Bar, stacked_bars
from costsim.render.html.figures import TOP, tokens_cell
from costsim.render.html.page import Figure
from costsim.render.html.svg import short_tokens
from costsim.render.html.tables import Cell, Table, cell, num
from costsim.render.rows import ranked as rows_ranked

__all__ = ["tools_figure"]

CLASSES = (("c-def", "definitions"), ("c-res", "results"))


def _tokens(use: ToolUse | None) -> int:
    return 0 if use is None else use.definition_tokens + use.result_tokens


def tools_figure(ident: str, tools: Breakdown, labels: Sequence[str]) -> Figure:
    """The tools that put most tokens in the recorded prompts; the table adds every variant
    (``labels``: the baseline's and each variant's column label)."""
    baseline = {
        name: cells[0] if isinstance(cells[0], ToolUse) else None
        for name, cells in tools.rows.items()
    }
    ranked = [name for name, _ in rows_ranked(baseline.items(), _tokens)]
    bars = []
    for name in ranked[:TOP]:
        use = baseline[name] or ToolUse()
        segments = (("c-def", float(use.definition_tokens)), ("c-res", float(use.result_tokens)))
        bars.append(Bar(name, segments, f"{_tokens(use):,} tok"))
    title = "Tools by prompt tokens (recorded)"
    chart = stacked_bars(title, bars, CLASSES, short_tokens)
    headers = ["tool", "requests sending it", "definition tokens", "result tokens"]
    headers += [f"{label} tokens" for label in labels[1:]]
    rows: list[tuple[Cell, ...]] = []
    for name in ranked:
        use = baseline[name] or ToolUse()
        variants = [
            num(f"{_tokens(c):,}", _tokens(c)) if isinstance(c, ToolUse) else num("-", None)
            for c in tools.rows[name][1:]
        ]
        rows.append(
            (
                cell(name),
                tokens_cell(use.sent),
                tokens_cell(use.definition_tokens),
                tokens_cell(use.result_tokens),
                *variants,
            )
        )
    notes = ["Offline token counts of each tool's definitions and of the results sent back."]
    return Figure(ident, title, chart, Table(title, tuple(headers), rows), notes)
