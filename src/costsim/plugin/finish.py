"""The end of a ``pytest --costsim`` run: gates, baselines and report files.

Called from ``pytest_sessionfinish`` on the controller (or a plain run); an xdist worker only
hands its figures over.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from costsim.api.testing import (
    TestCost,
    compare_baselines,
    cost_change,
    load_baseline,
    parse_tolerances,
    save_baseline,
)
from costsim.errors import CostsimError
from costsim.plugin.collected import test_file
from costsim.plugin.run import Run, baseline_path
from costsim.plugin.session import CostsimSession
from costsim.render.text import display_path, money, plural

__all__ = ["finish"]

_NOT_SAVED = (
    pytest.ExitCode.INTERRUPTED,
    pytest.ExitCode.INTERNAL_ERROR,
    pytest.ExitCode.USAGE_ERROR,
    pytest.ExitCode.NO_TESTS_COLLECTED,
)


def _is_selected(test: str, selected: set[str]) -> bool:
    """Whether a baseline entry was part of this run: a collected test, or a fixture scope
    of a collected module (session fixtures whenever anything ran)."""
    if test in selected:
        return True
    if test == "<session fixtures>":
        return bool(selected)
    match = re.fullmatch(r"<\w+ fixtures: (.+)>", test)
    return match is not None and any(item.startswith(match.group(1)) for item in selected)


def _not_run(missing: list[str], silent: list[str], state: CostsimSession, name: str) -> list[str]:
    """Baseline tests this run did not run, told apart: gone from a file it collected whole
    (renamed or removed: named), deselected, or in files it did not collect."""
    others = [t for t in missing if t not in silent]
    gone = [
        t
        for t in others
        if test_file(t) in state.whole_files and t not in state.deselected and t[0] != "<"
    ]
    deselected = sum(1 for t in others if t in state.deselected)
    rest = len(others) - len(gone) - deselected
    notes = []
    if gone:
        listed = ", ".join(gone[:3]) + (f" and {len(gone) - 3} more" if len(gone) > 3 else "")
        notes.append(
            f"{len(gone)} test(s) of baseline {name} are no longer collected (renamed or "
            f"removed?): {listed}"
        )
    if deselected:
        notes.append(f"{deselected} test(s) of baseline {name} deselected this run")
    if rest:
        notes.append(f"{rest} test(s) of baseline {name} not collected this run")
    return notes


def _compare(run: Run, state: CostsimSession, name: str) -> list[str]:
    settings = run.settings
    old = load_baseline(baseline_path(run.root, name))
    tests = state.costs()
    result = compare_baselines(
        old,
        tests,
        parse_tolerances(run.option("fail")),
        overrides=state.tolerances,
        unpriced_fallback=settings.fallback() if settings is not None else None,
    )
    state.notes.extend(result.notes)
    state.notes.extend(f"improved: {line}" for line in result.improvements)
    if result.new_tests:  # a test that failed when the baseline was saved is not in it either
        named = ", ".join(result.new_tests[:5])
        more = len(result.new_tests) - 5
        named += f" and {more} more" if more > 0 else ""
        state.notes.append(f"not in baseline {name} (new, or not saved: it failed then): {named}")
    silent = [t for t in result.missing_tests if _is_selected(t, state.selected)]
    skipped = len(result.missing_tests) - len(silent)
    if silent:
        state.notes.append(
            f"{len(silent)} test(s) of baseline {name} made no LLM call this run (e.g. {silent[0]})"
        )
    if skipped:
        state.notes += _not_run(result.missing_tests, silent, state, name)
    new = set(result.new_tests)
    compared = sum(1 for test in tests if test not in new and not test.startswith("<"))
    over = f"{len(result.regressions)} regression(s)" if result.regressions else "no regression"
    state.notes.append(
        f"compared with baseline {name}: {compared} test(s) against {run.option('fail')}; {over}"
        + _change(old, tests)
    )
    return result.regressions


def _change(old: dict[str, TestCost], new: dict[str, TestCost]) -> str:
    """``; the tests in both cost $0.7317 -> $0.8398 (+14.8%)``: what a reviewer asks first.
    Where a call is unpriced, the tests priced in both, and how many were left out."""
    change = cost_change(old, new)
    left = f", {change.unpriced} left out (unpriced calls)" if change.unpriced else ""
    if not change.tests:
        return f"; no test in both is priced in both{left}" if change.unpriced else ""
    shift = f" ({change.change / change.before:+.1%})" if change.before else ""
    which = "the tests in both" if not change.unpriced else f"the {change.tests} priced in both"
    said = f"{which} cost {money(change.before)} -> {money(change.after)}{shift}"
    return f"; {said}{left}"


def _save(run: Run, state: CostsimSession, name: str) -> None:
    path = baseline_path(run.root, name)
    why = _not_saved(run, state)
    if why is not None:
        state.notes.append(f"baseline {name} not saved: {why}")
        return
    failed = set(run.failed)
    # a failed test's calls stop where it failed: its figures are not a baseline's (what
    # the baseline held for it before stays)
    tests = {test: cost for test, cost in state.costs().items() if test not in failed}
    kept: dict[str, TestCost] = {}
    again: dict[str, TestCost] = {}
    gone: list[str] = []
    if path.is_file():  # tests this run did not collect keep their figures
        previous = load_baseline(path)
        kept = {t: c for t, c in previous.items() if t not in tests}
        again = {t: c for t, c in kept.items() if t in failed}
        kept = {t: c for t, c in kept.items() if not _is_selected(t, state.selected)}
        # ... unless their file was collected whole without them: removed or renamed
        gone = [
            t
            for t in kept
            if test_file(t) in state.whole_files and t not in state.deselected and t[0] != "<"
        ]
        kept = {t: c for t, c in kept.items() if t not in gone}
    save_baseline(path, {**kept, **again, **tests})
    counts = f"{len(tests) + len(kept) + len(again)} test(s)"
    if kept:
        counts += f": {len(tests)} from this run, {len(kept)} kept from before (not run this time)"
    if gone:
        counts += f"; {len(gone)} dropped (no longer collected, e.g. {gone[0]})"
    left = sorted(failed & set(state.costs()))
    if left:
        before = f"; {len(again)} kept as before" if again else ""
        counts += (
            f"; {len(left)} that failed not taken (a failed test's calls stop where it "
            f"failed{before}; e.g. {left[0]})"
        )
    state.notes.append(
        f"baseline saved: {display_path(path)} ({counts}; compare with --costsim-compare {name})"
    )


def _not_saved(run: Run, state: CostsimSession) -> str | None:
    """Why a run's figures are not a baseline (None: they are)."""
    if run.collect_only:
        return "--collect-only runs no test"
    if run.exitstatus == pytest.ExitCode.INTERRUPTED:
        return "the run was interrupted"
    if run.stopped:
        return "the run stopped early (-x or --maxfail)"
    if run.exitstatus in _NOT_SAVED or not state.selected:
        return "no tests ran to completion"
    return None


