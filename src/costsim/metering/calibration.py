"""Calibration: recorded prompt totals fitted from offline counts plus structure terms.

Per family (see :func:`costsim.metering.models.family`) a linear model

    prompt ≈ a·raw + b·messages + c·tool_round_trips + d·thinking + e·output_schema
             + f·has_tools + g

is fitted by least squares on *relative* error (weights 1/y²): the corpus is full of tiny
prompts where an absolute fit would overshoot. The normal equations are sums over calls, so a
leave-one-cassette-out fit is the full sums minus one cassette's: every cassette is predicted
by a model that never saw it, at the cost of one small solve each.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any, Literal

from costsim.errors import DataError
from costsim.metering.serialise import Features

__all__ = [
    "FEATURE_NAMES",
    "Coefficients",
    "NormalEquations",
    "default_coefficients",
    "fit",
    "vector",
]

FEATURE_NAMES = (
    "raw",
    "messages",
    "tool_round_trips",
    "thinking",
    "output_schema",
    "forced_tool",
    "tools",
    "intercept",
)
Vector = tuple[float, ...]
Source = Literal["fitted", "default", "recipe", "uncalibrated"]


def vector(features: Features) -> Vector:
    return (
        float(features.raw),
        float(features.messages),
        float(features.tool_round_trips),
        float(features.thinking),
        float(features.output_schema),
        float(features.forced_tool),
        float(features.tools),
        1.0,
    )


@dataclass(frozen=True, slots=True)
class Coefficients:
    family: str
    values: Vector
    source: Source
    calls: int = 0

    def predict(self, features: Features) -> float:
        return sum(c * x for c, x in zip(self.values, vector(features), strict=True))

    @property
    def intercept(self) -> float:
        return self.values[FEATURE_NAMES.index("intercept")]

    def as_dict(self) -> dict[str, float]:
        return {
            name: round(value, 6) for name, value in zip(FEATURE_NAMES, self.values, strict=True)
        }


IDENTITY = (1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)


@dataclass(slots=True)
class NormalEquations:
    """Σ w·x·xᵀ and Σ w·x·y over calls, with w = 1/y² (a fit to relative error)."""

    size: int = len(FEATURE_NAMES)
    ata: list[list[float]] = field(default_factory=list)
    atb: list[float] = field(default_factory=list)
    calls: int = 0

    def __post_init__(self) -> None:
        if not self.ata:
            self.ata = [[0.0] * self.size for _ in range(self.size)]
            self.atb = [0.0] * self.size

    def add(self, x: Vector, y: float) -> None:
        w = 1.0 / (y * y)
        for i in range(self.size):
            wx = w * x[i]
            self.atb[i] += wx * y
            row = self.ata[i]
            for j in range(self.size):
                row[j] += wx * x[j]
        self.calls += 1

    def minus(self, other: NormalEquations) -> NormalEquations:
        return NormalEquations(
            size=self.size,
            ata=[
                [a - b for a, b in zip(r1, r2, strict=True)]
                for r1, r2 in zip(self.ata, other.ata, strict=True)
            ],
            atb=[a - b for a, b in zip(self.atb, other.atb, strict=True)],
            calls=self.calls - other.calls,
        )

    def solve(self, prior: Vector = IDENTITY, ridge: float = 1e-4) -> Vector:
        """Least squares, shrunk slightly towards ``prior`` so unused terms stay at it."""
        n = self.size
        matrix = [row[:] for row in self.ata]
        rhs = self.atb[:]
        scale = max((matrix[i][i] for i in range(n)), default=1.0) or 1.0
        for i in range(n):
            penalty = ridge * (matrix[i][i] or scale * 1e-6) + 1e-12
            matrix[i][i] += penalty
            rhs[i] += penalty * prior[i]
        return _gauss(matrix, rhs)


def _gauss(matrix: list[list[float]], rhs: list[float]) -> Vector:
    n = len(rhs)
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(matrix[r][col]))
        if abs(matrix[pivot][col]) < 1e-300:
            raise DataError("calibration system is singular")
        matrix[col], matrix[pivot] = matrix[pivot], matrix[col]
        rhs[col], rhs[pivot] = rhs[pivot], rhs[col]
        for row in range(col + 1, n):
            factor = matrix[row][col] / matrix[col][col]
            if factor:
                for k in range(col, n):
                    matrix[row][k] -= factor * matrix[col][k]
                rhs[row] -= factor * rhs[col]
    solution = [0.0] * n
    for row in range(n - 1, -1, -1):
        acc = rhs[row] - sum(matrix[row][k] * solution[k] for k in range(row + 1, n))
        solution[row] = acc / matrix[row][row]
    return tuple(solution)


def fit(
    family: str, samples: Iterable[tuple[Features, int]], *, prior: Vector = IDENTITY
) -> Coefficients:
    equations = NormalEquations()
    for features, recorded in samples:
        if recorded > 0:
            equations.add(vector(features), float(recorded))
    return Coefficients(family, equations.solve(prior), "fitted", equations.calls)


@cache
def _default_document() -> dict[str, Any]:
    try:
        text = resources.files("costsim.metering").joinpath("calibration_defaults.json").read_text()
        document: dict[str, Any] = json.loads(text)
    except (OSError, ValueError) as exc:
        raise DataError(f"costsim's shipped calibration defaults are unreadable ({exc})") from None
    return document


def default_p90_ape(family: str) -> float | None:
    """Held-out p90 error of the shipped defaults for a family, as measured on the corpus."""
    families = _default_document()["families"]
    entry = families.get(family) or families.get(family.removesuffix("+tools"))
    return float(entry["calibrated_p90_ape"]) if entry else None


@cache
def _defaults() -> dict[str, Coefficients]:
    document = _default_document()
    result: dict[str, Coefficients] = {}
    for family, entry in document["families"].items():
        values = tuple(float(entry["coefficients"][name]) for name in FEATURE_NAMES)
        result[family] = Coefficients(family, values, "default", int(entry.get("calls", 0)))
    return result


def default_coefficients(family: str) -> Coefficients:
    """Coefficients shipped with costsim (fitted on the corpus) for a family, or identity."""
    defaults = _defaults()
    if family in defaults:
        return defaults[family]
    base = family.removesuffix("+tools")
    if base in defaults:
        return Coefficients(family, defaults[base].values, "default", 0)
    return Coefficients(family, IDENTITY, "uncalibrated")


def median(values: Sequence[float]) -> float | None:
    return percentile(values, 50)


def percentile(values: Sequence[float], pct: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    rank = (len(ordered) - 1) * pct / 100
    low = int(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)
