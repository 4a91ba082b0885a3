"""How well the estimator does on the traces at hand: ``costsim calibrate``.

Per family: calls used and excluded (with reasons), fitted coefficients, absolute % error of
raw and calibrated prompt totals (calibrated ones leave-one-cassette-out), and per-turn
increment error: for consecutive calls of one conversation, recorded Δprompt vs predicted.
"""

from __future__ import annotations

import itertools
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from costsim.metering.calibration import (
    IDENTITY,
    Coefficients,
    NormalEquations,
    median,
    percentile,
    vector,
)
from costsim.metering.models import family
from costsim.metering.serialise import Features, Serialiser
from costsim.model import Call, Flavour, NoteKind, TextBlock
from costsim.normalise import CassetteTrace

__all__ = ["FamilyReport", "calibrate", "exclusion_reason", "is_text_only_chat"]

MIN_CALLS = 20
MIN_CASSETTES = 3


@dataclass(frozen=True, slots=True)
class Sample:
    cassette: Path
    call: Call
    features: Features
    recorded: int


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
    calibrated_p90_ape: float | None
    increment_pairs: int
    increment_median_error_pct: float | None
    raw_increment_median_error_pct: float | None
    exact_match_rate: float | None = None
    text_only_calls: int = 0
    loco_predictions: dict[tuple[Path, int], float] = field(default_factory=dict, repr=False)
    errors: list[float] = field(default_factory=list, repr=False)
    """Leave-one-cassette-out absolute % error of every call used."""
    increment_errors: list[float] = field(default_factory=list, repr=False)
    text_only_exact: int = 0


def is_text_only_chat(call: Call) -> bool:
    return (
        call.flavour is Flavour.OPENAI_CHAT
        and not call.tools
        and call.output_schema is None
        and all(isinstance(b, TextBlock) for m in call.messages for b in m.content)
    )


def exclusion_reason(call: Call, features: Features) -> str | None:
    """Why a call cannot calibrate the estimator, or None when it can."""
    if call.errored or call.usage is None:
        return "no recorded usage"
    if call.usage.estimated:
        return "estimated usage"
    if call.usage.prompt_total <= 0:
        return "zero prompt tokens recorded"
    if call.flavour is not call.flavour.shape or call.extra.get("prompt") is not None:
        return "prompt not sent as messages (legacy completions, stored prompt)"
    if any(note.kind is NoteKind.USAGE_ONLY for note in call.notes):
        return "request body not modelled (metered from its usage only)"
    server_side = _SERVER_SIDE_PARAMETERS.intersection(call.extra)
    if server_side:
        return f"server-side additions to the prompt ({', '.join(sorted(server_side))})"
    if features.images or features.documents:
        return "images or documents (tokens depend on pixels / pages)"
    if any(b.kind == "other" for m in call.messages for b in m.content) or any(
        t.type not in ("custom", "function") for t in call.tools
    ):
        return "server tools or block types costsim does not model"
    return None


_SERVER_SIDE_PARAMETERS = frozenset({"mcp_servers", "context_management", "container"})


def _ape(predicted: float, recorded: int) -> float:
    return abs(predicted - recorded) / recorded * 100


def _is_continuation(first: Call, second: Call) -> bool:
    n = len(first.messages)
    return (
        len(second.messages) > n
        and first.model == second.model
        and first.tools == second.tools
        and first.system == second.system
        and second.messages[:n] == first.messages
    )


def calibrate(traces: Iterable[CassetteTrace]) -> list[FamilyReport]:
    """Fit every family on ``traces`` and measure the fit leave-one-cassette-out."""
    samples: dict[str, list[Sample]] = defaultdict(list)
    excluded: dict[str, Counter[str]] = defaultdict(Counter)
    ordered: dict[Path, list[Sample]] = defaultdict(list)
    serialiser = Serialiser()
    for trace in traces:
        for call in trace.calls:
            features = serialiser.features(call)
            key = family(call)
            reason = exclusion_reason(call, features)
            if reason is not None:
                excluded[key][reason] += 1
                continue
            assert call.usage is not None
            sample = Sample(trace.path, call, features, call.usage.prompt_total)
            samples[key].append(sample)
            ordered[trace.path].append(sample)
    reports = [
        _family_report(name, samples.get(name, []), excluded[name], ordered)
        for name in sorted(set(samples) | set(excluded))
    ]
    return reports


def _family_report(
    name: str,
    items: list[Sample],
    excluded: Counter[str],
    ordered: dict[Path, list[Sample]],
) -> FamilyReport:
    per_cassette: dict[Path, NormalEquations] = defaultdict(NormalEquations)
    total = NormalEquations()
    for sample in items:
        x = vector(sample.features)
        per_cassette[sample.cassette].add(x, sample.recorded)
        total.add(x, sample.recorded)
    recipe = name.startswith(Flavour.OPENAI_CHAT.value) and not name.endswith("+tools")
    if recipe:
        coefficients = Coefficients(name, IDENTITY, "recipe", len(items))
    else:
        coefficients = Coefficients(
            name, total.solve() if items else IDENTITY, "fitted", len(items)
        )
    loco: dict[tuple[Path, int], float] = {}
    for cassette, equations in per_cassette.items():
        held_out = (
            coefficients if recipe else Coefficients(name, total.minus(equations).solve(), "fitted")
        )
        for sample in items:
            if sample.cassette == cassette:
                loco[(cassette, sample.call.provenance.index)] = held_out.predict(sample.features)
    raw_errors = [_ape(s.features.raw, s.recorded) for s in items]
    calibrated = [_ape(loco[(s.cassette, s.call.provenance.index)], s.recorded) for s in items]
    increments, raw_increments = _increment_errors(name, ordered, loco)
    report = FamilyReport(
        family=name,
        calls=len(items),
        cassettes=len(per_cassette),
        excluded=excluded,
        coefficients=coefficients,
        raw_median_ape=median(raw_errors),
        raw_p90_ape=percentile(raw_errors, 90),
        calibrated_median_ape=median(calibrated),
        calibrated_p90_ape=percentile(calibrated, 90),
        increment_pairs=len(increments),
        increment_median_error_pct=median(increments),
        raw_increment_median_error_pct=median(raw_increments),
        loco_predictions=loco,
        errors=calibrated,
        increment_errors=increments,
    )
    if name.startswith(Flavour.OPENAI_CHAT.value):
        text_only = [s for s in items if is_text_only_chat(s.call)]
        report.text_only_calls = len(text_only)
        if text_only:
            exact = sum(1 for s in text_only if s.features.raw == s.recorded)
            report.text_only_exact = exact
            report.exact_match_rate = exact / len(text_only)
    return report


def _increment_errors(
    name: str, ordered: dict[Path, list[Sample]], loco: dict[tuple[Path, int], float]
) -> tuple[list[float], list[float]]:
    errors: list[float] = []
    raw_errors: list[float] = []
    for cassette, samples in ordered.items():
        mine = [s for s in samples if family(s.call) == name]
        for first, second in itertools.pairwise(mine):
            recorded = second.recorded - first.recorded
            if recorded <= 0 or not _is_continuation(first.call, second.call):
                continue
            key1 = (cassette, first.call.provenance.index)
            key2 = (cassette, second.call.provenance.index)
            errors.append(_ape(loco[key2] - loco[key1], recorded))
            raw_errors.append(_ape(second.features.raw - first.features.raw, recorded))
    return errors, raw_errors