def _report(run: Run, state: CostsimSession, failures: list[str]) -> None:
    reports = [Path(report) for report in dict.fromkeys(run.option("report") or [])]
    if not reports:  # (each file once, in the order given)
        return
    from costsim.plugin.report_file import write_report
    from costsim.plugin.unserved import unserved_note

    notes = list(state.notes)
    if run.unserved:  # the terminal names them below its figures; a report names them all
        note = unserved_note(len(run.unserved), "of this report")
        state.notes.append(f"{note}: {', '.join(run.unserved)}")
    written = []
    try:
        for report in reports:
            write_report(
                report, state, failures, strategies=run.option("strategies"), unserved=run.unserved
            )
            written.append(f"report written: {display_path(report)}")
    finally:  # the reports written, said in the terminal, not in each other
        state.notes[:] = [*notes, *written]


def finish(run: Run, state: CostsimSession) -> list[str]:
    """Gates, baselines and reports of the whole run: the failures of the costsim part."""
    failures = [f"costsim: {error}" for error in state.usage_errors]
    failures += state.failures()
    compare = run.option("compare")
    if compare:
        failures += _compare(run, state, compare)
    if state.errors and not run.option("lenient"):
        failures.append(
            f"costsim: {plural(len(state.errors), 'LLM call')} could not be metered "
            "(listed above); "
            "fix the cassettes or pass --costsim-lenient"
        )
    drifted = state.drifted() if state.drift == "fail" else []
    if drifted:
        failures.append(
            f"costsim: {plural(len(drifted), 'replayed call')} drifted from their recording "
            "(drift mode "
            "'fail'); re-record the cassettes or fix the requests"
        )
    save = run.option("save")
    if save:
        _attempt(failures, functools.partial(_save, run, state, save))
    _attempt(failures, functools.partial(_report, run, state, failures))
    return failures


def _attempt(failures: list[str], write: Callable[[], None]) -> None:
    """A file that cannot be written is one failure; the others still stand."""
    try:
        write()
    except CostsimError as exc:
        failures.append(f"costsim: {exc}")


def failure_report(message: str) -> pytest.TestReport:
    """A failure of the costsim part as the report object other plugins expect in stats."""
    return pytest.TestReport(
        nodeid="costsim",
        location=("costsim", None, "costsim"),
        keywords={},
        outcome="failed",
        longrepr=message,
        when="call",
    )
