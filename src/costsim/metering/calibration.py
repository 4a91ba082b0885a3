"""Calibration: what provider rules leave of a recorded prompt total, fitted per family.

The estimate of a request's prompt total is

    prompt ≈ fixed + a·raw + b·messages + c·tool_round_trips + d·thinking + e·output_schema
             + f·forced_tool + g·tools + h·has_tools + i + j·reasoning_items
             + k·reasoning_chars

where ``fixed`` are the tokens documented provider rules give (images, PDF pages, Anthropic's
tool-use system prompt) and ``raw`` the offline tokenizer count of the serialised request. Only
the terms a family's tokenizer leaves open are fitted (:data:`FREE_TERMS`): on Anthropic, whose
tokenizer is not public, all of them (``a`` scales cl100k to Claude's tokenizer); on OpenAI,
whose tokenizer *is* the count, ``a`` stays 1 and only tool round trips, the presence of
tools and the reasoning items passed back (whose text is encrypted: ``j`` per item and ``k``
per encrypted character) are fitted, what the rules leave open.

A saved calibration is read only when its coefficients are ones a fit can make
(:func:`coefficient_problem`): finite, one per feature, and each within what its feature
means (:data:`BOUNDS`). ``raw`` scales one tokenizer's count of a text to another's: every
token holds at least one character and cl100k's about four, so no tokenizer counts more than
:data:`RAW_SCALE` times cl100k's tokens, nor fewer than its inverse. ``reasoning_chars`` is
tokens per encrypted character: the reasoning those characters encrypt holds at least one
per token, and encrypting never shrinks it, so at most 1 either way. Every other term is
tokens a provider adds per message, tool, round trip, block, item or request beyond what is
sent, which no provider documents above its largest overhead for a whole request
(:data:`~costsim.metering.models.LARGEST_REQUEST_OVERHEAD`, 804 tokens): the shipped
coefficients stay below 150, fits on corpus samples of a few dozen cassettes below 450.

The fit is least squares on *relative* error (weights 1/y²): the corpus is full of tiny
prompts where an absolute fit would overshoot. The normal equations are sums over calls, so a
leave-one-group-out fit (one cassette, or one source project) is the full sums minus the
group's: every call is predicted by a model that never saw its group.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache, lru_cache
from importlib import resources
from typing import Any, Literal

from costsim.errors import DataError
from costsim.metering.models import LARGEST_REQUEST_OVERHEAD
from costsim.metering.serialise import Features

__all__ = [
    "BOUNDS",
    "FEATURE_NAMES",
    "FREE_TERMS",
    "IDENTITY",
    "RAW_SCALE",
    "Coefficients",
    "NormalEquations",
    "coefficient_problem",
    "default_coefficients",
    "default_document",
    "fit",
    "free_terms",
    "median",
    "percentile",
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
    "has_tools",
    "intercept",
    "reasoning_items",
    "reasoning_chars",
)
Vector = tuple[float, ...]
Source = Literal["fitted", "default", "recipe", "uncalibrated"]

IDENTITY: Vector = (1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
"""The provider rules alone: raw count plus fixed tokens."""

_ALL = tuple(range(len(FEATURE_NAMES)))
FREE_TERMS: dict[str, tuple[int, ...]] = {
    "anthropic": _ALL,
    "openai": tuple(
        FEATURE_NAMES.index(name)
        for name in ("tool_round_trips", "has_tools", "reasoning_items", "reasoning_chars")
    ),
}
"""Fitted terms per provider; the others stay at :data:`IDENTITY`."""


RAW_SCALE = 4.0
"""Most tokens a tokenizer counts per cl100k token (cl100k's hold about four characters)."""

_PER_UNIT = float(LARGEST_REQUEST_OVERHEAD)
BOUNDS: dict[str, tuple[float, float]] = {
    name: (-_PER_UNIT, _PER_UNIT) for name in FEATURE_NAMES
} | {"raw": (1 / RAW_SCALE, RAW_SCALE), "reasoning_chars": (-1.0, 1.0)}
"""The range of each coefficient a fit can make, by what its feature means (see above)."""


def coefficient_problem(values: Sequence[float], *, ranged: bool = True) -> str | None:
    """Why ``values`` are not coefficients a fit makes, in words; None when they are.
    ``ranged``: check each against its :data:`BOUNDS` too (not only finite, one per feature)."""
    if len(values) != len(FEATURE_NAMES):
        count = f"{len(values)} coefficient{'s' * (len(values) != 1)}"
        return f"{count}, not one per feature ({len(FEATURE_NAMES)}: {', '.join(FEATURE_NAMES)})"
    for name, value in zip(FEATURE_NAMES, values, strict=True):
        low, high = BOUNDS[name]
        if not math.isfinite(value):
            return f"its {name} coefficient is {value}, not a number"
        if ranged and not low <= value <= high:
            return (
                f"its {name} coefficient {value:.6g} is outside {low:g} to {high:g}, "
                "the range its feature allows"
            )
    return None


def free_terms(family: str) -> tuple[int, ...]:
    return FREE_TERMS["anthropic" if family.startswith("claude") else "openai"]


def vector(features: Features) -> Vector:
    return (
        float(features.raw),
        float(features.messages),
        float(features.tool_round_trips),
        float(features.thinking),
        float(features.output_schema),
        float(features.forced_tool),
        float(features.tools),
        float(features.tools > 0),
        1.0,
        float(features.reasoning_items),
        float(features.reasoning_chars),
    )


@lru_cache(maxsize=1 << 14)
def _predicted(values: Vector, features: Features) -> float:
    """Once per coefficients and features: a request most variants leave alone is estimated
    for each of them."""
    linear = sum(c * x for c, x in zip(values, vector(features), strict=True))
    return features.fixed + linear


@dataclass(frozen=True, slots=True)
class Coefficients:
    family: str
    values: Vector
    source: Source
    calls: int = 0

    def predict(self, features: Features) -> float:
        """Estimated prompt total: rule tokens plus the fitted linear part."""
        return _predicted(self.values, features)

    @property
    def intercept(self) -> float:
        return self.values[FEATURE_NAMES.index("intercept")]

    def as_dict(self) -> dict[str, float]:
        return {
            name: round(value, 6) for name, value in zip(FEATURE_NAMES, self.values, strict=True)
        }


@dataclass(slots=True)
class NormalEquations:
    """Σ w·x·xᵀ and Σ w·x·t over calls for the free terms, with w = 1/y² (a fit to relative
    error) and t the recorded total less rule tokens and pinned terms."""

    free: tuple[int, ...] = _ALL
    ata: list[list[float]] = field(default_factory=list)
    atb: list[float] = field(default_factory=list)
    calls: int = 0

    def __post_init__(self) -> None:
        if not self.ata:
            self.ata = [[0.0] * len(self.free) for _ in self.free]
            self.atb = [0.0] * len(self.free)

    def add(self, features: Features, recorded: float) -> None:
        x = vector(features)
        pinned = sum(IDENTITY[i] * x[i] for i in _ALL if i not in self.free)
        target = recorded - features.fixed - pinned
        w = 1.0 / (recorded * recorded)
        for row, i in enumerate(self.free):
            wx = w * x[i]
            self.atb[row] += wx * target
            line = self.ata[row]
            for col, j in enumerate(self.free):
                line[col] += wx * x[j]
        self.calls += 1

    def minus(self, other: NormalEquations) -> NormalEquations:
        return NormalEquations(
            free=self.free,
            ata=[
                [a - b for a, b in zip(r1, r2, strict=True)]
                for r1, r2 in zip(self.ata, other.ata, strict=True)
            ],
            atb=[a - b for a, b in zip(self.atb, other.atb, strict=True)],
            calls=self.calls - other.calls,
        )

    def plus(self, other: NormalEquations) -> NormalEquations:
        merged = NormalEquations(free=self.free)
        merged.ata = [
            [a + b for a, b in zip(r1, r2, strict=True)]
            for r1, r2 in zip(self.ata, other.ata, strict=True)
        ]
        merged.atb = [a + b for a, b in zip(self.atb, other.atb, strict=True)]
        merged.calls = self.calls + other.calls
        return merged

    def solve(self, ridge: float = 1e-4) -> Vector:
        """Least squares for the free terms, shrunk slightly towards :data:`IDENTITY` so
        terms the data does not exercise stay there; pinned terms are IDENTITY's."""
        n = len(self.free)
        matrix = [row[:] for row in self.ata]
        rhs = self.atb[:]
        scale = max((matrix[i][i] for i in range(n)), default=1.0) or 1.0
        for row, i in enumerate(self.free):
            pinned_prior = IDENTITY[i]
            penalty = ridge * (matrix[row][row] or scale * 1e-6) + 1e-12
            matrix[row][row] += penalty
            rhs[row] += penalty * pinned_prior
        solution = _gauss(matrix, rhs)
        values = list(IDENTITY)
        for row, i in enumerate(self.free):
            values[i] = solution[row]
        return tuple(values)


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
    family: str, samples: Iterable[tuple[Features, int]], *, free: tuple[int, ...] | None = None
) -> Coefficients:
    """Fit ``family`` on (features, recorded prompt total) samples."""
    equations = NormalEquations(free=free if free is not None else free_terms(family))
    for features, recorded in samples:
        if recorded > 0:
            equations.add(features, float(recorded))
    values = equations.solve() if equations.calls else IDENTITY
    return Coefficients(family, values, "fitted", equations.calls)


