"""Leave-one-source-out table of the token estimator on a folder of cassettes.

    python benchmarks/bench_calibration.py [FOLDER] [--shipped]

FOLDER defaults to ../shared/corpus; a cassette's source is its first folder under FOLDER
(the project it came from). Prints, per API flavour and content class, the prompt-total and
per-turn increment errors of coefficients fitted without the call's source, beside
leave-one-cassette-out, and how long loading and validation took. ``--shipped`` evaluates the
coefficients shipped with costsim instead of refitting.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from costsim.analysis.report import load_traces
from costsim.metering.evaluate import calibrate, first_folder
from costsim.render.calibration import calibration_table

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str]) -> None:
    shipped = "--shipped" in argv
    folders = [a for a in argv if not a.startswith("--")]
    folder = (Path(folders[0]) if folders else ROOT.parent / "shared" / "corpus").resolve()
    started = time.perf_counter()
    traces, skipped = load_traces([folder], lenient=True)
    loaded = time.perf_counter()
    report = calibrate(traces, group=first_folder(folder), shipped=shipped, defaults=False)
    measured = time.perf_counter()
    print(calibration_table(report, width=100), end="")
    print(
        f"\n{len(traces)} cassettes ({len(skipped)} unreadable) from {folder}: "
        f"load {loaded - started:.1f} s, validation {measured - loaded:.1f} s"
    )


if __name__ == "__main__":
    main(sys.argv[1:])
