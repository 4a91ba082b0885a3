"""Per-breakpoint cache economics of a variant (``-v``): what each breakpoint wrote, what
was read from it, and whether the reads paid for the writes."""

from __future__ import annotations

from costsim.analysis.comparison import VariantSummary
from costsim.render.text import Column, money_cells, table, wrap

__all__ = ["economics_lines"]


def economics_lines(summary: VariantSummary, width: int) -> list[str]:
    """Per-breakpoint cache economics of the variant's simulated calls (``verbose``)."""
    if not summary.breakpoints:
        return []
    columns = [
        Column("breakpoint", align="left", cut="right", min_width=12),
        Column("writes", drop=2), Column("written 5m", drop=3), Column("written 1h", drop=4),
        Column("reads"), Column("read", drop=1), Column("net saved"),
    ]  # fmt: skip
    nets = money_cells([row.net_usd for row in summary.breakpoints], signed=True, missing="-")
    rows = [
        [
            row.position, f"{row.writes:,}", f"{row.tokens_written_5m:,}",
            f"{row.tokens_written_1h:,}", f"{row.reads:,}", f"{row.tokens_read:,}", net,
        ]
        for row, net in zip(summary.breakpoints, nets, strict=True)
    ]  # fmt: skip
    lines = table(columns, rows, width=width - 4)
    note = wrap(
        "net saved: what reads saved against the input price, less what writes paid above it; "
        "a read counts for the deepest breakpoint it matched, so a row is not what taking "
        "that breakpoint away would save (a deeper one writes the same tokens)",
        width - 4,
    )
    return [
        "  per-breakpoint economics (simulated calls):",
        *(f"    {line}" for line in [*lines, *note]),
    ]
