"""Divergence flags and notes, each with the call (file, interaction) it concerns."""

from __future__ import annotations

from collections.abc import Sequence

from costsim.analysis.comparison import Comparison
from costsim.analysis.report import Report
from costsim.pricing.ledger import Totals
from costsim.render.html.figures import Finding
from costsim.render.report import ESTIMATED, UNMETERED, read_pricing_notes
from costsim.render.text import display_path, plural

__all__ = ["comparison_findings", "report_findings"]


def _unpriced(where: str, totals: Totals, seen: set[tuple[str, int, str]]) -> list[Finding]:
    found = []
    for item in totals.unpriced:
        key = (str(item.provenance.path), item.provenance.index, item.model)
        if key in seen:
            continue
        seen.add(key)
        found.append(
            Finding(
                where,
                "unpriced",
                "pricing",
                display_path(item.provenance.path),
                item.provenance.index,
                f"{item.model}: {item.reason}",
            )
        )
    return found


def comparison_findings(comparison: Comparison, labels: Sequence[str]) -> list[Finding]:
    """Every variant's divergence flags and notes, then calls without a price."""
    found: list[Finding] = []
    for label, summary in zip(labels[1:], comparison.variants, strict=True):
        for event in summary.events:
            if event.kind == "change":
                continue
            where = event.provenance
            found.append(
                Finding(
                    label,
                    event.kind,
                    event.strategy,
                    display_path(where.path) if where else "",
                    where.index if where else None,
                    event.message,
                )
            )
    seen: set[tuple[str, int, str]] = set()
    base = comparison.baseline
    if base.estimated_calls:
        found.append(
            Finding(
                labels[0],
                "estimated",
                "reading",
                "",
                None,
                f"{plural(base.estimated_calls, 'call')} {ESTIMATED}; costsim cassettes check "
                "names them",
            )
        )
    if base.unmetered_calls:
        found.append(
            Finding(
                labels[0],
                "unmetered",
                "reading",
                "",
                None,
                f"{plural(base.unmetered_calls, 'call')} {UNMETERED}",
            )
        )
    if base.left_out_calls:
        missed = plural(base.left_out_calls, "LLM-looking interaction")
        found.append(
            Finding(
                labels[0],
                "left-out",  # unrecognised or (--lenient) unreadable: both
                "reading",
                "",
                None,
                f"{missed} costsim cannot meter: in no sum, so costs are a lower bound "
                "(costsim report lists them)",
            )
        )
    found += _unpriced(labels[0], base, seen) + _read_pricing(labels[0], base)
    for label, summary in zip(labels[1:], comparison.variants, strict=True):
        found += _unpriced(label, summary.totals, seen) + _read_pricing(label, summary.totals)
    return found


def _read_pricing(label: str, totals: Totals) -> list[Finding]:
    """How the run's cache reads without a price of their own were priced."""
    return [
        Finding(label, "read-pricing", "pricing", "", None, note)
        for note in read_pricing_notes(totals.read_pricing)
    ]


def report_findings(report: Report) -> list[Finding]:
    """Notes about single interactions, calls without a price, and files left out."""
    found = [
        Finding(
            "recorded",
            str(note.kind),
            "reading",
            display_path(note.provenance.path),
            note.provenance.index,
            note.message,
        )
        for note in report.notes
    ]
    found += [
        Finding(
            "recorded",
            "errored",
            "reading",
            display_path(item.call.provenance.path),
            item.call.provenance.index,
            f"unbilled: {item.call.error or 'an error'}",
        )
        for cassette in report.cassettes
        for item in cassette.calls
        if item.call.errored
    ]
    found += _unpriced("recorded", report.totals, set())
    found += [  # in no LLM figure, but billed: never a silent $0
        Finding(
            "recorded",
            "unpriced",
            "pricing",
            display_path(u.provenance.path),
            u.provenance.index,
            f"{u.model} (embeddings): {u.reason}",
        )
        for u in report.embeddings.unpriced
    ]
    found += [
        Finding("recorded", "skipped", "reading", display_path(item.path), None, item.error)
        for item in report.skipped
    ]
    return found
