"""``costsim calibrate`` output: per API flavour x content class, then per family."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from tabulate import tabulate

from costsim.metering.evaluate import CalibrationReport, Cell, FamilyReport

__all__ = [
    "CALIBRATION_FORMAT_VERSION",
    "calibration_document",
    "calibration_json",
    "calibration_table",
    "cell_json",
]

CALIBRATION_FORMAT_VERSION = 2

_METHOD = {
    "refit": (
        "provider rules plus a remainder fitted by weighted least squares on relative error; "
        "calibrated errors leave-one-source-out, loco errors leave-one-cassette-out"
    ),
    "shipped": (
        "provider rules plus the coefficients shipped with costsim, not refitted; "
        "loco errors of a refit leave-one-cassette-out, for comparison"
    ),
}


def _round(value: float | None, digits: int = 2) -> float | None:
    return None if value is None else round(value, digits)


def _family_json(report: FamilyReport) -> dict[str, Any]:
    return {
        "family": report.family,
        "calls": report.calls,
        "cassettes": report.cassettes,
        "sources": report.sources,
        "excluded": dict(sorted(report.excluded.items())),
        "source": report.coefficients.source,
        "coefficients": report.coefficients.as_dict(),
        "raw_median_ape": _round(report.raw_median_ape),
        "raw_p90_ape": _round(report.raw_p90_ape),
        "calibrated_median_ape": _round(report.calibrated_median_ape),
        "calibrated_p90_ape": _round(report.calibrated_p90_ape),
        "loco_median_ape": _round(report.loco_median_ape),
        "loco_p90_ape": _round(report.loco_p90_ape),
        "increment_pairs": report.increment_pairs,
        "increment_median_error_pct": _round(report.increment_median_error_pct),
        "increment_p90_error_pct": _round(report.increment_p90_error_pct),
        "raw_increment_median_error_pct": _round(report.raw_increment_median_error_pct),
        "text_only_calls": report.text_only_calls,
        "exact_match_rate": _round(report.exact_match_rate, 4),
    }


def cell_json(cell: Cell) -> dict[str, Any]:
    return {
        "flavour": cell.flavour,
        "class": cell.klass,
        "calls": cell.calls,
        "calibrated_median_ape": _round(cell.median_ape),
        "calibrated_p90_ape": _round(cell.p90_ape),
        "loco_median_ape": _round(cell.loco_median_ape),
        "loco_p90_ape": _round(cell.loco_p90_ape),
        "increment_pairs": cell.increment_pairs,
        "increment_median_error_pct": _round(cell.increment_median_error_pct),
        "increment_p90_error_pct": _round(cell.increment_p90_error_pct),
        "loco_increment_median_error_pct": _round(cell.loco_increment_median_error_pct),
        "loco_increment_p90_error_pct": _round(cell.loco_increment_p90_error_pct),
        "text_only_calls": cell.text_only_calls,
        "exact_match_rate": _round(cell.exact_match_rate, 4),
    }


def calibration_document(report: CalibrationReport) -> dict[str, Any]:
    return {
        "format_version": CALIBRATION_FORMAT_VERSION,
        "kind": "costsim.calibration",
        "mode": report.mode,
        "method": _METHOD[report.mode],
        "sources": report.sources,
        "flavours": [cell_json(cell) for cell in report.cells],
        "families": [_family_json(r) for r in report.families],
    }


def calibration_json(report: CalibrationReport) -> str:
    return json.dumps(calibration_document(report), indent=2) + "\n"


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}%"


def _headline(report: CalibrationReport) -> str:
    held = "shipped coefficients" if report.mode == "shipped" else "leave-one-source-out"
    if report.mode == "refit" and len(report.sources) < 2:
        held = "leave-one-cassette-out: leave-one-source-out needs 2+ sources"
    parts = []
    for cell in report.cells:
        if cell.klass != "no_media" or not cell.calls:
            continue
        parts.append(f"{cell.flavour} ±{_pct(cell.median_ape)} median, ±{_pct(cell.p90_ape)} p90")
    sources = len(report.sources)
    return f"Prompt-total error ({held}, {sources} source{'s' * (sources != 1)}): " + (
        "; ".join(parts) or "no usable calls"
    )


def _cell_rows(report: CalibrationReport) -> list[list[Any]]:
    return [
        [
            c.flavour,
            c.klass,
            c.calls,
            _pct(c.median_ape),
            _pct(c.p90_ape),
            _pct(c.loco_median_ape),
            _pct(c.loco_p90_ape),
            c.increment_pairs,
            _pct(c.increment_median_error_pct),
            _pct(c.increment_p90_error_pct),
            _pct(c.loco_increment_median_error_pct),
            "-" if c.exact_match_rate is None else f"{c.exact_match_rate:.1%}",
        ]
        for c in report.cells
    ]


def calibration_table(report: CalibrationReport) -> str:
    held = "shipped" if report.mode == "shipped" else "LOSO"
    cell_headers = [
        "flavour", "class", "calls", f"{held} med", f"{held} p90", "LOCO med", "LOCO p90",
        "Δ pairs", f"Δ {held} med", f"Δ {held} p90", "Δ LOCO med", "exact",
    ]  # fmt: skip
    family_rows = [
        [
            r.family,
            r.calls,
            sum(r.excluded.values()),
            r.sources,
            r.coefficients.source,
            _pct(r.raw_median_ape),
            _pct(r.calibrated_median_ape),
            _pct(r.calibrated_p90_ape),
            _pct(r.loco_median_ape),
            f"{r.coefficients.values[0]:.3f}",
        ]
        for r in report.families
    ]
    family_headers = [
        "family", "calls", "excluded", "sources", "coefficients", "rules med",
        f"{held} med", f"{held} p90", "LOCO med", "raw slope",
    ]  # fmt: skip
    reasons: Counter[str] = Counter()
    for r in report.families:
        reasons.update(r.excluded)
    lines = [
        _headline(report),
        "",
        tabulate(_cell_rows(report), headers=cell_headers, tablefmt="simple"),
        "",
        tabulate(family_rows, headers=family_headers, tablefmt="simple"),
        "",
        "Errors are absolute % of the recorded prompt total. "
        + (
            "shipped: costsim's shipped coefficients, not refitted here (in-sample where PATHS "
            "are the corpus they were fitted on);"
            if report.mode == "shipped"
            else "LOSO: leave-one-source-out (each source predicted by a fit on the others);"
        ),
        "LOCO: leave-one-cassette-out. Δ: recorded prompt increase between consecutive calls "
        "of a conversation vs predicted.",
        "no_media pools text, tools and reasoning requests; rules med: provider rules alone.",
        f"Sources: {', '.join(report.sources) or '-'}",
    ]
    if reasons:
        lines.append(
            "Excluded calls: " + "; ".join(f"{n} {why}" for why, n in reasons.most_common())
        )
    return "\n".join(lines) + "\n"
