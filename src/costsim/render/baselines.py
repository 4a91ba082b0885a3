"""Baselines saved by ``pytest --costsim-save``: a comparison of two (regressions,
improvements, new and gone tests), and the list of those saved, as text and JSON."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from costsim.analysis.baseline_store import BaselineDiff, SavedBaseline
from costsim.pricing.money import amount_text
from costsim.render.text import (
    Column,
    display_path,
    markdown_table,
    money_cells,
    plural,
    table,
    wrap,
)
from costsim.render.visible import visible

__all__ = [
    "baseline_document",
    "baseline_markdown",
    "baseline_table",
    "listing_document",
    "listing_markdown",
    "listing_table",
]

FORMAT_VERSION = 1


def _tolerances(diff: BaselineDiff) -> str:
    return ",".join(f"{metric}:{pct:g}%" for metric, pct in diff.tolerances.items()) or "none"


def _answer(diff: BaselineDiff) -> str:
    result = diff.comparison
    old, new = diff.cost_change
    cells = money_cells([old, new])
    verdict = (
        f"{plural(len(result.regressions), 'regression')} beyond tolerance"
        if result.regressions
        else "no regression beyond tolerance"
    )
    return (
        f"{diff.new.name} vs {diff.old.name}: {verdict} ({_tolerances(diff)}), "
        f"{plural(len(result.improvements), 'improvement')}; total cost {cells[0]} -> {cells[1]}."
    )


def _sections(diff: BaselineDiff) -> list[tuple[str, list[str]]]:
    result = diff.comparison
    return [
        ("Regressions", result.regressions),
        ("Improvements", result.improvements),
        ("Notes", result.notes),
        (f"New tests (not in {diff.old.name})", result.new_tests),
        (f"Gone tests (not in {diff.new.name})", result.missing_tests),
    ]


def baseline_table(diff: BaselineDiff, *, width: int) -> str:
    lines = wrap(_answer(diff), width)
    for title, items in _sections(diff):
        if items:
            lines.append(f"{title} ({len(items)}):")
            lines += [w for item in items for w in wrap(item, width, indent="  ")]
    return "\n".join(lines) + "\n"


def baseline_markdown(diff: BaselineDiff) -> str:
    lines = ["## costsim baseline compare", "", visible(_answer(diff))]
    for title, items in _sections(diff):
        if items:  # a test id's line feed is an escape: one item a line
            lines += ["", f"**{visible(title)}**", "", *(f"- {visible(item)}" for item in items)]
    return "\n".join(lines) + "\n"


def _saved_json(saved: SavedBaseline) -> dict[str, Any]:
    total = saved.total
    return {
        "name": saved.name,
        "path": display_path(saved.path),
        "tests": len(saved.tests),
        "calls": total.calls,
        "cost_usd": amount_text(total.cost_usd),
        "priced_cost_usd": amount_text(total.priced_cost_usd),
        "unpriced_calls": total.unpriced_calls,
    }


def baseline_document(diff: BaselineDiff) -> dict[str, Any]:
    result = diff.comparison
    return {
        "format_version": FORMAT_VERSION,
        "kind": "costsim.baseline-comparison",
        "old": _saved_json(diff.old),
        "new": _saved_json(diff.new),
        "tolerances": diff.tolerances,
        "regressions": result.regressions,
        "improvements": result.improvements,
        "notes": result.notes,
        "new_tests": result.new_tests,
        "missing_tests": result.missing_tests,
    }


_LIST = [
    Column("name", align="left", cut="right"),
    Column("tests"),
    Column("calls"),
    Column("cost"),
    Column("saved", align="left"),
    Column("path", align="left", cut="left", min_width=16),
]


def _list_rows(saved: list[SavedBaseline]) -> list[list[str]]:
    totals = [item.total for item in saved]
    costs = money_cells([t.cost_usd for t in totals], missing="unpriced")
    return [
        [
            item.name,
            f"{len(item.tests):,}",
            f"{total.calls:,}",
            cost,
            item.saved.strftime("%Y-%m-%d %H:%M") if item.saved else "-",
            display_path(item.path),
        ]
        for item, total, cost in zip(saved, totals, costs, strict=True)
    ]


def _list_answer(listing: tuple[Path, list[SavedBaseline]]) -> str:
    folder, saved = listing
    if not saved:
        where = display_path(folder)
        return f"No baselines in {where}: save one with pytest --costsim --costsim-save NAME."
    return f"{plural(len(saved), 'baseline')} in {display_path(folder)}."


def listing_table(listing: tuple[Path, list[SavedBaseline]], *, width: int) -> str:
    lines = wrap(_list_answer(listing), width)
    if listing[1]:
        lines += ["", *table(_LIST, _list_rows(listing[1]), width=width)]
    return "\n".join(lines) + "\n"


def listing_markdown(listing: tuple[Path, list[SavedBaseline]]) -> str:
    lines = ["## costsim baselines", "", _list_answer(listing)]
    if listing[1]:
        lines += ["", *markdown_table(_LIST, _list_rows(listing[1]))]
    return "\n".join(lines) + "\n"


def listing_document(listing: tuple[Path, list[SavedBaseline]]) -> dict[str, Any]:
    folder, saved = listing
    return {
        "format_version": FORMAT_VERSION,
        "kind": "costsim.baseline-list",
        "folder": display_path(folder),
        "baselines": [
            {**_saved_json(item), "saved": item.saved.isoformat() if item.saved else None}
            for item in saved
        ],
    }
