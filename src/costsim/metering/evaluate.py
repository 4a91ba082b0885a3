"""How well the estimator does on recordings it was not fitted on: ``costsim calibrate``.

Every usable call is predicted three ways:

- **leave-one-source-out** (the headline): by coefficients fitted without any cassette of its
  source (the project or folder it came from). Cassettes of one project share prompts and
  tools, so this is what a user's own, never-seen recordings experience;
- **leave-one-cassette-out**: fitted without its own cassette only (optimistic);
- in ``--shipped`` mode, by the coefficients shipped with costsim, without refitting.

A family with too few calls in a fold borrows the pooled fit of its API flavour, else the
provider rules alone. Errors are absolute % of the recorded prompt total, per family and per
API flavour x content class, for totals and for per-turn increments (the recorded prompt
increase between consecutive calls of one conversation vs the predicted one).
"""

from __future__ import annotations

import itertools
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from pathlib import Path

from costsim.metering.calibration import (
    IDENTITY,
    Coefficients,
    NormalEquations,
    default_coefficients,
    free_terms,
)
from costsim.metering.classes import content_class, is_recipe
from costsim.metering.models import family
from costsim.metering.serialise import Features, Serialiser
from costsim.metering.validation import (
    MEDIA,
    CalibrationReport,
    Cell,
    FamilyReport,
    Predictions,
    Sample,
    cells,
    family_report,
    is_text_only_chat,
)
from costsim.model import Call, CassetteTrace, Flavour, NoteKind
from costsim.model.continuity import continues

__all__ = [
    "MIN_CALLS",
    "MIN_CASSETTES",
    "CalibrationReport",
    "Cell",
    "FamilyReport",
    "Grouping",
    "calibrate",
    "calibrate_samples",
    "exclusion_reason",
    "first_folder",
    "is_text_only_chat",
    "trace_samples",
]

MIN_CALLS = 20
MIN_CASSETTES = 3
MIN_FIT = 8
"""Calls a family needs in a fold to get its own fit (else its flavour's pooled fit)."""

Grouping = Callable[[Path], str]


def first_folder(root: Path) -> Grouping:
    """The default source of a cassette: the first folder level under ``root``."""

    def group(path: Path) -> str:
        try:
            parts = path.relative_to(root).parts
        except ValueError:
            return path.parent.name
        return parts[0] if len(parts) > 1 else root.name

    return group


_SERVER_SIDE_PARAMETERS = frozenset(
    {"mcp_servers", "context_management", "container", "previous_response_id", "conversation"}
)


def exclusion_reason(call: Call, features: Features) -> str | None:
    """Why a call cannot calibrate or validate the estimator, or None when it can."""
    if call.errored or call.usage is None:
        return "no recorded usage"
    if call.usage.estimated:
        return "estimated usage"
    if call.usage.prompt_total <= 0:
        return "zero prompt tokens recorded"
    if call.served_by is not None:
        return "served by another provider (counted by its own tokenizer)"
    if call.flavour is not call.flavour.shape or call.extra.get("prompt") is not None:
        return "prompt not sent as messages (legacy completions, stored prompt)"
    if any(note.kind is NoteKind.USAGE_ONLY for note in call.notes):
        return "request body not modelled (metered from its usage only)"
    server_side = sorted(_SERVER_SIDE_PARAMETERS.intersection(call.extra))
    if "prompt" in call.extra:
        server_side.append("prompt")
    if call.extra.get("reasoning_mode") not in (None, "standard"):
        server_side.append(f"reasoning mode {call.extra['reasoning_mode']}")
    if call.endpoint.rstrip("/").endswith("/compact"):
        server_side.append("compaction")
    if server_side:
        return f"server-side additions to the prompt ({', '.join(server_side)})"
    if any(b.kind == "other" for m in call.messages for b in m.content) or any(
        t.type not in ("custom", "function") for t in call.tools
    ):
        return "server tools or block types costsim does not model"
    return None


def trace_samples(
    trace: CassetteTrace, source: str, serialiser: Serialiser | None = None
) -> tuple[list[Sample], dict[str, Counter[str]]]:
    """The calibration samples of one trace (``source``: its group), and the calls left out
    per family with the reason: cassettes are sampled independently, in any process."""
    serialiser = serialiser or Serialiser()
    samples: list[Sample] = []
    excluded: dict[str, Counter[str]] = defaultdict(Counter)
    previous: dict[str, Call] = {}
    for call in trace.calls:
        features = serialiser.features(call)
        name = family(call)
        reason = exclusion_reason(call, features)
        if reason is not None:
            excluded[name][reason] += 1
            continue
        assert call.usage is not None
        klass = content_class(call)
        recipe = is_recipe(call)
        before = previous.get(name)
        previous[name] = call
        samples.append(
            Sample(
                cassette=trace.path,
                source=source,
                index=call.provenance.index,
                flavour=call.flavour,
                features=features,
                recorded=call.usage.prompt_total,
                family=name,
                klass=klass,
                fitted=not recipe and klass not in MEDIA,
                recipe=recipe,
                text_only=is_text_only_chat(call),
                continues=before is not None and _is_continuation(before, call),
            )
        )
    return samples, excluded


def _samples(
    traces: Iterable[CassetteTrace], group: Grouping
) -> tuple[list[Sample], dict[str, Counter[str]]]:
    samples: list[Sample] = []
    excluded: dict[str, Counter[str]] = defaultdict(Counter)
    serialiser = Serialiser()
    for trace in traces:
        found, left_out = trace_samples(trace, group(trace.path), serialiser)
        samples.extend(found)
        for name, reasons in left_out.items():
            excluded[name].update(reasons)
    return samples, excluded


