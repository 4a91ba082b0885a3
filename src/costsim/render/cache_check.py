"""``check-cache`` as a table and JSON: how faithfully the cache simulator reproduces
recordings that used caching."""

from __future__ import annotations

from typing import Any

from costsim.analysis.cache_fidelity import FidelityReport
from costsim.render.text import Column, display_path, markdown_table, plural, table, wrap

__all__ = ["cache_check_document", "cache_check_markdown", "cache_check_table"]

FORMAT_VERSION = 1


def _split(read: int, write_5m: int, write_1h: int) -> dict[str, int]:
    return {
        "cache_read": read,
        "cache_write": write_5m + write_1h,
        "cache_write_5m": write_5m,
        "cache_write_1h": write_1h,
    }


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
        "server_side_compared": report.server_side_compared,
        "server_side_matched": report.server_side_matched,
        "client_match_rate": None
        if report.client_match_rate is None
        else round(report.client_match_rate, 4),
        "rule_breaking": len(report.rule_breaking),
        "mismatches": [
            {
                "path": display_path(m.provenance.path),
                "interaction": m.provenance.index,
                "model": m.model,
                "recorded": _split(m.recorded_read, m.recorded_write_5m, m.recorded_write_1h),
                "predicted": _split(m.predicted_read, m.predicted_write_5m, m.predicted_write_1h),
                "rule": m.rule,
                "reason": m.reason,
            }
            for m in report.mismatches
        ],
    }


def _summary(report: FidelityReport) -> list[str]:
    lines = [
        f"{report.calls_matched} of {report.calls_compared} calls matched "
        f"({report.match_rate or 0:.1%}): predicted cache read, 5m write and 1h write "
        "within 5% of the prompt (at least 32 tokens) of the recorded values.",
    ]
    lines += [f"  {name}: {m} of {c}" for name, (c, m) in report.by_provider.items()]
    lines.append(
        f"  not seeded from a warm start: {report.unseeded_matched} of {report.unseeded_compared}"
    )
    if report.server_side_compared:
        client = report.calls_compared - report.server_side_compared
        lines.append(
            f"  without server-side tool iterations: "
            f"{report.calls_matched - report.server_side_matched} of {client} "
            f"({report.client_match_rate or 0:.1%}); "
            f"{plural(report.server_side_compared, 'call')} ran "
            "server tools whose own iterations read and write cache the client never sent"
        )
    if report.warm_starts:
        lines.append(
            f"{plural(len(report.warm_starts), 'call')} read cache written before the "
            "recording began: "
            "the simulation was seeded with those entries (warm start inferred)."
        )
    if report.rule_breaking:
        lines.append(
            f"{plural(len(report.rule_breaking), 'call')} "
            f"{'breaks' if len(report.rule_breaking) == 1 else 'break'} a caching rule "
            "(the simulator enforces it; the recording does not follow it)."
        )
    return lines


_LEGEND = "Mismatches, recorded and predicted as tokens read / written for 5m / for 1h:"


def _mismatches(report: FidelityReport) -> tuple[list[Column], list[list[str]], list[str]]:
    """The mismatch table, its reasons numbered once below it (they repeat)."""
    reasons = list(dict.fromkeys(m.reason for m in report.mismatches))
    columns = [
        Column("call", align="left", cut="left", min_width=16),
        Column("model", align="left", cut="right", min_width=12, drop=1),
        Column("recorded"),
        Column("predicted"),
        Column("reason"),
    ]
    rows = [
        [
            f"{display_path(m.provenance.path)}#{m.provenance.index}",
            m.model,
            f"{m.recorded_read:,}/{m.recorded_write_5m:,}/{m.recorded_write_1h:,}",
            f"{m.predicted_read:,}/{m.predicted_write_5m:,}/{m.predicted_write_1h:,}",
            f"[{reasons.index(m.reason) + 1}]",
        ]
        for m in report.mismatches
    ]
    return columns, rows, [f"[{n}] {reason}" for n, reason in enumerate(reasons, start=1)]


def cache_check_table(report: FidelityReport, *, width: int) -> str:
    """The answer (how many calls the simulator reproduces), then every mismatch."""
    if not report.calls_compared:  # not "0 of 0 matched (0.0%)"
        return "No calls to compare: nothing to check.\n"
    lines = [
        wrapped for line in _summary(report) for wrapped in wrap(line, width, subsequent="    ")
    ]
    if report.mismatches:
        columns, rows, reasons = _mismatches(report)
        lines += ["", *wrap(_LEGEND, width, subsequent="  ")]
        lines += [*table(columns, rows, width=width), "Likely reasons:"]
        lines += [wrapped for r in reasons for wrapped in wrap(r, width, indent="  ")]
    return "\n".join(lines) + "\n"


def cache_check_markdown(report: FidelityReport) -> str:
    lines = ["## costsim check-cache", ""]
    lines += [f"- {line.strip()}" for line in _summary(report)]
    if report.mismatches:
        columns, rows, reasons = _mismatches(report)
        lines += ["", _LEGEND, "", *markdown_table(columns, rows), ""]
        lines += [f"- {reason}" for reason in reasons]
    return "\n".join(lines) + "\n"
