"""The API over recorded traffic: load cassettes, report what they cost, simulate a variant,
check the cache simulator and the token estimator, list and check cassette files."""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any, TypeAlias

from costsim.analysis import cache_fidelity, cassettes
from costsim.analysis.breakdown import breakdown
from costsim.analysis.checks import among_siblings, validate_rules
from costsim.analysis.comparison import compare_variants, finish
from costsim.analysis.cut_short import traces_cut_short
from costsim.analysis.groups import AgentMatcher
from costsim.analysis.report import build_report
from costsim.api.execution import Settings, current, resolve
from costsim.api.pipeline import check_all, compare_all, cut_short_in, list_all, load_all
from costsim.api.results import (
    CacheCheck,
    Calibration,
    CassetteCheck,
    CassetteList,
    Report,
    Simulation,
    Traces,
)
from costsim.cache.rules import default_rules
from costsim.engine import Engine
from costsim.errors import ConfigError
from costsim.io.config import secrets_ignore, tool_config
from costsim.io.walk import Progress, Selection, find_cassettes
from costsim.metering.evaluate import Grouping, first_folder
from costsim.metering.evaluate import calibrate as fit_and_measure
from costsim.metering.meter import Meter
from costsim.model import CassetteTrace
from costsim.providers.normalise import left_out
from costsim.strategies.registry import Step, Variant, make_step
from costsim.strategies.syntax import parse_variants

__all__ = [
    "PathLike",
    "StrategiesLike",
    "TracesLike",
    "calibrate",
    "check_cache",
    "check_cassettes",
    "estimator",
    "list_cassettes",
    "load",
    "paths_of",
    "report",
    "simulate",
    "traces_of",
    "utc",
    "variant_of",
    "with_progress",
]

PathLike: TypeAlias = str | os.PathLike[str]
TracesLike: TypeAlias = Traces | PathLike | Iterable[PathLike] | Iterable[CassetteTrace]
StrategyLike: TypeAlias = str | Step | Mapping[str, Mapping[str, Any] | None]
"""One strategy: ``"truncation:max_chars=2000"``, a Step, or ``{"truncation": {"max_chars":
2000}}`` (a scenario's step, as in its YAML)."""
StrategiesLike: TypeAlias = StrategyLike | Variant | Sequence[StrategyLike]


def paths_of(paths: PathLike | Iterable[PathLike]) -> list[Path]:
    if isinstance(paths, str | os.PathLike):
        return [Path(paths)]
    return [Path(path) for path in paths]


def load(
    paths: PathLike | Iterable[PathLike],
    *,
    lenient: bool = False,
    include: Iterable[str] = (),
    exclude: Iterable[str] = (),
    progress: Progress | None = None,
    jobs: int | None = None,
    cache: bool | None = None,
) -> Traces:
    """Load and normalise the cassettes under ``paths`` (files, or folders walked as ruff and
    pytest walk them: hidden folders, virtual environments and ``site-packages`` skipped;
    ``include`` / ``exclude`` globs narrow the walk).

    An unreadable file raises :class:`~costsim.errors.CassetteError`; with ``lenient`` it is
    skipped and listed in ``.skipped``. A folder that cannot be read, or a file named that is
    not a regular file (a FIFO, a device), raises :class:`~costsim.errors.WalkError`; with
    ``lenient`` it is left out and named in ``.warnings``, as is a folder holding no cassette,
    a FIFO or device found in a folder, and a file reached twice (read once).
    Cassettes are parsed by ``jobs`` processes (default: one per processor usable) and kept in
    ``.costsim_cache`` unless ``cache`` is False (see :mod:`costsim.api.execution`).
    """
    found = find_cassettes(paths_of(paths), Selection.of(include, exclude), lenient=lenient)
    settings = with_progress(resolve(jobs, cache), progress, "loading")
    traces, skipped = load_all(found.files, lenient=lenient, settings=settings)
    dropped = [message for trace in traces for message in left_out(trace)]
    cut = traces_cut_short(traces)
    return Traces(tuple(traces), tuple(skipped), (*found.warnings(), *dropped, *cut))