def _flavour(name: str) -> str:
    return (
        Flavour.ANTHROPIC_MESSAGES.value
        if name.startswith("claude")
        else name.split("/", maxsplit=1)[0]
    )


class _Folds:
    """Normal equations per (family, group) and per (flavour, group), for held-out fits."""

    def __init__(
        self, samples: list[Sample], group_of: Callable[[Sample], str], *, defaults: bool = True
    ) -> None:
        self.defaults = defaults
        self.family: dict[str, dict[str, NormalEquations]] = defaultdict(dict)
        self.flavour: dict[str, dict[str, NormalEquations]] = defaultdict(dict)
        self._cache: dict[tuple[str, str], Coefficients] = {}
        self._totals: dict[tuple[int, str], NormalEquations] = {}
        for sample in samples:
            if not sample.fitted:
                continue
            free = free_terms(sample.family)
            g = group_of(sample)
            for table, name in (
                (self.family, sample.family),
                (self.flavour, _flavour(sample.family)),
            ):
                table[name].setdefault(g, NormalEquations(free=free)).add(
                    sample.features, float(sample.recorded)
                )

    def _without(
        self, groups: dict[str, NormalEquations], held: str | None, which: tuple[int, str]
    ) -> NormalEquations | None:
        """The equations of every group but ``held``: the sum of all of them (summed once per
        table) less the held group's, not a new sum for every group held out."""
        kept = [g for g in groups if g != held]
        if not kept:
            return None
        total = self._totals.get(which)
        if total is None:
            equations = list(groups.values())
            total = equations[0]
            for eq in equations[1:]:
                total = total.plus(eq)
            self._totals[which] = total
        return total if held not in groups else total.minus(groups[held])

    def coefficients(self, name: str, held: str | None) -> Coefficients:
        """The fit for family ``name`` without group ``held`` (None: on everything)."""
        hit = self._cache.get((name, held or ""))
        if hit is not None:
            return hit
        result = (
            default_coefficients(name) if self.defaults else Coefficients(name, IDENTITY, "recipe")
        )
        for table, key in ((self.family, name), (self.flavour, _flavour(name))):
            equations = self._without(table.get(key, {}), held, (id(table), key))
            if equations is not None and equations.calls >= MIN_FIT:
                result = Coefficients(name, equations.solve(), "fitted", equations.calls)
                break
        self._cache[(name, held or "")] = result
        return result


def _is_continuation(first: Call, second: Call) -> bool:
    n = len(first.messages)
    return (
        len(second.messages) > n
        and first.model == second.model
        and first.tools == second.tools
        and first.system == second.system
        and continues(first.messages, second.messages)
    )


def _pairs(samples: list[Sample]) -> list[tuple[Sample, Sample]]:
    """Consecutive calls of one conversation whose recorded prompt grew."""
    by_cassette: dict[tuple[Path, str], list[Sample]] = defaultdict(list)
    for sample in samples:
        by_cassette[(sample.cassette, sample.family)].append(sample)
    return [
        (first, second)
        for run in by_cassette.values()
        for first, second in itertools.pairwise(run)
        if second.recorded > first.recorded and second.continues
    ]


def _predict(samples: list[Sample], coefficients: Callable[[Sample], Coefficients]) -> Predictions:
    return {
        s.key: (s.features.raw + s.features.fixed)
        if s.recipe
        else coefficients(s).predict(s.features)
        for s in samples
    }


def calibrate(
    traces: Iterable[CassetteTrace],
    *,
    group: Grouping | None = None,
    shipped: bool = False,
    defaults: bool = True,
) -> CalibrationReport:
    """Fit every family on ``traces`` and measure the fit on calls it was not fitted on.

    ``group`` maps a cassette path to its source (default: its parent folder's name);
    ``shipped`` evaluates the coefficients shipped with costsim instead of refitting. A family
    with too few calls in a fold (and no flavour pool to borrow from) uses the shipped
    coefficients, or the provider rules alone when ``defaults`` is false (as when refitting
    the shipped coefficients themselves, which must not see the held-out source).
    """
    grouping = group or (lambda path: path.parent.name)
    samples, excluded = _samples(traces, grouping)
    return calibrate_samples(samples, excluded, shipped=shipped, defaults=defaults)


def calibrate_samples(
    samples: list[Sample],
    excluded: dict[str, Counter[str]],
    *,
    shipped: bool = False,
    defaults: bool = True,
) -> CalibrationReport:
    """:func:`calibrate` on samples already taken (:func:`trace_samples`), in trace order."""
    excluded = defaultdict(Counter, excluded)
    by_source = _Folds(samples, lambda s: s.source, defaults=defaults)
    by_cassette = _Folds(samples, lambda s: str(s.cassette), defaults=defaults)
    loco = _predict(samples, lambda s: by_cassette.coefficients(s.family, str(s.cassette)))
    sources = sorted({s.source for s in samples})
    if shipped:
        held_out = _predict(samples, lambda s: default_coefficients(s.family))
    elif len(sources) < 2:  # nothing to hold a source out against: cassettes are the groups
        held_out = loco
    else:
        held_out = _predict(samples, lambda s: by_source.coefficients(s.family, s.source))
    pairs = _pairs(samples)
    families = [
        family_report(
            name,
            [s for s in samples if s.family == name],
            excluded[name],
            [p for p in pairs if p[1].family == name],
            default_coefficients(name) if shipped else by_source.coefficients(name, None),
            held_out,
            loco,
        )
        for name in sorted({s.family for s in samples} | set(excluded))
    ]
    return CalibrationReport(
        families=families,
        cells=cells(samples, pairs, held_out, loco),
        sources=sources,
        mode="shipped" if shipped else "refit",
    )
