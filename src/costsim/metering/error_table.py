"""Expected errors of the estimator, per API flavour and content class.

The numbers come from validation on recordings the coefficients were not fitted on
(leave-one-source-out): shipped with costsim for the corpus it was fitted on, and replaced by
the figures measured on the user's own traces when those span two or more sources. A cell
with fewer than :data:`MIN_SUPPORT` calls (or increment pairs) falls back to its flavour's
pooled figure, and a flavour never measured to :data:`UNMEASURED`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from costsim.metering.calibration import default_document
from costsim.metering.evaluate import Cell

__all__ = [
    "MIN_SUPPORT",
    "OUTPUT_ERRORS",
    "UNMEASURED",
    "ErrorTable",
    "RelativeError",
    "TokenBand",
    "output_error",
]

MIN_SUPPORT = 5


@dataclass(frozen=True, slots=True)
class RelativeError:
    """Expected absolute error of an estimate, in percent of the estimated quantity.

    ``median`` and ``p90`` are the held-out median and 90th percentile of
    ``|estimate - recorded| / recorded`` over ``calls`` validation calls (or increment pairs)
    of API ``flavour`` and content ``klass``; ``basis`` says where they were measured.
    """

    median: float
    p90: float
    calls: int
    flavour: str
    klass: str
    basis: str

    def tokens(self, total: float) -> tuple[float, float]:
        """The error in tokens on an estimate of ``total`` tokens: (median, p90)."""
        return abs(total) * self.median / 100, abs(total) * self.p90 / 100


@dataclass(frozen=True, slots=True)
class TokenBand:
    """An estimated change of a prompt total, with its expected error in tokens.

    ``delta`` is transformed minus original (negative: a saving); ``median`` and ``p90`` are
    half-widths in tokens; the p90 band is ``[low, high]``.
    """

    delta: float
    median: float
    p90: float
    klass: str = "text"
    """The content class of what changed (:func:`~costsim.metering.classes.delta_class`),
    whose tables gave the error."""

    @property
    def low(self) -> float:
        return self.delta - self.p90

    @property
    def high(self) -> float:
        return self.delta + self.p90


UNMEASURED = RelativeError(
    100.0, 100.0, 0, "", "", "never measured: assume the estimate is off by its size"
)

Cells = dict[tuple[str, str], RelativeError]


def _entry(
    figures: dict[str, Any], flavour: str, klass: str, basis: str, increment: bool
) -> RelativeError | None:
    prefix = "increment_" if increment else ""
    calls = int(figures.get("increment_pairs" if increment else "calls", 0))
    median = figures.get(f"{prefix}median_error_pct" if increment else "median_ape")
    p90 = figures.get(f"{prefix}p90_error_pct" if increment else "p90_ape")
    if median is None or p90 is None:
        return None
    return RelativeError(float(median), float(p90), calls, flavour, klass, basis)


@dataclass(frozen=True, slots=True)
class ErrorTable:
    totals: Cells
    increments: Cells

    @classmethod
    def shipped(cls) -> ErrorTable:
        document = default_document()
        basis = f"shipped: leave-one-source-out on {document.get('fitted_on', 'the corpus')}"
        totals: Cells = {}
        increments: Cells = {}
        for name, figures in document.get("errors", {}).items():
            flavour, klass = name.split("/", 1)
            for table, increment in ((totals, False), (increments, True)):
                entry = _entry(figures, flavour, klass, basis, increment)
                if entry is not None:
                    table[(flavour, klass)] = entry
        return cls(totals, increments)

    def updated(self, cells: Iterable[Cell]) -> ErrorTable:
        """This table with the cells measured on the traces at hand where they have support."""
        totals, increments = dict(self.totals), dict(self.increments)
        basis = "measured on these traces, leave-one-source-out"
        for cell in cells:
            key = (cell.flavour, cell.klass)
            if (
                cell.calls >= MIN_SUPPORT
                and cell.median_ape is not None
                and cell.p90_ape is not None
            ):
                totals[key] = RelativeError(cell.median_ape, cell.p90_ape, cell.calls, *key, basis)
            median, p90 = cell.increment_median_error_pct, cell.increment_p90_error_pct
            if cell.increment_pairs >= MIN_SUPPORT and median is not None and p90 is not None:
                increments[key] = RelativeError(median, p90, cell.increment_pairs, *key, basis)
        return ErrorTable(totals, increments)

    @staticmethod
    def _find(table: Cells, flavour: str, klass: str) -> RelativeError | None:
        for key in ((flavour, klass), (flavour, "all")):
            entry = table.get(key)
            if entry is not None and entry.calls >= MIN_SUPPORT:
                return entry
        return None

    def total(self, flavour: str, klass: str) -> RelativeError:
        """Expected error of a prompt-total estimate."""
        found = self._find(self.totals, flavour, klass)
        return found or replace(UNMEASURED, flavour=flavour, klass=klass)

    def increment(self, flavour: str, klass: str) -> RelativeError:
        """Expected error of an estimated change, relative to the change."""
        return self._find(self.increments, flavour, klass) or self.total(flavour, klass)


OUTPUT_ERRORS: dict[tuple[str, bool], RelativeError] = {
    (flavour, thinks): RelativeError(median, p90, calls, flavour, "thinking" if thinks else "all",
                                     "shipped: estimate_output vs recorded output on the corpus")
    for flavour, thinks, median, p90, calls in (
        ("anthropic-messages", False, 46.2, 81.1, 326),
        ("anthropic-messages", True, 21.4, 2853.8, 40),
        ("openai-chat", False, 0.0, 50.0, 989),
        ("openai-chat", True, 88.6, 98.3, 62),
        ("openai-responses", False, 20.0, 80.0, 185),
        ("openai-responses", True, 90.9, 250.8, 128),
    )
}  # fmt: skip
"""Expected error of an output estimated from the recorded response text (a call without
usage), per API flavour and whether the response thinks; measured on the real-cassette corpus
(``benchmarks/bench_bands.py`` prints the figures). Thinking is often summarised or redacted,
so its visible text says little about what was billed."""


def output_error(
    flavour: str, thinks: bool, table: dict[tuple[str, bool], RelativeError] | None = None
) -> RelativeError:
    """Expected error of an output estimate (the flavour's plain figure when the thinking one
    was never measured; :data:`UNMEASURED` for a flavour never measured)."""
    cells = OUTPUT_ERRORS if table is None else table
    return (
        cells.get((flavour, thinks))
        or cells.get((flavour, False))
        or replace(UNMEASURED, flavour=flavour)
    )
