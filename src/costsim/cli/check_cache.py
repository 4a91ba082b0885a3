"""``costsim check-cache``: does the cache simulator reproduce what recordings billed?"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
from tabulate import tabulate

from costsim.analysis.cache_fidelity import FidelityReport, check_cache
from costsim.cli._common import (
    emit,
    handle_errors,
    lenient_option,
    load,
    output_option,
    paths_argument,
)
from costsim.render.report import display_path

FORMAT_VERSION = 1


def _json(report: FidelityReport) -> str:
    document: dict[str, Any] = {
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
    return json.dumps(document, indent=2) + "\n"


def _table(report: FidelityReport) -> str:
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
    if report.mismatches:
        rows = [
            [
                f"{display_path(m.provenance.path)}#{m.provenance.index}",
                m.model,
                f"{m.recorded_read:,} / {m.recorded_write:,}",
                f"{m.predicted_read:,} / {m.predicted_write:,}",
                m.reason,
            ]
            for m in report.mismatches
        ]
        lines += [
            "",
            tabulate(
                rows, headers=["call", "model", "recorded r/w", "predicted r/w", "likely reason"]
            ),
        ]
    return "\n".join(lines) + "\n"


@click.command("check-cache")
@paths_argument
@click.option(
    "--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True
)
@lenient_option
@output_option
@handle_errors
def check_cache_command(
    paths: tuple[Path, ...], fmt: str, lenient: bool, output: Path | None
) -> None:
    """Simulate recorded traces that used caching and compare with what they billed."""
    report = check_cache(load(paths, lenient=lenient))
    emit(_json(report) if fmt == "json" else _table(report), output)
