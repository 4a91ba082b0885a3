"""The drifted calls of a run as the summary says them: one line per call with ``-v`` and in
the report files; otherwise calls that differ alike in one line (one change to a system
prompt drifts every call that sends it), the first :data:`SHOWN_DRIFT` of them."""

from __future__ import annotations

from costsim.plugin.run import SummaryOptions, wrap
from costsim.plugin.session import CostsimSession, DriftEntry
from costsim.render.text import plural

__all__ = ["SHOWN_DRIFT", "drift_lines"]

SHOWN_DRIFT = 10
"""Drifted calls (or groups of calls that differ alike) listed on the terminal without ``-v``."""


def _what(entry: DriftEntry) -> str:
    """What differs in a drifted call's request (``system changed (+2,560 chars)``)."""
    return "; ".join(str(d) for d in entry.differences)


def _drift_lines(entry: DriftEntry, width: int, markdown: bool) -> list[str]:
    """``test (cassette #i) prompt +N tok: what differs``, wrapped (a test id is cut only
    where it is longer than a line)."""
    effect = "" if entry.prompt_delta is None else f" prompt {entry.prompt_delta:+,} tok"
    line = f"  {entry.test} ({entry.cassette} #{entry.index}){effect}: {_what(entry)}"
    return [line] if markdown else wrap(line, width, indent="      ")


def drift_lines(state: CostsimSession, options: SummaryOptions) -> list[str]:
    entries = state.drifted()
    if not entries:
        return []
    lines = [
        f"drifted: {plural(len(entries), 'call')} sent a request that differs from the recording; "
        "metered as sent: the recorded tokens moved by an estimate of the change, so they "
        "count as estimated in report files (--costsim-drift=ignore meters the recordings)"
    ]
    if options.verbose > 0 or options.markdown:  # every call, on its own line
        for entry in entries:
            lines += _drift_lines(entry, options.width, options.markdown)
        return lines
    groups = _alike(entries)  # one change made to many calls reads as one line
    for group in groups[:SHOWN_DRIFT]:
        lines += _drift_group(group, options.width)
    hidden = sum(len(group) for group in groups[SHOWN_DRIFT:])
    if hidden:
        lines.append(f"  and {hidden} more (-v, or --costsim-report)")
    return lines


def _alike(entries: list[DriftEntry]) -> list[list[DriftEntry]]:
    """Drifted calls grouped by what differs, in the order each first drifted."""
    groups: dict[str, list[DriftEntry]] = {}
    for entry in entries:
        groups.setdefault(_what(entry), []).append(entry)
    return list(groups.values())


def _drift_group(group: list[DriftEntry], width: int) -> list[str]:
    """One call as :func:`_drift_lines` says it; several alike as ``what differs: N calls in
    M tests, prompt +604 tok each (e.g. test (cassette #i))``."""
    if len(group) == 1:
        return _drift_lines(group[0], width, markdown=False)
    first = group[0]
    deltas = sorted({e.prompt_delta for e in group if e.prompt_delta is not None})
    effect = ""
    if deltas:
        span = f"{deltas[0]:+,}" if len(deltas) == 1 else f"{deltas[0]:+,} to {deltas[-1]:+,}"
        effect = f", prompt {span} tok each"
    tests = len({e.test for e in group})
    example = f"{first.test} ({first.cassette} #{first.index})"
    line = (
        f"  {_what(first)}: {len(group)} calls in {plural(tests, 'test')}{effect} (e.g. {example})"
    )
    return wrap(line, width, indent="      ")
