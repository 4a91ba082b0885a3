"""The API over scenario files: compare one scenario's variants, or every scenario of a run
with its gates and breakdown."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath

from costsim.analysis.breakdown import BREAKDOWNS
from costsim.analysis.comparison import finish
from costsim.api._traffic import PathLike, paths_of, with_progress
from costsim.api.execution import resolve
from costsim.api.pipeline import compare_all, cut_short_in
from costsim.api.results import Comparison, Comparisons
from costsim.cache.rules import default_rules
from costsim.errors import ConfigError
from costsim.io.walk import Progress, Selection, find_cassettes
from costsim.scenario import (
    LoadedScenario,
    Scenario,
    find_scenarios,
    gate,
    load_scenario,
    prepare_scenario,
)
from costsim.scenario.result import ScenarioComparison, ScenarioRun, ScenarioRuns, agent_matcher
from costsim.strategies.registry import AgentSpec

__all__ = ["compare", "compare_scenarios", "scenario_variants"]


def compare(
    scenario: PathLike | Scenario,
    *,
    variants: Iterable[str] | None = None,
    lenient: bool = False,
    progress: Progress | None = None,
    jobs: int | None = None,
    cache: bool | None = None,
    scheduler: str | None = None,
    warm: str | None = None,
    as_of: datetime | None = None,
) -> Comparison:
    """Every variant of a scenario (a scenario file, or a :class:`Scenario` built in Python
    whose cassette patterns are relative to the working folder) against the recording.

    Cassettes are simulated independently by ``jobs`` processes (default: one per processor
    usable), or by the workers of the Dask cluster whose scheduler is at ``scheduler`` (``tcp://host:8786``);
    loaded cassettes and each cassette's results are kept in ``.costsim_cache`` unless
    ``cache`` is False. The result is the same whichever runs it. ``warm``: ``steady`` or
    ``first`` (see :data:`costsim.cache.rules.WARM_STARTS`), instead of the scenario's.
    ``as_of``: price every call as of that moment, instead of the scenario's ``pricing.as_of``
    (or each call's recorded date)."""
    if isinstance(scenario, Scenario):
        loaded = prepare_scenario(scenario, Path.cwd() / "(scenario)")
    else:
        loaded = load_scenario(Path(scenario))
    label = scenario.name if isinstance(scenario, Scenario) else Path(scenario).stem
    return _compare(
        loaded, label, variants, lenient, progress, jobs, cache, scheduler, warm=warm, as_of=as_of
    )


def _compare(
    loaded: LoadedScenario,
    label: str,
    variants: Iterable[str] | None,
    lenient: bool,
    progress: Progress | None,
    jobs: int | None = None,
    cache: bool | None = None,
    scheduler: str | None = None,
    selection: Selection | None = None,
    warm: str | None = None,
    as_of: datetime | None = None,
) -> Comparison:
    """:func:`compare` of a scenario read and checked already; ``selection``: the
    ``--include`` / ``--exclude`` globs its cassettes are narrowed by."""
    known = [variant.name for variant in loaded.variants]
    wanted = known if variants is None else list(variants)
    missing = [name for name in wanted if name not in known]
    if missing:
        raise ConfigError(f"no variant named {missing[0]!r}; variants: {', '.join(known)}")
    chosen = [variant for variant in loaded.variants if variant.name in wanted]
    model = loaded.scenario
    overrides = [(r.rule, r.model, r.value, r.since) for r in model.model_rules]
    agents = {name: AgentSpec(rule.match, rule.tier) for name, rule in model.agents.items()}
    settings = with_progress(resolve(jobs, cache, scheduler), progress, label)
    mode = warm if warm is not None else model.warm or settings.warm
    rules = default_rules().with_overrides(overrides).with_warm(mode)
    day = model.pricing.as_of
    if as_of is None and day is not None:  # the option's date, else the scenario's
        as_of = datetime(day.year, day.month, day.day, tzinfo=UTC)
    found = find_cassettes(list(loaded.cassettes), lenient=lenient)
    files = (
        list(found.files) if selection is None else _selected(found.files, loaded.path, selection)
    )
    share, skipped = compare_all(
        files,
        chosen,
        rules=rules,
        agents=agents,
        matcher=agent_matcher(loaded),
        as_of=as_of,
        lenient=lenient,
        settings=settings,
    )
    data = finish(
        share,
        chosen,
        as_of=as_of,
        title=model.name,
        description=model.description,
        warm_starts=rules.warm_starts,
    )
    failures = tuple(gate(data, model.budgets, None))
    return Comparison(
        ScenarioComparison(loaded, data, failures),
        skipped=tuple(skipped),
        warnings=(
            *found.warnings(),
            *_left_out(found.files, files, loaded.path),
            *cut_short_in(files, share, skipped),
        ),
    )


def _left_out(found: Sequence[Path], kept: Sequence[Path], scenario: Path) -> list[str]:
    if not found or kept:
        return []
    return [f"{scenario}: --include / --exclude leave none of its {len(found):,} cassettes"]


def compare_scenarios(
    paths: PathLike | Iterable[PathLike],
    *,
    variants: Iterable[str] = (),
    by: str | None = None,
    fail_over: float | None = None,
    lenient: bool = False,
    progress: Progress | None = None,
    include: Iterable[str] = (),
    exclude: Iterable[str] = (),
    warm: str | None = None,
    as_of: datetime | None = None,
) -> Comparisons:
    """``costsim compare``: every scenario file among ``paths`` (files, or folders of them),
    its variants (only those named in ``variants``, when given), the breakdown ``by`` asks
    for, and every gate broken (the scenarios' budgets, and variants costing more than
    ``fail_over`` percent above the recording). ``include`` / ``exclude``: globs that narrow
    every scenario's cassettes, as they narrow a walked folder's. ``warm``: ``steady`` or
    ``first`` warm starts in every scenario (see :func:`compare`). ``as_of``: every scenario
    priced as of that moment (see :func:`compare`)."""
    selection = Selection.of(include, exclude)
    default_rules().with_warm(warm)  # a wrong mode is said before any scenario is read
    if by is not None and by not in BREAKDOWNS:
        raise ConfigError(f"cannot break down by {by!r}; valid: {', '.join(BREAKDOWNS)}")
    if fail_over is not None and fail_over < 0:
        raise ConfigError(f"a regression limit is 0% or more, not {fail_over:g}%")
    files = find_scenarios(paths_of(paths))
    loaded = {path: load_scenario(path) for path in files}  # each file read and checked once
    names = {path: [variant.name for variant in loaded[path].variants] for path in files}
    only = list(variants)
    known = sorted({name for found in names.values() for name in found})
    missing = [name for name in only if name not in known]
    if missing:
        raise ConfigError(f"no variant named {missing[0]!r}; variants: {', '.join(known)}")
    runs = []
    for path in files:
        chosen = [name for name in names[path] if name in only] if only else names[path]
        if not chosen:
            continue
        result = _compare(
            loaded[path],
            path.stem,
            chosen,
            lenient,
            progress,
            selection=selection,
            warm=warm,
            as_of=as_of,
        )
        table = result.breakdown(by).data if by else None
        failures = tuple(result.gate(fail_over=fail_over))
        runs.append(ScenarioRun(result.data, failures, table, result.skipped, result.warnings))
    skipped = tuple(item for run in runs for item in run.skipped)
    warnings = tuple(dict.fromkeys(item for run in runs for item in run.warnings))
    return Comparisons(ScenarioRuns(tuple(runs)), skipped=skipped, warnings=warnings)


def _selected(files: Iterable[Path], scenario: Path, selection: Selection) -> list[Path]:
    """The cassettes ``selection`` keeps, each matched by its path under the scenario's
    folder (or its whole path, when outside it), as a walk matches the path under its root."""
    if not selection.include and not selection.exclude:
        return list(files)
    kept = []
    folder = scenario.parent.resolve()
    for path in files:
        try:
            relative = path.resolve().relative_to(folder)
        except ValueError:
            relative = path.resolve()
        if selection.wants(PurePosixPath(relative.as_posix())):
            kept.append(path)
    return kept


def scenario_variants(scenario: PathLike) -> list[str]:
    """The names of a scenario file's variants (the file is read and validated)."""
    return [variant.name for variant in load_scenario(Path(scenario)).variants]
