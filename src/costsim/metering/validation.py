"""The figures ``costsim calibrate`` reports: per family, and per API flavour x content class,
for prompt totals and per-turn increments (held-out predictions are made in
:mod:`costsim.metering.evaluate`)."""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from costsim.metering.calibration import (
    Coefficients,
    median,
    percentile,
)
from costsim.metering.serialise import Features
from costsim.model import Call, Flavour, TextBlock

__all__ = [
    "MEDIA",
    "POOLS",
    "CalibrationReport",
    "Cell",
    "FamilyReport",
    "Key",
    "Predictions",
    "Sample",
    "ape",
    "cells",
    "family_report",
    "increment_errors",
    "is_text_only_chat",
]

Key = tuple[Path, int]
Predictions = dict[Key, float]


@dataclass(frozen=True, slots=True)
class Sample:
    """A recorded call as the calibration sees it (small: samples travel between processes)."""

    cassette: Path
    source: str
    index: int
    """The call's interaction index in its cassette."""
    flavour: Flavour
    features: Features
    recorded: int
    family: str
    klass: str
    fitted: bool
    """Used for fitting (not a recipe call, not media)."""
    recipe: bool = False
    """OpenAI's cookbook recipe counts it on its own (see ``is_recipe``)."""
    text_only: bool = False
    """A text-only OpenAI chat request (see :func:`is_text_only_chat`)."""
    continues: bool = False
    """The next turn of the conversation of the cassette's previous call of its family."""

    @property
    def key(self) -> Key:
        return (self.cassette, self.index)


@dataclass(slots=True)
class FamilyReport:
    family: str
    calls: int
    cassettes: int
    excluded: Counter[str]
    coefficients: Coefficients
    raw_median_ape: float | None
    raw_p90_ape: float | None
    calibrated_median_ape: float | None
    """Leave-one-source-out (``--shipped``: the shipped coefficients')."""
    calibrated_p90_ape: float | None
    loco_median_ape: float | None
    loco_p90_ape: float | None
    increment_pairs: int
    increment_median_error_pct: float | None
    increment_p90_error_pct: float | None
    raw_increment_median_error_pct: float | None
    exact_match_rate: float | None = None
    text_only_calls: int = 0
    text_only_exact: int = 0
    sources: int = 0
    errors: list[float] = field(default_factory=list, repr=False)
    """Held-out absolute % error of every call (leave-one-source-out)."""
    increment_errors: list[float] = field(default_factory=list, repr=False)


@dataclass(frozen=True, slots=True)
class Cell:
    """Errors of one API flavour and content class ("all" pools the classes)."""

    flavour: str
    klass: str
    calls: int
    median_ape: float | None
    p90_ape: float | None
    loco_median_ape: float | None
    loco_p90_ape: float | None
    increment_pairs: int
    increment_median_error_pct: float | None
    increment_p90_error_pct: float | None
    loco_increment_median_error_pct: float | None
    loco_increment_p90_error_pct: float | None
    text_only_calls: int = 0
    exact_match_rate: float | None = None


@dataclass(slots=True)
class CalibrationReport:
    families: list[FamilyReport]
    cells: list[Cell]
    sources: list[str]
    mode: str = "refit"
    """"refit": fitted on the traces, held out by source (by cassette when the traces come
    from one source only); "shipped": the shipped coefficients."""


def is_text_only_chat(call: Call) -> bool:
    return (
        call.flavour is Flavour.OPENAI_CHAT
        and not call.tools
        and call.output_schema is None
        and all(isinstance(b, TextBlock) for m in call.messages for b in m.content)
    )


def ape(predicted: float, recorded: int) -> float:
    return abs(predicted - recorded) / recorded * 100


def increment_errors(pairs: list[tuple[Sample, Sample]], predictions: Predictions) -> list[float]:
    return [ape(predictions[b.key] - predictions[a.key], b.recorded - a.recorded) for a, b in pairs]


