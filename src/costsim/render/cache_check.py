"""``check-cache`` as a table and JSON: how faithfully the cache simulator reproduces
recordings that used caching."""

from __future__ import annotations

from typing import Any

from costsim.analysis.cache_fidelity import FidelityReport
from costsim.render.text import Column, display_path, markdown_table, table, wrap

__all__ = ["cache_check_document", "cache_check_markdown", "cache_check_table"]

FORMAT_VERSION = 1


def cache_check_document(report: FidelityReport) -> dict[str, Any]:
    return {
        "format_version": FORMAT_VERSION,
        "kind": "costsim.check-cache",
        "calls_compared": report.calls_compared,
        "calls_matched": report.calls_matched,
        "match_rate": None if report.match_rate is None else round(report.match_rate, 4),
        "unseeded_compared": report.unseeded_compared,
        "unseeded_matched": report.unseeded_matched,
        "by_provider": {
            k: {"compared": c, "matched": m} for k, (c, m) in report.by_provider.items()
        },
        "warm_starts": [
            {"path": display_path(p.path), "interaction": p.index} for p in report.warm_starts
        ],
        "mismatches": [
            {
                "path": display_path(m.provenance.path),
                "interaction": m.provenance.index,
                "model": m.model,
                "recorded": {"cache_read": m.recorded_read, "cache_write": m.recorded_write},
                "predicted": {"cache_read": m.predicted_read, "cache_write": m.predicted_write},
                "reason": m.reason,
            }
            for m in report.mismatches
        ],
    }


def _summary(report: FidelityReport) -> list[str]:
    lines = [
        f"{report.calls_matched} of {report.calls_compared} calls matched "
        f"({report.match_rate or 0:.1%}): predicted cache read and write within 5% of the prompt "
        "(at least 32 tokens) of the recorded values.",
    ]
    lines += [f"  {name}: {m} of {c}" for name, (c, m) in report.by_provider.items()]
    lines.append(
        f"  not seeded from a warm start: {report.unseeded_matched} of {report.unseeded_compared}"
    )
    if report.warm_starts:
        lines.append(
            f"{len(report.warm_starts)} call(s) read cache written before the recording began: "
            "the simulation was seeded with those entries (warm start inferred)."
        )
    return lines


def _mismatches(report: FidelityReport) -> tuple[list[Column], list[list[str]], list[str]]:
    """The mismatch table, its reasons numbered once below it (they repeat)."""
    reasons = list(dict.fromkeys(m.reason for m in report.mismatches))
    columns = [
        Column("call", align="left", cut="left", min_width=24),
        Column("model", align="left", cut="right", min_width=16, give=2),
        Column("recorded r/w"),
        Column("predicted r/w"),
        Column("reason"),
    ]
    rows = [
        [
            f"{display_path(m.provenance.path)}#{m.provenance.index}",
            m.model,
            f"{m.recorded_read:,} / {m.recorded_write:,}",
            f"{m.predicted_read:,} / {m.predicted_write:,}",
            f"[{reasons.index(m.reason) + 1}]",
        ]
        for m in report.mismatches
    ]
    return columns, rows, [f"[{n}] {reason}" for n, reason in enumerate(reasons, start=1)]


def cache_check_table(report: FidelityReport, *, width: int) -> str:
    """The answer (how many calls the simulator reproduces), then every mismatch."""
    lines = [
        wrapped for line in _summary(report) for wrapped in wrap(line, width, subsequent="    ")
    ]
    if report.mismatches:
        columns, rows, reasons = _mismatches(report)
        lines += ["", *table(columns, rows, width=width), "Likely reasons:"]
        lines += [wrapped for r in reasons for wrapped in wrap(r, width, indent="  ")]
    return "\n".join(lines) + "\n"


def cache_check_markdown(report: FidelityReport) -> str:
    lines = ["## costsim check-cache", ""]
    lines += [f"- {line.strip()}" for line in _summary(report)]
    if report.mismatches:
        columns, rows, reasons = _mismatches(report)
        lines += ["", *markdown_table(columns, rows), ""]
        lines += [f"- {reason}" for reason in reasons]
    return "\n".join(lines) + "\n"
