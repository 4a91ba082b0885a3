"""Refit the calibration defaults shipped with costsim from the real-cassette corpus.

    python scripts/fit_calibration_defaults.py [CORPUS]

Writes src/costsim/metering/calibration_defaults.json (deterministic: same corpus, same file):
per family the coefficients fitted on the whole corpus and their leave-one-source-out errors,
and per API flavour x content class the leave-one-source-out errors the meter's per-call
error estimates use. The source of a cassette is its first folder under CORPUS (the project it
came from), so the figures say how the estimator does on a project it was not fitted on.
Families with fewer than MIN_DEFAULT_CALLS usable calls are left out; they fall back to
the provider rules alone.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from costsim.analysis.report import load_traces
from costsim.io.files import write_atomic
from costsim.metering.evaluate import calibrate, first_folder
from costsim.render.calibration import cell_json

ROOT = Path(__file__).resolve().parents[1]
TARGET = ROOT / "src" / "costsim" / "metering" / "calibration_defaults.json"
MIN_DEFAULT_CALLS = 8


def main(corpus: Path) -> None:
    corpus = corpus.resolve()
    traces, _ = load_traces([corpus])
    report = calibrate(traces, group=first_folder(corpus), defaults=False)
    families = {}
    for family in report.families:
        if family.calls < MIN_DEFAULT_CALLS or family.coefficients.source != "fitted":
            continue
        families[family.family] = {
            "calls": family.calls,
            "cassettes": family.cassettes,
            "coefficients": family.coefficients.as_dict(),
            "calibrated_median_ape": round(family.calibrated_median_ape or 0.0, 2),
            "calibrated_p90_ape": round(family.calibrated_p90_ape or 0.0, 2),
        }
    errors = {}
    for cell in report.cells:
        entry = cell_json(cell)
        errors[f"{cell.flavour}/{cell.klass}"] = {
            "calls": entry["calls"],
            "median_ape": entry["calibrated_median_ape"],
            "p90_ape": entry["calibrated_p90_ape"],
            "increment_pairs": entry["increment_pairs"],
            "increment_median_error_pct": entry["increment_median_error_pct"],
            "increment_p90_error_pct": entry["increment_p90_error_pct"],
        }
    document = {
        "format_version": 2,
        "fitted_on": f"../shared/corpus ({len(traces)} real cassettes, {len(report.sources)} "
        "sources)",
        "errors_method": "leave-one-source-out: each source predicted by a fit on the others",
        "families": families,
        "errors": errors,
    }
    write_atomic(TARGET, json.dumps(document, indent=2) + "\n")
    print(
        f"wrote {len(families)} families, {len(errors)} error cells to {TARGET.relative_to(ROOT)}"
    )


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT.parent / "shared" / "corpus")
