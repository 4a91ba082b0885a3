"""The HTML page of ``costsim report``: what the recorded traffic was billed, and where it went.

Answer first (the total), then cost per model and per the chosen grouping stacked by class,
the costliest cassettes (every cassette in the table, paginated), running tokens per turn of
the largest trace, and every note, unpriced call and skipped file with the call it concerns.
"""

from __future__ import annotations

from collections.abc import Callable

from costsim.analysis.report import GROUPINGS, Report
from costsim.pricing.ledger import MeteredCall
from costsim.pricing.money import money
from costsim.render.html.costs import Costed, Spend, group, turn_series
from costsim.render.html.figures import (
    Row,
    findings_table,
    ranked_figure,
    spend_label,
    turns_figure,
)
from costsim.render.html.findings import report_findings
from costsim.render.html.markup import Node, el
from costsim.render.html.page import document
from costsim.render.html.tables import Table, cell, num
from costsim.render.report_text import report_notes
from costsim.render.text import display_path

__all__ = ["report_page"]


def _answer(report: Report, spend: Spend) -> str:
    totals = report.totals
    where = f"{totals.llm_calls:,} LLM calls in {len(report.cassettes):,} cassettes"
    if totals.cost_usd is not None:
        return f"{money(totals.cost_usd)} billed for {where}."
    return f"{spend_label(spend)} billed for {where}: some calls have no known cost."


def _by(
    ident: str, title: str, calls: list[Costed], key: Callable[[MeteredCall], str] | None
) -> Node | None:
    if key is None:
        return None
    rows = [Row(name, spend) for name, spend in group(calls, key).items()]
    return ranked_figure(ident, title, rows).node()


def _estimator(report: Report) -> Node | None:
    if not report.estimator:
        return None
    rows = [
        (
            cell(band.family),
            cell(band.source),
            num(f"{band.calls:,}", band.calls),
            num("-" if band.median_ape is None else f"{band.median_ape:.1f}%", band.median_ape),
            num("-" if band.p90_ape is None else f"{band.p90_ape:.1f}%", band.p90_ape),
        )
        for band in report.estimator
    ]
    table = Table(
        "Estimated calls: the token estimator's error on recorded calls of the same family",
        ("family", "coefficients", "recorded calls", "median error", "p90 error"),
        rows,
    )
    return el("section", el("h3", "How sure: estimated calls"), table.node(), id="estimator")


def report_page(report: Report) -> str:
    per_cassette = [(item, Costed.of(item.calls)) for item in report.cassettes]
    calls = [costed for _, found in per_cassette for costed in found]
    spend = Spend.of(calls)
    cassettes = [
        Row(
            display_path(item.path),
            Spend.of(found),
            extra=(num(f"{item.size_bytes:,}", item.size_bytes),),
        )
        for item, found in per_cassette
        if not item.embeddings_only  # LLM costs: theirs is no $0 (the notes say them)
    ]
    nodes: list[Node | None] = [
        _by("models", "Cost per model", calls, GROUPINGS["model"]),
        _by(report.by, f"Cost per {report.by}", calls, GROUPINGS[report.by])
        if report.by != "model"
        else None,
        ranked_figure(
            "cassettes", "Costliest cassettes", cassettes, extra_headers=("bytes",)
        ).node(),
    ]
    largest = max(
        report.cassettes, key=lambda c: (c.totals.prompt_tokens, str(c.path)), default=None
    )
    if largest is not None and largest.calls:
        title = f"Running tokens per turn: {display_path(largest.path)}"
        series = turn_series(largest.calls, largest.path)
        note = el("p", "The cassette with the most prompt tokens.", class_="note")
        nodes += [note, turns_figure("turns", title, [("recorded", series)]).node()]
    nodes.append(_estimator(report))
    nodes.append(
        findings_table(
            "findings",
            "Notes, errored and unpriced calls, skipped files",
            report_findings(report),
            "None: every call was read, answered and priced.",
        )
    )
    meta = [] if report.as_of else ["Each call priced at its recorded date."]
    meta += [note.lstrip("* ") for note in report_notes(report)]
    body = [node for node in nodes if node is not None]
    return document("costsim report", [_answer(report, spend)], body, meta)
