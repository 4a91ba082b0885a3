"""``baseline compare`` as text and JSON: regressions, improvements, new and gone tests."""

from __future__ import annotations

from typing import Any

from costsim.analysis.baseline import Comparison

__all__ = ["baseline_document", "baseline_table"]

FORMAT_VERSION = 1


def baseline_table(result: Comparison) -> str:
    lines = [f"regression: {line}" for line in result.regressions]
    lines += [f"improved: {line}" for line in result.improvements]
    lines += [f"note: {line}" for line in result.notes]
    lines += [f"new test: {test}" for test in result.new_tests]
    lines += [f"gone: {test}" for test in result.missing_tests]
    verdict = (
        f"{len(result.regressions)} regression(s) beyond tolerance"
        if result.regressions
        else "no regression beyond tolerance"
    )
    return "\n".join([verdict, *lines]) + "\n"


def baseline_document(result: Comparison) -> dict[str, Any]:
    return {
        "format_version": FORMAT_VERSION,
        "kind": "costsim.baseline-comparison",
        "regressions": result.regressions,
        "improvements": result.improvements,
        "notes": result.notes,
        "new_tests": result.new_tests,
        "missing_tests": result.missing_tests,
    }
