"""Baselines saved by ``pytest --costsim-save``: a comparison of two (regressions,
improvements, new and gone tests), and the list of those saved, as text and JSON."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from costsim.analysis.baseline import Regression
from costsim.analysis.baseline_store import BaselineDiff, SavedBaseline
from costsim.analysis.test_cost import CostChange, TestCost
from costsim.pricing.money import amount_text
from costsim.render.text import (
    Column,
    display_path,
    markdown_table,
    money,
    money_places,
    plural,
    signed_percent,
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
    verdict = (
        f"{plural(len(result.regressions), 'regression')} beyond tolerance"
        if result.regressions
        else "no regression beyond tolerance"
    )
    return (
        f"{diff.new.name} vs {diff.old.name}: {verdict} ({_tolerances(diff)}), "
        f"{plural(len(result.improvements), 'improvement')}; {_total(diff)}."
    )


def _total(diff: BaselineDiff) -> str:
    """``total cost $0.0500 -> $0.0520``; where a call is unpriced, what the tests both
    hold cost where both price them, and how many of those were left out."""
    old, new = diff.cost_change
    if old is not None and new is not None:
        places = money_places([old, new])
        return f"total cost {money(old, places)} -> {money(new, places)}"
    change = diff.priced_change
    left = f"{plural(change.unpriced, 'test')} with unpriced calls left out"
    if not change.tests:
        if not change.unpriced:
            return "total cost unknown (unpriced calls), and no test in both"
        return f"total cost unknown: no test is priced in both ({left})"
    places = money_places([change.before, change.after])
    shift = f" ({signed_percent(change.change_pct)})" if change.change_pct is not None else ""
    said = (
        f"the {plural(change.tests, 'test')} priced in both cost {money(change.before, places)}"
        f" -> {money(change.after, places)}{shift}"
    )
    if not change.unpriced:
        return f"{said} (the unpriced calls are in tests not in both)"
    return f"{said}; {left}"


def _sections(diff: BaselineDiff) -> list[tuple[str, list[str]]]:
    result = diff.comparison
    return [
        ("Regressions", result.regressions),
        ("Improvements", result.improvements),
        ("Notes", result.notes),
        (f"Not in {diff.old.name} (new, or not saved: failed then)", result.new_tests),
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


def _regression_json(found: Regression) -> dict[str, Any]:
    figure = amount_text if found.metric == "cost" else int
    return {
        "test": found.test,
        "metric": found.metric,
        "before": figure(found.before),
        "after": figure(found.after),
        "limit_pct": found.limit,
        "change_pct": found.change_pct,
        "message": found.message,
    }


def _total_json(diff: BaselineDiff, change: CostChange) -> dict[str, Any]:
    old, new = diff.cost_change
    return {
        "old_cost_usd": amount_text(old),
        "new_cost_usd": amount_text(new),
        "compared_tests": change.tests,
        "unpriced_tests": change.unpriced,
        "before_usd": amount_text(change.before),
        "after_usd": amount_text(change.after),
        "change_usd": amount_text(change.change),
        "change_pct": change.change_pct,
    }


def baseline_document(diff: BaselineDiff) -> dict[str, Any]:
    result = diff.comparison
    return {
        "format_version": FORMAT_VERSION,
        "kind": "costsim.baseline-comparison",
        "old": _saved_json(diff.old),
        "new": _saved_json(diff.new),
        "tolerances": diff.tolerances,
        "total": _total_json(diff, diff.priced_change),
        "regressions": result.regressions,
        "regression_details": [_regression_json(found) for found in result.failed],
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


def _cost_cells(totals: list[TestCost]) -> list[str]:
    """Each baseline's cost, in one number of decimals (as the plugin writes its TOTAL); a
    partial cost is its priced part as a lower bound, starred (``≥$0.049000*``), and one
    with nothing priced reads ``unpriced``, never $0."""
    known = [t.priced_cost_usd for t in totals if t.priced_cost_usd or not t.unpriced_calls]
    places = money_places(known)
    cells = []
    for total in totals:
        cell = money(total.priced_cost_usd, places)
        if total.unpriced_calls:
            cell = f"≥{cell}*" if total.priced_cost_usd else "unpriced"
        cells.append(cell)
    return cells


def _list_rows(saved: list[SavedBaseline]) -> list[list[str]]:
    totals = [item.total for item in saved]
    costs = _cost_cells(totals)
    return [
        [
            item.name,
            f"{len(item.tests):,}" if item.error is None else "unreadable",
            f"{total.calls:,}" if item.error is None else "",
            cost if item.error is None else "",
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
    bad = sum(item.error is not None for item in saved)
    unreadable = f", {bad:,} unreadable" if bad else ""
    return f"{plural(len(saved), 'baseline')} in {display_path(folder)}{unreadable}."


def _list_notes(saved: list[SavedBaseline]) -> list[str]:
    """What the star means, and why each unreadable baseline could not be read."""
    partial = [
        f"{item.name} has {plural(total.unpriced_calls, 'unpriced call')} in "
        f"{plural(sum(1 for t in item.tests.values() if t.unpriced_calls), 'test')} of "
        f"{len(item.tests):,}"
        for item in saved
        if (total := item.total).unpriced_calls and total.priced_cost_usd
    ]
    notes = []
    if partial:
        notes.append(
            "* partial cost: the priced part, a lower bound (a call's model has no price, or "
            f"it recorded no usage): {'; '.join(partial)}"
        )
    notes += [f"unreadable: {item.error}" for item in saved if item.error is not None]
    return notes


def listing_table(listing: tuple[Path, list[SavedBaseline]], *, width: int) -> str:
    lines = wrap(_list_answer(listing), width)
    if listing[1]:
        lines += ["", *table(_LIST, _list_rows(listing[1]), width=width)]
        notes = _list_notes(listing[1])
        if notes:
            lines.append("")
            lines += [w for note in notes for w in wrap(note, width)]
    return "\n".join(lines) + "\n"


def listing_markdown(listing: tuple[Path, list[SavedBaseline]]) -> str:
    lines = ["## costsim baselines", "", _list_answer(listing)]
    if listing[1]:
        lines += ["", *markdown_table(_LIST, _list_rows(listing[1]))]
        notes = _list_notes(listing[1])
        if notes:
            lines += ["", *("- " + note.replace("* ", "\\* ", 1) for note in notes)]
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
            if item.error is None
        ],
        "unreadable": [
            {
                "name": item.name,
                "path": display_path(item.path),
                "saved": item.saved.isoformat() if item.saved else None,
                "error": item.error,
            }
            for item in saved
            if item.error is not None
        ],
    }