def family_report(
    name: str,
    items: list[Sample],
    excluded: Counter[str],
    pairs: list[tuple[Sample, Sample]],
    coefficients: Coefficients,
    held_out: Predictions,
    loco: Predictions,
) -> FamilyReport:
    raw = [ape(s.features.raw + s.features.fixed, s.recorded) for s in items]
    errors = [ape(held_out[s.key], s.recorded) for s in items]
    loco_errors = [ape(loco[s.key], s.recorded) for s in items]
    increments = increment_errors(pairs, held_out)
    raw_increments = [
        ape(
            (b.features.raw + b.features.fixed) - (a.features.raw + a.features.fixed),
            b.recorded - a.recorded,
        )
        for a, b in pairs
    ]
    report = FamilyReport(
        family=name,
        calls=len(items),
        cassettes=len({s.cassette for s in items}),
        excluded=excluded,
        coefficients=coefficients,
        raw_median_ape=median(raw),
        raw_p90_ape=percentile(raw, 90),
        calibrated_median_ape=median(errors),
        calibrated_p90_ape=percentile(errors, 90),
        loco_median_ape=median(loco_errors),
        loco_p90_ape=percentile(loco_errors, 90),
        increment_pairs=len(pairs),
        increment_median_error_pct=median(increments),
        increment_p90_error_pct=percentile(increments, 90),
        raw_increment_median_error_pct=median(raw_increments),
        sources=len({s.source for s in items}),
        errors=errors,
        increment_errors=increments,
    )
    text_only = [s for s in items if s.text_only]
    if text_only:
        report.text_only_calls = len(text_only)
        report.text_only_exact = sum(1 for s in text_only if s.features.raw == s.recorded)
        report.exact_match_rate = report.text_only_exact / len(text_only)
    return report


MEDIA = ("images", "documents")
POOLS = ("all", "no_media")
"""Pooled cells: every class, and every class but images and documents (what the prompt
totals of text, tool and reasoning requests experience)."""


def _cell_keys(sample: Sample) -> list[tuple[str, str]]:
    flavour = sample.flavour.value
    keys = [(flavour, sample.klass), (flavour, "all")]
    if sample.klass not in MEDIA:
        keys.append((flavour, "no_media"))
    return keys


def cells(
    samples: list[Sample],
    pairs: list[tuple[Sample, Sample]],
    held_out: Predictions,
    loco: Predictions,
) -> list[Cell]:
    groups: dict[tuple[str, str], list[Sample]] = defaultdict(list)
    pair_groups: dict[tuple[str, str], list[tuple[Sample, Sample]]] = defaultdict(list)
    for sample in samples:
        for key in _cell_keys(sample):
            groups[key].append(sample)
    for pair in pairs:
        for key in _cell_keys(pair[1]):
            pair_groups[key].append(pair)
    cells = []
    for (flavour, klass), items in sorted(groups.items()):
        errors = [ape(held_out[s.key], s.recorded) for s in items]
        loco_errors = [ape(loco[s.key], s.recorded) for s in items]
        chosen = pair_groups.get((flavour, klass), [])
        increments = increment_errors(chosen, held_out)
        loco_increments = increment_errors(chosen, loco)
        text_only = [s for s in items if s.text_only]
        exact = sum(1 for s in text_only if s.features.raw == s.recorded)
        cells.append(
            Cell(
                flavour=flavour,
                klass=klass,
                calls=len(items),
                median_ape=median(errors),
                p90_ape=percentile(errors, 90),
                loco_median_ape=median(loco_errors),
                loco_p90_ape=percentile(loco_errors, 90),
                increment_pairs=len(chosen),
                increment_median_error_pct=median(increments),
                increment_p90_error_pct=percentile(increments, 90),
                loco_increment_median_error_pct=median(loco_increments),
                loco_increment_p90_error_pct=percentile(loco_increments, 90),
                text_only_calls=len(text_only),
                exact_match_rate=exact / len(text_only) if text_only else None,
            )
        )
    return cells
