"""``costsim calibrate`` output: per family and pooled per API flavour."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from tabulate import tabulate

from costsim.metering.calibration import median, percentile
from costsim.metering.evaluate import FamilyReport

__all__ = ["CALIBRATION_FORMAT_VERSION", "calibration_json", "calibration_table", "pooled"]

CALIBRATION_FORMAT_VERSION = 1


def _round(value: float | None, digits: int = 2) -> float | None:
    return None if value is None else round(value, digits)


def _family_json(report: FamilyReport) -> dict[str, Any]:
    return {
        "family": report.family,
        "calls": report.calls,
        "cassettes": report.cassettes,
        "excluded": dict(sorted(report.excluded.items())),
        "source": report.coefficients.source,
        "coefficients": report.coefficients.as_dict(),
        "raw_median_ape": _round(report.raw_median_ape),
        "raw_p90_ape": _round(report.raw_p90_ape),
        "calibrated_median_ape": _round(report.calibrated_median_ape),
        "calibrated_p90_ape": _round(report.calibrated_p90_ape),
        "increment_pairs": report.increment_pairs,
        "increment_median_error_pct": _round(report.increment_median_error_pct),
        "raw_increment_median_error_pct": _round(report.raw_increment_median_error_pct),
        "text_only_calls": report.text_only_calls,
        "exact_match_rate": _round(report.exact_match_rate, 4),
    }


def pooled(reports: list[FamilyReport]) -> list[dict[str, Any]]:
    """Every family of an API flavour pooled (and its tool-using families on their own)."""
    groups: dict[str, list[FamilyReport]] = {}
    for report in reports:
        flavour = report.family.split("/")[0]
        flavour = "anthropic-messages" if flavour.startswith("claude") else flavour
        groups.setdefault(flavour, []).append(report)
        if report.family.endswith("+tools"):
            groups.setdefault(f"{flavour}+tools", []).append(report)
    result = []
    for name, members in sorted(groups.items()):
        errors = [e for r in members for e in r.errors]
        increments = [e for r in members for e in r.increment_errors]
        text_only = sum(r.text_only_calls for r in members)
        exact = sum(r.text_only_exact for r in members)
        result.append(
            {
                "flavour": name,
                "calls": len(errors),
                "calibrated_median_ape": _round(median(errors)),
                "calibrated_p90_ape": _round(percentile(errors, 90)),
                "increment_pairs": len(increments),
                "increment_median_error_pct": _round(median(increments)),
                "text_only_calls": text_only,
                "exact_match_rate": _round(exact / text_only, 4) if text_only else None,
            }
        )
    return result


def calibration_json(reports: list[FamilyReport]) -> str:
    document = {
        "format_version": CALIBRATION_FORMAT_VERSION,
        "kind": "costsim.calibration",
        "method": "weighted least squares on relative error; errors leave-one-cassette-out",
        "families": [_family_json(r) for r in reports],
        "flavours": pooled(reports),
    }
    return json.dumps(document, indent=2) + "\n"


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}%"


def calibration_table(reports: list[FamilyReport]) -> str:
    rows = [
        [
            r.family,
            r.calls,
            sum(r.excluded.values()),
            _pct(r.raw_median_ape),
            _pct(r.calibrated_median_ape),
            _pct(r.calibrated_p90_ape),
            r.increment_pairs,
            _pct(r.increment_median_error_pct),
            "-" if r.exact_match_rate is None else f"{r.exact_match_rate:.1%}",
        ]
        for r in reports
    ]
    headers = [
        "family", "calls", "excluded", "raw med", "cal med", "cal p90",
        "Δ pairs", "Δ med err", "exact",
    ]  # fmt: skip
    pooled_rows = [
        [
            p["flavour"],
            p["calls"],
            _pct(p["calibrated_median_ape"]),
            _pct(p["calibrated_p90_ape"]),
            p["increment_pairs"],
            _pct(p["increment_median_error_pct"]),
            "-" if p["exact_match_rate"] is None else f"{p['exact_match_rate']:.1%}",
        ]
        for p in pooled(reports)
    ]
    reasons: Counter[str] = Counter()
    for r in reports:
        reasons.update(r.excluded)
    lines = [
        tabulate(rows, headers=headers, tablefmt="simple"),
        "",
        tabulate(
            pooled_rows,
            headers=["pooled", "calls", "cal med", "cal p90", "Δ pairs", "Δ med err", "exact"],
            tablefmt="simple",
        ),
        "",
        "Errors are absolute % of the recorded prompt total, leave-one-cassette-out;",
        "Δ: recorded prompt increase between consecutive calls of a conversation vs predicted.",
    ]
    if reasons:
        lines.append(
            "Excluded calls: " + "; ".join(f"{n} {why}" for why, n in reasons.most_common())
        )
    return "\n".join(lines) + "\n"
