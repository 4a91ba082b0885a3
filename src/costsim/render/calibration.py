"""``costsim calibrate`` output: per API flavour x content class, then per family."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from typing import Any

from costsim.metering.evaluate import (
    MIN_CALLS,
    MIN_CASSETTES,
    CalibrationReport,
    Cell,
    FamilyReport,
)
from costsim.render.text import Column, markdown_table, table, wrap

__all__ = [
    "CALIBRATION_FORMAT_VERSION",
    "calibration_document",
    "calibration_json",
    "calibration_markdown",
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
    every = {cell.flavour: cell for cell in report.cells if cell.klass == "all" and cell.calls}
    parts = []
    for cell in report.cells:
        if cell.klass != "no_media" or not cell.calls:
            continue
        part = f"{cell.flavour} ±{_pct(cell.median_ape)} median, ±{_pct(cell.p90_ape)} p90"
        whole = every.get(cell.flavour)
        if whole is not None and whole.calls != cell.calls:  # images or documents too
            part += f" (all requests: ±{_pct(whole.median_ape)}, ±{_pct(whole.p90_ape)})"
        parts.append(part)
    sources = len(report.sources)
    return (
        f"Prompt-total error of requests without images or documents ({held}, {sources} "
        f"source{'s' * (sources != 1)}): " + ("; ".join(parts) or "no usable calls")
    )


def _held(report: CalibrationReport) -> str:
    """How the errors were held out: the shipped coefficients, by source, or (one source:
    nothing else to hold out) by cassette."""
    if report.mode == "shipped":
        return "shipped"
    return "LOSO" if len(report.sources) > 1 else "LOCO"


def _coefficients(report: FamilyReport) -> str:
    """Where a family's coefficients come from, as an estimate with this fit would use them:
    a fit on too few calls or cassettes is not used (the shipped ones are)."""
    source = report.coefficients.source
    if source == "fitted" and (report.calls < MIN_CALLS or report.cassettes < MIN_CASSETTES):
        return "fitted, unused"
    return source


def _cell_table(report: CalibrationReport, wide: bool) -> tuple[list[Column], list[list[str]]]:
    held = _held(report)
    spec: list[tuple[Column, Callable[[Cell], str], bool]] = [
        (Column("flavour", align="left", cut="right"), lambda c: c.flavour, False),
        (Column("class", align="left"), lambda c: c.klass, False),
        (Column("calls"), lambda c: f"{c.calls:,}", False),
        (Column(f"{held} med"), lambda c: _pct(c.median_ape), False),
        (Column(f"{held} p90"), lambda c: _pct(c.p90_ape), False),
        (Column("LOCO med", drop=4), lambda c: _pct(c.loco_median_ape), False),
        (Column("LOCO p90"), lambda c: _pct(c.loco_p90_ape), True),
        (Column("Δ pairs", drop=3), lambda c: f"{c.increment_pairs:,}", False),
        (Column(f"Δ {held} med", drop=1), lambda c: _pct(c.increment_median_error_pct), False),
        (Column(f"Δ {held} p90"), lambda c: _pct(c.increment_p90_error_pct), True),
        (Column("Δ LOCO med"), lambda c: _pct(c.loco_increment_median_error_pct), True),
        (Column("exact", drop=2), lambda c: _rate(c.exact_match_rate), False),
    ]
    picked = [(col, cell) for col, cell, detail in _shown(spec, held) if wide or not detail]
    rows = [[cell(c) for _, cell in picked] for c in report.cells]
    return [col for col, _ in picked], rows


def _family_table(report: CalibrationReport, wide: bool) -> tuple[list[Column], list[list[str]]]:
    held = _held(report)
    spec: list[tuple[Column, Callable[[FamilyReport], str], bool]] = [
        (Column("family", align="left", cut="right", min_width=16), lambda r: r.family, False),
        (Column("calls"), lambda r: f"{r.calls:,}", False),
        (Column("excluded", drop=3), lambda r: f"{sum(r.excluded.values()):,}", False),
        (Column("sources"), lambda r: str(r.sources), True),
        (Column("coef.", align="left"), _coefficients, False),
        (Column("rules med", drop=1), lambda r: _pct(r.raw_median_ape), False),
        (Column(f"{held} med"), lambda r: _pct(r.calibrated_median_ape), False),
        (Column(f"{held} p90"), lambda r: _pct(r.calibrated_p90_ape), False),
        (Column("LOCO med", drop=4), lambda r: _pct(r.loco_median_ape), False),
        (Column("slope", drop=2), lambda r: f"{r.coefficients.values[0]:.3f}", False),
    ]
    picked = [(col, cell) for col, cell, detail in _shown(spec, held) if wide or not detail]
    rows = [[cell(r) for _, cell in picked] for r in report.families]
    return [col for col, _ in picked], rows


def _shown(spec: list[Any], held: str) -> list[Any]:
    """The columns worth showing: held out by cassette already, the LOCO ones repeat them
    (each header is shown once)."""
    seen: set[str] = set()
    shown = []
    for item in spec:
        if item[0].header not in seen:
            seen.add(item[0].header)
            shown.append(item)
    return shown


def _rate(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


def _legend(report: CalibrationReport) -> list[str]:
    reasons: Counter[str] = Counter()
    for r in report.families:
        reasons.update(r.excluded)
    lines = [
        "Errors are absolute % of the recorded prompt total. "
        + (
            "shipped: costsim's shipped coefficients, not refitted here (in-sample where PATHS "
            "are the corpus they were fitted on)."
            if report.mode == "shipped"
            else "LOSO: leave-one-source-out (each source predicted by a fit on the others)."
            if len(report.sources) > 1
            else "One source: errors are held out by cassette (LOCO), not by source."
        ),
        "LOCO: leave-one-cassette-out. Δ: recorded prompt increase between consecutive calls "
        "of a conversation vs predicted.",
        "no_media pools text, tools and reasoning requests; rules med: provider rules alone; "
        f"coef.: fitted here or shipped (a fit on fewer than {MIN_CALLS} calls or "
        f"{MIN_CASSETTES} cassettes is unused); slope: the fitted count slope.",
        f"Sources: {', '.join(report.sources) or '-'}",
    ]
    if reasons:
        lines.append(
            "Excluded calls: " + "; ".join(f"{n} {why}" for why, n in reasons.most_common())
        )
    return lines


def calibration_table(report: CalibrationReport, *, width: int, wide: bool = False) -> str:
    if not any(cell.calls for cell in report.cells):  # not tables of zeros
        return "No usable calls: nothing to calibrate on.\n"
    cells = _cell_table(report, wide)
    families = _family_table(report, wide)
    lines = [*wrap(_headline(report), width, subsequent="  "), ""]
    lines += [*table(*cells, width=width), "", *table(*families, width=width), ""]
    lines += [wrapped for line in _legend(report) for wrapped in wrap(line, width)]
    return "\n".join(lines) + "\n"


def calibration_markdown(report: CalibrationReport) -> str:
    lines = ["## costsim calibrate", "", _headline(report), ""]
    lines += [*markdown_table(*_cell_table(report, True)), ""]
    lines += [*markdown_table(*_family_table(report, True)), ""]
    lines += [f"- {line}" for line in _legend(report)]
    return "\n".join(lines) + "\n"
