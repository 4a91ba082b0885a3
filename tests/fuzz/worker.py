"""A fuzz worker: reads ``mutant-path<TAB>source-path<TAB>commands`` lines on stdin and writes one
JSON outcome per line. Run by benchmarks/fuzz_cassettes.py, which restarts it when it dies
(a crash) or stops answering (a hang)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.fuzz.check import baseline_totals, check_mutant


def main() -> None:
    baselines: dict[str, tuple[int, ...]] = {}
    for line in sys.stdin:
        mutant, source, commands = line.rstrip("\n").split("\t")
        if source not in baselines:
            baselines[source] = baseline_totals(Path(source))
        outcome = check_mutant(Path(mutant), baselines[source], tuple(commands.split(",")))
        record = {
            "status": outcome.status,
            "command": outcome.command,
            "detail": outcome.detail,
            "flagged": outcome.flagged,
            "changed": outcome.changed,
        }
        sys.stdout.write(json.dumps(record) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
