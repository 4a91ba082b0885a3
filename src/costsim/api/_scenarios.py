"""The API over scenario files: compare one scenario's variants, or every scenario of a run
with its gates and breakdown."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path

from costsim.analysis.breakdown import BREAKDOWNS
from costsim.analysis.comparison import compare_variants
from costsim.api._traffic import PathLike, load, paths_of
from costsim.api.results import Comparison, Comparisons
from costsim.cache.rules import default_rules
from costsim.engine import Engine
from costsim.errors import ConfigError
from costsim.io.walk import Progress
from costsim.scenario import Scenario, find_scenarios, gate, load_scenario, prepare_scenario
from costsim.scenario.result import ScenarioComparison, ScenarioRun, ScenarioRuns
from costsim.strategies.registry import AgentSpec, Variant

__all__ = ["compare", "compare_scenarios", "scenario_variants"]


def compare(
    scenario: PathLike | Scenario,
    *,
    variants: Iterable[str] | None = None,
    lenient: bool = False,
    on_variant: Callable[[Variant], None] | None = None,
) -> Comparison:
    """Every variant of a scenario (a scenario file, or a :class:`Scenario` built in Python
    whose cassette patterns are relative to the working folder) against the recording."""
    if isinstance(scenario, Scenario):
        loaded = prepare_scenario(scenario, Path.cwd() / "(scenario)")
    else:
        loaded = load_scenario(Path(scenario))
    known = [variant.name for variant in loaded.variants]
    wanted = known if variants is None else list(variants)
    missing = [name for name in wanted if name not in known]
    if missing:
        raise ConfigError(f"no variant named {missing[0]!r}; variants: {', '.join(known)}")
    chosen = [variant for variant in loaded.variants if variant.name in wanted]
    traces = load(loaded.cassettes, lenient=lenient)
    model = loaded.scenario
    overrides = [(r.rule, r.model, r.value, r.since) for r in model.model_rules]
    agents = {name: AgentSpec(rule.match, rule.tier) for name, rule in model.agents.items()}
    engine = Engine(traces, rules=default_rules().with_overrides(overrides), agents=agents)
    day = model.pricing.as_of
    as_of = datetime(day.year, day.month, day.day, tzinfo=UTC) if day else None
    data = compare_variants(
        engine,
        chosen,
        as_of=as_of,
        title=model.name,
        description=model.description,
        on_variant=on_variant,
    )
    failures = tuple(gate(data, model.budgets, None))
    return Comparison(ScenarioComparison(loaded, data, failures), skipped=traces.skipped)


def compare_scenarios(
    paths: PathLike | Iterable[PathLike],
    *,
    variants: Iterable[str] = (),
    by: str | None = None,
    fail_over: float | None = None,
    lenient: bool = False,
    progress: Progress | None = None,
) -> Comparisons:
    """``costsim compare``: every scenario file among ``paths`` (files, or folders of them),
    its variants (only those named in ``variants``, when given), the breakdown ``by`` asks
    for, and every gate broken (the scenarios' budgets, and variants costing more than
    ``fail_over`` percent above the recording)."""
    if by is not None and by not in BREAKDOWNS:
        raise ConfigError(f"cannot break down by {by!r}; valid: {', '.join(BREAKDOWNS)}")
    if fail_over is not None and fail_over < 0:
        raise ConfigError(f"a regression limit is 0% or more, not {fail_over:g}%")
    files = find_scenarios(paths_of(paths))
    names = {path: scenario_variants(path) for path in files}
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
        ticks = iter(range(1, len(chosen) + 1))
        label = path.stem

        def tick(
            _variant: Variant,
            label: str = label,
            total: int = len(chosen),
            ticks: Iterator[int] = ticks,
        ) -> None:
            if progress is not None:
                progress(label, next(ticks), total)

        result = compare(path, variants=chosen, lenient=lenient, on_variant=tick)
        table = result.breakdown(by).data if by else None
        failures = tuple(result.gate(fail_over=fail_over))
        runs.append(ScenarioRun(result.data, failures, table, result.skipped, result.warnings))
    skipped = tuple(item for run in runs for item in run.skipped)
    return Comparisons(ScenarioRuns(tuple(runs)), skipped=skipped)


def scenario_variants(scenario: PathLike) -> list[str]:
    """The names of a scenario file's variants (the file is read and validated)."""
    return [variant.name for variant in load_scenario(Path(scenario)).variants]
