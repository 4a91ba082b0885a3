"""Tests whose requests vcrpy had no recorded response for: what they would have called is in
no figure of the summary, so the summary says which tests they are.

vcrpy refuses such a request with ``CannotOverwriteExistingCassetteException`` (a missing
cassette under ``record_mode="none"``, or a request that matches none of the cassette's); the
test fails or errors with it, and its report (on the xdist controller too) names it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from costsim.plugin.ids import cut_test_ids
from costsim.plugin.run import SummaryOptions, wrap
from costsim.render.cuts import ELLIPSIS, extra_bytes
from costsim.render.visible import visible

__all__ = ["SHOWN", "failed_in", "unserved_in", "unserved_lines", "unserved_note", "unserved_tests"]

REFUSAL = "CannotOverwriteExistingCassetteException"
SHOWN = 3
"""Tests named without -v."""


def unserved_tests(stats: Mapping[str, Iterable[Any]]) -> list[str]:
    """The ids of the tests that failed or errored on a request vcrpy could not serve, in the
    order they were reported (each once)."""
    found: dict[str, None] = {}
    for outcome in ("failed", "error"):
        for report in stats.get(outcome, ()):
            nodeid = getattr(report, "nodeid", None)
            if nodeid and REFUSAL in _text(report):
                found[nodeid] = None
    return list(found)


def _stats(config: Any) -> Mapping[str, Iterable[Any]]:
    """The reports of the run by outcome, as its terminal reporter keeps them (none without
    one: ``-p no:terminal``)."""
    return getattr(config.pluginmanager.get_plugin("terminalreporter"), "stats", None) or {}


def unserved_in(config: Any) -> tuple[str, ...]:
    """:func:`unserved_tests` of the run."""
    return tuple(unserved_tests(_stats(config)))


def failed_in(config: Any) -> tuple[str, ...]:
    """The tests that failed or errored before their end, in setup or in the test itself:
    their calls stop where they failed (a teardown's error comes after every call)."""
    stats = _stats(config)
    found = {
        report.nodeid: None
        for outcome in ("failed", "error")
        for report in stats.get(outcome, ())
        if getattr(report, "nodeid", None) not in (None, "", "costsim")
        and getattr(report, "when", "call") in ("setup", "call")
    }
    return tuple(found)


def unserved_note(count: int, where: str = "above") -> str:
    """What the tests whose requests vcrpy could not serve mean for the figures."""
    tests = f"{count:,} test{'' if count == 1 else 's'}"
    return (
        f"not replayed: {tests} failed on a request its cassette has no recorded response "
        f"for ({REFUSAL}: a missing cassette, or a request that matches none of its "
        f"interactions); those calls are in no figure {where}"
    )


def _text(report: Any) -> str:
    try:
        return str(getattr(report, "longreprtext", "") or "")
    except Exception:  # another plugin's report object: not ours to fail on
        return ""


def unserved_lines(stats: Mapping[str, Iterable[Any]], options: SummaryOptions) -> list[str]:
    """One note naming the tests (the first few without -v), or nothing."""
    tests = unserved_tests(stats)
    if not tests:
        return []
    shown = tests if options.verbose > 0 else tests[:SHOWN]
    lines = wrap(unserved_note(len(tests)), options.width)
    room = options.width - 2 - extra_bytes(ELLIPSIS)  # an ellipsis takes three bytes
    lines += [f"  {test}" for test in cut_test_ids([visible(test) for test in shown], room)]
    if len(tests) > len(shown):
        lines.append(f"  and {len(tests) - len(shown)} more (-v)")
    return lines