def with_progress(settings: Settings, progress: Progress | None, what: str) -> Settings:
    """``settings`` reporting to the API's ``progress(what, done, total)``."""
    if progress is None:
        return settings
    return dataclasses.replace(settings, progress=lambda done, total: progress(what, done, total))


def traces_of(
    source: TracesLike,
    *,
    lenient: bool,
    include: Iterable[str] = (),
    exclude: Iterable[str] = (),
    progress: Progress | None = None,
) -> Traces:
    if isinstance(source, Traces):
        return source
    options = {"lenient": lenient, "include": include, "exclude": exclude, "progress": progress}
    if isinstance(source, str | os.PathLike):
        return load(source, **options)  # type: ignore[arg-type]
    items = list(source)
    if all(isinstance(item, CassetteTrace) for item in items):
        return Traces(tuple(item for item in items if isinstance(item, CassetteTrace)))
    if any(isinstance(item, CassetteTrace) for item in items):
        raise ConfigError("pass either cassette paths or loaded traces, not both")
    paths = [item for item in items if isinstance(item, str | os.PathLike)]
    return load(paths, **options)  # type: ignore[arg-type]


def report(
    traces: TracesLike,
    *,
    by: str | None = None,
    as_of: datetime | date | None = None,
    lenient: bool = False,
    include: Iterable[str] = (),
    exclude: Iterable[str] = (),
    progress: Progress | None = None,
) -> Report:
    """What the recorded calls were billed, per cassette or grouped ``by`` model, provider or
    flavour; priced at each call's recorded date, or all at ``as_of``."""
    loaded = traces_of(traces, lenient=lenient, include=include, exclude=exclude, progress=progress)
    data = build_report(
        loaded,
        by=by or "cassette",
        as_of=utc(as_of),
        skipped=loaded.skipped,
        estimator=estimator(),
    )
    return Report(data, skipped=loaded.skipped, warnings=loaded.warnings)


def estimator() -> Meter:
    """The token estimator in force (:meth:`Settings.estimator`): the same for every command."""
    return Meter(resolve().estimator())


def utc(when: datetime | date | None) -> datetime | None:
    """``when`` in UTC (a naive one taken as UTC; a date, its midnight)."""
    if when is not None and not isinstance(when, datetime):
        if not isinstance(when, date):
            raise ConfigError(f"as_of must be a date or a datetime, not {when!r}")
        when = datetime(when.year, when.month, when.day)
    if when is None or when.tzinfo is not None:
        return when
    return when.replace(tzinfo=UTC)


def variant_of(strategies: StrategiesLike) -> Variant:
    """One variant from strategies in the strategy syntax (``"truncation & caching"``, or a
    list of such, stacked in order), Steps, or a Variant; named by its label."""
    if isinstance(strategies, Variant):
        return strategies
    items: list[StrategyLike] = (
        [strategies] if isinstance(strategies, str | Step | Mapping) else list(strategies)
    )
    steps: list[Step] = []
    for item in items:
        if isinstance(item, Step):
            steps.append(item)
            continue
        if isinstance(item, Mapping):  # a scenario's step: {name: parameters}
            steps.extend(_mapped(item))
            continue
        if not isinstance(item, str):
            raise ConfigError(
                f"a strategy is a string ('truncation:max_chars=2000'), a Step or a mapping "
                f"({{'truncation': {{'max_chars': 2000}}}}), not {item!r}"
            )
        found = parse_variants(item)
        if len(found) > 1:
            raise ConfigError(
                f"{item!r} names {len(found)} variants, and a simulation runs one: stack "
                "strategies with ' & ' (or repeat -s); compare variants with a scenario file"
            )
        steps.extend(step for variant in found for step in variant.steps)
    variant = Variant("", tuple(steps))
    return Variant(variant.describe(), variant.steps)


