"""Render a report as a table, JSON or Markdown. One entry per format in ``RENDERERS``.

The JSON shape is a stable contract (``schemas/report.schema.json``); bump ``FORMAT_VERSION``
when it changes incompatibly.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from typing import Any

from tabulate import tabulate

from costsim.analysis.report import CassetteReport, Report
from costsim.metering.meter import ErrorBand
from costsim.pricing.ledger import Totals
from costsim.pricing.money import money
from costsim.render.text import display_path, percent

__all__ = ["FORMAT_VERSION", "RENDERERS", "render", "report_json", "totals_json"]

FORMAT_VERSION = 1


def totals_json(totals: Totals) -> dict[str, Any]:
    cost = totals.cost_usd
    return {
        "llm_calls": totals.llm_calls,
        "calls_with_usage": totals.calls_with_usage,
        "estimated_calls": totals.estimated_calls,
        "errored_calls": totals.errored_calls,
        "unmetered_calls": totals.unmetered_calls,
        "prompt_tokens": totals.prompt_tokens,
        "uncached_input_tokens": totals.uncached_input_tokens,
        "cache_read_tokens": totals.cache_read_tokens,
        "cache_write_tokens": totals.cache_write_tokens,
        "cache_write_5m_tokens": totals.cache_write_5m_tokens,
        "cache_write_1h_tokens": totals.cache_write_1h_tokens,
        "output_tokens": totals.output_tokens,
        "reasoning_tokens": totals.reasoning_tokens,
        "cache_hit_rate": None
        if totals.cache_hit_rate is None
        else round(totals.cache_hit_rate, 6),
        "cost_usd": None if cost is None else str(cost),
        "priced_cost_usd": str(totals.priced_cost),
        "unpriced_calls": totals.unpriced_calls,
        "undated_calls": totals.undated_calls,
        "gateway_priced_calls": totals.gateway_priced_calls,
        "web_searches": totals.web_searches,
    }


def _cassette_json(item: CassetteReport) -> dict[str, Any]:
    return {
        "path": display_path(item.path),
        **totals_json(item.totals),
        "other_interactions": item.other_interactions,
        "foreign_calls": dict(sorted(item.foreign_calls.items())),
        "first_recorded": item.first_recorded.isoformat() if item.first_recorded else None,
        "last_recorded": item.last_recorded.isoformat() if item.last_recorded else None,
    }


def report_json(report: Report) -> dict[str, Any]:
    document: dict[str, Any] = {
        "format_version": FORMAT_VERSION,
        "kind": "costsim.report",
        "as_of": report.as_of.isoformat() if report.as_of else None,
        "by": report.by,
        "totals": totals_json(report.totals),
        "cassettes": [_cassette_json(item) for item in report.cassettes],
        "groups": [{"key": key, **totals_json(t)} for key, t in report.groups.items()],
        "unpriced": [
            {
                "path": display_path(u.provenance.path),
                "interaction": u.provenance.index,
                "model": u.model,
                "reason": u.reason,
            }
            for u in report.totals.unpriced
        ],
        "skipped": [{"path": display_path(s.path), "error": s.error} for s in report.skipped],
        "estimator": [_band_json(band) for band in report.estimator],
        "notes": [
            {
                "path": display_path(note.provenance.path),
                "interaction": note.provenance.index,
                "kind": note.kind.value,
                "message": note.message,
            }
            for note in report.notes
        ],
    }
    return document


def _band_json(band: ErrorBand) -> dict[str, Any]:
    return {
        "family": band.family,
        "source": band.source,
        "calls": band.calls,
        "median_ape": None if band.median_ape is None else round(band.median_ape, 2),
        "p90_ape": None if band.p90_ape is None else round(band.p90_ape, 2),
    }


def band_text(band: ErrorBand) -> str:
    if band.median_ape is None or band.p90_ape is None:
        return f"{band.family}: {band.source} coefficients, no recorded calls here to measure error"
    return (
        f"{band.family}: ±{band.median_ape:.1f}% median, ±{band.p90_ape:.1f}% p90 "
        f"on {band.calls} recorded calls here"
    )


def render_json(report: Report) -> str:
    return json.dumps(report_json(report), indent=2, sort_keys=False) + "\n"


_HEADERS = (
    "calls", "usage", "prompt", "uncached", "cache read", "cache write", "output",
    "thinking", "hit rate", "cost",
)  # fmt: skip


def _row(name: str, totals: Totals) -> list[str]:
    return [
        name,
        f"{totals.llm_calls:,}",
        f"{totals.calls_with_usage:,}",
        f"{totals.prompt_tokens:,}",
        f"{totals.uncached_input_tokens:,}",
        f"{totals.cache_read_tokens:,}",
        f"{totals.cache_write_tokens:,}",
        f"{totals.output_tokens:,}",
        f"{totals.reasoning_tokens:,}",
        percent(totals.cache_hit_rate),
        money(totals.cost_usd) if totals.cost_usd is not None else _partial_cost(totals),
    ]


def _partial_cost(totals: Totals) -> str:
    if not totals.priced_cost:
        return "unpriced*" if totals.unpriced else "unknown*"
    return f"≥{money(totals.priced_cost)}*"


def _rows(report: Report) -> tuple[str, list[list[str]]]:
    if report.by == "cassette":
        rows = [_row(display_path(item.path), item.totals) for item in report.cassettes]
    else:
        rows = [_row(key, totals) for key, totals in report.groups.items()]
    rows.append(_row("TOTAL", report.totals))
    return report.by, rows


def _notes(report: Report) -> list[str]:
    totals = report.totals
    notes: list[str] = []
    if totals.unpriced:
        notes.append(
            f"* {totals.unpriced_calls} unpriced call(s): costs shown are a lower bound, "
            "the total cost is unknown."
        )
        notes.extend(f"  unpriced: {u.provenance}: {u.reason}" for u in totals.unpriced)
    if totals.estimated_calls:
        notes.append(
            f"* {totals.estimated_calls} call(s) recorded no usage: their tokens are estimated "
            "(calibrated offline count); estimator error: "
            + "; ".join(band_text(band) for band in report.estimator)
        )
    if totals.unmetered_calls:
        notes.append(
            f"* {totals.unmetered_calls} call(s) recorded no usage and are not in the token "
            "totals; the total cost is unknown."
        )
    if totals.gateway_priced_calls:
        notes.append(
            f"{totals.gateway_priced_calls} call(s) priced from the cost the gateway recorded "
            "(genai-prices has no price for their model)."
        )
    if totals.errored_calls:
        notes.append(f"{totals.errored_calls} errored call(s): unbilled, no tokens counted.")
    foreign = sum((item.foreign_calls for item in report.cassettes), start=Counter[str]())
    if foreign:
        listed = ", ".join(f"{n} to {host}" for host, n in sorted(foreign.items()))
        notes.append(f"Calls to other providers, not metered: {listed}.")
    if totals.undated_calls and not report.as_of:
        notes.append(
            f"{totals.undated_calls} call(s) have no recorded date: priced at today's prices "
            "(pin a date with --as-of)."
        )
    if report.as_of:
        notes.append(f"Prices as of {report.as_of.date().isoformat()} (--as-of).")
    if report.skipped:
        notes.append(f"{len(report.skipped)} unreadable cassette(s) skipped (--lenient).")
    notes.extend(_recording_notes(report))
    return notes


NOTES_SHOWN = 10


def _recording_notes(report: Report) -> list[str]:
    """Notes about single interactions: the first few, and how many more JSON lists."""
    if not report.notes:
        return []
    lines = [f"* {len(report.notes)} note(s) about the recordings:"]
    lines += [
        f"  {display_path(n.provenance.path)} interaction {n.provenance.index}: "
        f"[{n.kind.value}] {n.message}"
        for n in report.notes[:NOTES_SHOWN]
    ]
    if len(report.notes) > NOTES_SHOWN:
        lines.append(f"  … and {len(report.notes) - NOTES_SHOWN} more (--format json lists all)")
    return lines


def render_table(report: Report) -> str:
    first, rows = _rows(report)
    table = tabulate(rows, headers=(first, *_HEADERS), tablefmt="simple", stralign="right")
    return "\n".join([table, *_notes(report)]) + "\n"


def render_markdown(report: Report) -> str:
    first, rows = _rows(report)
    rows[-1] = [f"**{cell}**" for cell in rows[-1]]
    table = tabulate(rows, headers=(first, *_HEADERS), tablefmt="github")
    notes = _notes(report)
    body = "## costsim report\n\n" + table + "\n"
    if notes:
        body += "\n" + "\n".join(f"- {note.lstrip('* ').strip()}" for note in notes) + "\n"
    return body


RENDERERS: dict[str, Callable[[Report], str]] = {
    "table": render_table,
    "json": render_json,
    "markdown": render_markdown,
}


def render(report: Report, fmt: str) -> str:
    return RENDERERS[fmt](report)