@cache
def default_document() -> dict[str, Any]:
    """The shipped calibration: coefficients per family and their held-out errors."""
    try:
        text = resources.files("costsim.metering").joinpath("calibration_defaults.json").read_text()
        document: dict[str, Any] = json.loads(text)
    except (OSError, ValueError) as exc:
        raise DataError(f"costsim's shipped calibration defaults are unreadable ({exc})") from None
    return document


def default_errors(family: str) -> tuple[int, float, float] | None:
    """(calls, median, p90) held-out error (%) of the shipped defaults for a family."""
    families = default_document()["families"]
    entry = families.get(family) or families.get(family.removesuffix("+tools"))
    if not entry:
        return None
    try:  # every figure shipped: a report never says "held out on 0 calls" for "unknown"
        return (
            int(entry["calls"]),
            float(entry["calibrated_median_ape"]),
            float(entry["calibrated_p90_ape"]),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise DataError(
            f"costsim's shipped calibration defaults lack {family}'s held-out errors ({exc!r})"
        ) from None


@cache
def _defaults() -> dict[str, Coefficients]:
    result: dict[str, Coefficients] = {}
    for family, entry in default_document()["families"].items():
        values = tuple(float(entry["coefficients"].get(name, 0.0)) for name in FEATURE_NAMES)
        result[family] = Coefficients(family, values, "default", int(entry.get("calls", 0)))
    return result


def default_coefficients(family: str) -> Coefficients:
    """Coefficients shipped with costsim (fitted on the corpus) for a family, or identity."""
    defaults = _defaults()
    base = family.removesuffix("+tools")
    if base in defaults:
        return (
            defaults[base]
            if base == family
            else Coefficients(family, defaults[base].values, "default")
        )
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