def _mapped(item: Mapping[Any, Any]) -> list[Step]:
    steps = []
    for name, params in item.items():
        if not isinstance(name, str) or not (params is None or isinstance(params, Mapping)):
            raise ConfigError(
                f"{ {name: params}!r}: a strategy's name maps to its parameters (a mapping, or "
                "None for its defaults)"
            )
        steps.append(make_step(name, params))
    return steps


def simulate(
    traces: TracesLike,
    strategies: StrategiesLike = (),
    *,
    as_of: datetime | date | None = None,
    gap: float | None = None,
    warm: str | None = None,
    by: str | None = None,
    lenient: bool = False,
    include: Iterable[str] = (),
    exclude: Iterable[str] = (),
    progress: Progress | None = None,
    jobs: int | None = None,
    cache: bool | None = None,
    scheduler: str | None = None,
) -> Simulation:
    """Replay ``traces`` under ``strategies`` (applied in order: ``"caching:ttl=1h"``,
    ``"truncation & caching"``, a list of such, or a Variant) against the recorded baseline.
    ``gap``: seconds between calls of traces without recorded dates; ``warm``: ``steady``
    (default) or ``first`` (see :data:`costsim.cache.rules.WARM_STARTS`). Paths are simulated
    cassette by cassette, in parallel (see :func:`costsim.api.compare` for ``jobs``, ``cache``
    and ``scheduler``); the result is the same as for traces loaded first."""
    variant = variant_of(strategies)
    if by is not None and by not in SIMULATE_BREAKDOWNS:
        raise ConfigError(f"cannot break down by {by!r}; valid: {', '.join(SIMULATE_BREAKDOWNS)}")
    rules = default_rules().with_gap(gap).with_warm(warm if warm is not None else current().warm)
    paths = _as_paths(traces)
    if paths is not None:  # streamed, cassette by cassette
        found = find_cassettes(paths, Selection.of(include, exclude), lenient=lenient)
        settings = with_progress(resolve(jobs, cache, scheduler), progress, "simulating")
        share, skipped = compare_all(
            found.files,
            [variant],
            rules=rules,
            agents={},
            matcher=AgentMatcher(),
            as_of=utc(as_of),
            lenient=lenient,
            settings=settings,
        )
        data = finish(share, [variant], as_of=utc(as_of), warm_starts=rules.warm_starts)
        cut = cut_short_in(found.files, share, skipped)
        table = None if by is None else breakdown(by, data, AgentMatcher())
        return Simulation(
            data, by=table, skipped=tuple(skipped), warnings=(*found.warnings(), *cut)
        )
    loaded = traces_of(traces, lenient=lenient, include=include, exclude=exclude, progress=progress)
    engine = Engine(loaded, rules=rules, meter=estimator())
    data = compare_variants(engine, [variant], as_of=utc(as_of))
    table = None if by is None else breakdown(by, data, AgentMatcher())
    return Simulation(data, by=table, skipped=loaded.skipped, warnings=loaded.warnings)


SIMULATE_BREAKDOWNS = ("cassette", "model", "provider", "flavour", "tool")
"""``simulate --by``: ``compare``'s but ``agent`` (agent roles are a scenario's)."""


def _as_paths(source: TracesLike) -> list[Path] | None:
    """The paths ``source`` names, or None when it is (or holds) loaded traces."""
    if isinstance(source, Traces):
        return None
    if isinstance(source, str | os.PathLike):
        return [Path(source)]
    if isinstance(source, list | tuple) and all(
        isinstance(item, str | os.PathLike) for item in source
    ):
        return [Path(item) for item in source]
    return None


def check_cache(
    traces: TracesLike,
    *,
    lenient: bool = False,
    include: Iterable[str] = (),
    exclude: Iterable[str] = (),
    progress: Progress | None = None,
) -> CacheCheck:
    """Simulate recordings that used caching as recorded, and compare with what they billed."""
    loaded = traces_of(traces, lenient=lenient, include=include, exclude=exclude, progress=progress)
    return CacheCheck(
        cache_fidelity.check_cache(list(loaded), meter=estimator()),
        skipped=loaded.skipped,
        warnings=loaded.warnings,
    )


