"""Refit the calibration defaults shipped with costsim from the real-cassette corpus.

    python scripts/fit_calibration_defaults.py [CORPUS]

Writes src/costsim/metering/calibration_defaults.json (deterministic: same corpus, same file).
Families with fewer than MIN_DEFAULT_CALLS usable calls are left out; they fall back to the
family without "+tools", or to uncalibrated counts.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from costsim.metering.evaluate import calibrate
from costsim.render import write_atomic
from costsim.report import load_traces

ROOT = Path(__file__).resolve().parents[1]
TARGET = ROOT / "src" / "costsim" / "metering" / "calibration_defaults.json"
MIN_DEFAULT_CALLS = 8


def main(corpus: Path) -> None:
    traces, _ = load_traces([corpus])
    families = {}
    for report in calibrate(traces):
        if report.calls < MIN_DEFAULT_CALLS:
            continue
        families[report.family] = {
            "calls": report.calls,
            "cassettes": report.cassettes,
            "coefficients": report.coefficients.as_dict(),
            "calibrated_median_ape": round(report.calibrated_median_ape or 0.0, 2),
            "calibrated_p90_ape": round(report.calibrated_p90_ape or 0.0, 2),
        }
    document = {
        "format_version": 1,
        "fitted_on": "../shared/corpus (902 real cassettes), leave-one-cassette-out errors",
        "families": families,
    }
    write_atomic(TARGET, json.dumps(document, indent=2) + "\n")
    print(f"wrote {len(families)} families to {TARGET.relative_to(ROOT)}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT.parent / "shared" / "corpus")
