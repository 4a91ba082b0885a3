"""Running token totals turn by turn, for the trace with the most recorded prompt tokens: what
the HTML report's "tokens per turn" chart draws, kept as a comparison runs (a few numbers per
call of one trace), so a streamed comparison needs no trace to draw it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from costsim.model import CassettePath
from costsim.pricing.ledger import MeteredCall

__all__ = ["Series", "Turns", "largest", "turn_series"]

Series = tuple[tuple[float, ...], ...]
"""Four running totals (uncached input, cache read, cache write, output), one value per call."""


def turn_series(calls: Sequence[MeteredCall], path: Path) -> Series:
    """Running totals after each call of the trace at ``path``: uncached input, cache read,
    cache write, output tokens (a call with no usage adds nothing)."""
    running = [0.0, 0.0, 0.0, 0.0]
    rows: list[tuple[float, ...]] = []
    for item in calls:
        if item.call.provenance.path != path:
            continue
        usage = item.usage
        if usage is not None:
            for index, value in enumerate(
                (usage.uncached_input, usage.cache_read, usage.cache_write, usage.output)
            ):
                running[index] += value
        rows.append(tuple(running))
    return tuple(zip(*rows, strict=True)) if rows else ((), (), (), ())


@dataclass(slots=True)
class Turns:
    """One trace's running totals in every column (the baseline, then each variant)."""

    path: CassettePath
    prompt_tokens: int
    """The trace's recorded prompt tokens: which trace is drawn (the most; then by path)."""
    series: list[Series] = field(default_factory=list)

    def rank(self) -> tuple[int, str]:
        return (self.prompt_tokens, str(self.path))


def largest(a: Turns | None, b: Turns | None) -> Turns | None:
    """The trace a chart draws, of two candidates."""
    if a is None or b is None:
        return a or b
    return b if b.rank() > a.rank() else a