def _grouping(roots: list[Path], pattern: str | None) -> Grouping:
    """A cassette's source: the first folder under the path it was found in, or the first
    capture group (else the whole match) of ``pattern`` in its path relative to that path."""
    resolved_roots = [p.resolve() if p.is_dir() else p.resolve().parent for p in roots]
    try:
        compiled = re.compile(pattern) if pattern else None
    except re.error as exc:
        raise ConfigError(f"--group {pattern!r} is not a regular expression ({exc})") from None

    def group(path: Path) -> str:
        resolved = path.resolve()
        root = next((r for r in resolved_roots if resolved.is_relative_to(r)), resolved.parent)
        if compiled is None:
            return first_folder(root)(resolved)
        match = compiled.search(resolved.relative_to(root).as_posix())
        if match is None:
            return "(unmatched)"
        return match.group(1) if compiled.groups else match.group(0)

    return group


def calibrate(
    paths: PathLike | Iterable[PathLike],
    *,
    group: str | None = None,
    shipped: bool = False,
    lenient: bool = False,
    include: Iterable[str] = (),
    exclude: Iterable[str] = (),
    progress: Progress | None = None,
) -> Calibration:
    """The token estimator's error on the recordings under ``paths``: refitted and held out by
    source (``group``: a regex naming a cassette's source; default its first folder), or the
    shipped coefficients evaluated as they are (``shipped``)."""
    roots = paths_of(paths)
    loaded = load(roots, lenient=lenient, include=include, exclude=exclude, progress=progress)
    data = fit_and_measure(list(loaded), group=_grouping(roots, group), shipped=shipped)
    return Calibration(data, skipped=loaded.skipped, warnings=loaded.warnings)


def list_cassettes(
    paths: PathLike | Iterable[PathLike],
    *,
    sort: str = "name",
    include: Iterable[str] = (),
    exclude: Iterable[str] = (),
    progress: Progress | None = None,
    jobs: int | None = None,
    cache: bool | None = None,
) -> CassetteList:
    """One entry per cassette: recorded dates, LLM calls, providers, models, size (a file
    that cannot be read is listed with why). Loaded as :func:`load` loads them."""
    cassettes.check_sort(sort)  # before any file is read
    found = find_cassettes(paths_of(paths), Selection.of(include, exclude))
    settings = with_progress(resolve(jobs, cache), progress, "reading")
    items = list_all(found.files, settings=settings)
    return CassetteList(cassettes.sorted_listings(items, sort), warnings=tuple(found.warnings()))


def check_cassettes(
    paths: PathLike | Iterable[PathLike],
    *,
    ignore: Iterable[str] = (),
    show_info: bool = False,
    settings_from: PathLike | None = None,
    include: Iterable[str] = (),
    exclude: Iterable[str] = (),
    progress: Progress | None = None,
    jobs: int | None = None,
    cache: bool | None = None,
) -> CassetteCheck:
    """Unreadable cassettes, calls without (valid) usage, LLM calls costsim cannot meter and
    credentials left in recordings, each naming its rule and severity. ``ignore`` silences
    rules, as does ``[tool.costsim] secrets.ignore`` in the pyproject.toml found from
    ``settings_from`` (default: the working folder); ``show_info`` lists informational ones.
    Cassettes are checked by ``jobs`` processes (default: one per processor usable) and what
    each holds is kept in ``.costsim_cache`` unless ``cache`` is False."""
    start = Path(settings_from) if settings_from is not None else None
    config_path, _ = tool_config(start)
    configured = validate_rules(
        secrets_ignore(start), f"{config_path} [tool.costsim] secrets.ignore"
    )
    skip = [*validate_rules(ignore, "--ignore"), *configured]
    found = find_cassettes(paths_of(paths), Selection.of(include, exclude))
    settings = with_progress(resolve(jobs, cache), progress, "checking")
    per_file = among_siblings(found.files, check_all(found.files, settings=settings))
    data = cassettes.tally(per_file, ignore=skip, show_info=show_info, warnings=found.warnings())
    return CassetteCheck(data, warnings=data.warnings)
