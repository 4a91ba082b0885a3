"""costsim's public API: every command of the CLI is one function here, returning a result
with ``.to_json()`` (the document the CLI writes) and ``.render(fmt)``::

    import costsim

    traces = costsim.load("cassettes/")
    print(costsim.report(traces).render("table"))           # what was billed
    print(costsim.simulate(traces, "caching:ttl=1h").saving)  # one what-if variant
    comparison = costsim.compare("scenarios/coding_agent.yaml")  # a scenario's variants

Options are keyword-only. Inputs that name cassettes take a path, a list of paths, or traces
already loaded with :func:`load`. The names are re-exported lazily by the ``costsim`` package.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeAlias

from costsim.analysis import baseline as baselines
from costsim.analysis import cache_fidelity, cassettes
from costsim.analysis.advice import advise_caching
from costsim.analysis.breakdown import BREAKDOWNS
from costsim.analysis.cassettes import SORT_KEYS
from costsim.analysis.checks import validate_rules
from costsim.analysis.comparison import compare_variants
from costsim.analysis.report import GROUPINGS, build_report, load_traces
from costsim.api.results import (
    Advice,
    BaselineComparison,
    Breakdown,
    CacheCheck,
    Calibration,
    CassetteCheck,
    CassetteList,
    Comparison,
    Comparisons,
    Report,
    Result,
    Simulation,
    Traces,
)
from costsim.cache.rules import default_rules
from costsim.engine import Engine
from costsim.errors import ConfigError
from costsim.io.config import secrets_ignore, tool_config
from costsim.metering.evaluate import Grouping, first_folder
from costsim.metering.evaluate import calibrate as fit_and_measure
from costsim.model import CassetteTrace
from costsim.scenario import Scenario, find_scenarios, gate, load_scenario, prepare_scenario
from costsim.scenario.result import ScenarioComparison
from costsim.strategies.registry import AgentSpec, Step, Variant, parse_step

__all__ = [
    "ADVICE_TOPICS",
    "BREAKDOWN_KEYS",
    "CASSETTE_SORT_KEYS",
    "REPORT_GROUPINGS",
    "Advice",
    "BaselineComparison",
    "Breakdown",
    "CacheCheck",
    "Calibration",
    "CassetteCheck",
    "CassetteList",
    "Comparison",
    "Comparisons",
    "Report",
    "Result",
    "Scenario",
    "Simulation",
    "Traces",
    "advise",
    "calibrate",
    "check_cache",
    "check_cassettes",
    "compare",
    "compare_baselines",
    "find_scenarios",
    "list_cassettes",
    "load",
    "report",
    "scenario_variants",
    "simulate",
]

REPORT_GROUPINGS = tuple(GROUPINGS)
"""What :func:`report` can group ``by``."""
BREAKDOWN_KEYS = tuple(BREAKDOWNS)
"""What :meth:`Comparison.breakdown` can break a comparison down by."""
CASSETTE_SORT_KEYS = tuple(SORT_KEYS)
"""How :func:`list_cassettes` can sort."""

PathLike: TypeAlias = str | os.PathLike[str]
TracesLike: TypeAlias = Traces | PathLike | Iterable[PathLike] | Iterable[CassetteTrace]
StrategiesLike: TypeAlias = str | Step | Variant | Sequence[str | Step]


def _paths(paths: PathLike | Iterable[PathLike]) -> list[Path]:
    if isinstance(paths, str | os.PathLike):
        return [Path(paths)]
    return [Path(path) for path in paths]


def load(paths: PathLike | Iterable[PathLike], *, lenient: bool = False) -> Traces:
    """Load and normalise the cassettes under ``paths`` (files or folders, recursively).

    An unreadable file raises :class:`~costsim.errors.CassetteError`; with ``lenient`` it is
    skipped and listed in ``.skipped``.
    """
    traces, skipped = load_traces(_paths(paths), lenient=lenient)
    return Traces(tuple(traces), tuple(skipped))


def _traces(source: TracesLike, *, lenient: bool) -> Traces:
    if isinstance(source, Traces):
        return source
    if isinstance(source, str | os.PathLike):
        return load(source, lenient=lenient)
    items = list(source)
    if all(isinstance(item, CassetteTrace) for item in items):
        return Traces(tuple(item for item in items if isinstance(item, CassetteTrace)))
    if any(isinstance(item, CassetteTrace) for item in items):
        raise ConfigError("pass either cassette paths or loaded traces, not both")
    return load([item for item in items if isinstance(item, str | os.PathLike)], lenient=lenient)


def report(
    traces: TracesLike,
    *,
    by: str | None = None,
    as_of: datetime | None = None,
    lenient: bool = False,
) -> Report:
    """What the recorded calls were billed, per cassette or grouped ``by`` model, provider or
    flavour; priced at each call's recorded date, or all at ``as_of``."""
    loaded = _traces(traces, lenient=lenient)
    data = build_report(loaded, by=by or "cassette", as_of=_utc(as_of), skipped=loaded.skipped)
    return Report(data, skipped=loaded.skipped)


def _utc(when: datetime | None) -> datetime | None:
    if when is None or when.tzinfo is not None:
        return when
    return when.replace(tzinfo=UTC)


def _variant(strategies: StrategiesLike) -> Variant:
    if isinstance(strategies, Variant):
        return strategies
    items = [strategies] if isinstance(strategies, str | Step) else list(strategies)
    steps = tuple(item if isinstance(item, Step) else parse_step(item) for item in items)
    return Variant("variant", steps)


def simulate(
    traces: TracesLike,
    strategies: StrategiesLike = (),
    *,
    as_of: datetime | None = None,
    gap: float | None = None,
    lenient: bool = False,
) -> Simulation:
    """Replay ``traces`` under ``strategies`` (applied in order: ``"caching:ttl=1h"``, a list
    of such, or a Variant) against the recorded baseline. ``gap``: seconds between calls of
    traces without recorded dates."""
    loaded = _traces(traces, lenient=lenient)
    rules = default_rules()
    if gap is not None:
        rules = dataclasses.replace(rules, default_gap_seconds=gap)
    engine = Engine(loaded, rules=rules)
    data = compare_variants(engine, [_variant(strategies)], as_of=_utc(as_of))
    return Simulation(data, skipped=loaded.skipped)


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


def scenario_variants(scenario: PathLike) -> list[str]:
    """The names of a scenario file's variants (the file is read and validated)."""
    return [variant.name for variant in load_scenario(Path(scenario)).variants]


ADVICE_TOPICS = ("caching",)
"""What :func:`advise` can advise on."""


def advise(
    traces: TracesLike,
    topic: str = "caching",
    *,
    as_of: datetime | None = None,
    gap: float | None = None,
    lenient: bool = False,
) -> Advice:
    """The ``caching`` placement and TTL that minimise cost on ``traces``, each placement's
    saving with its p90 band in dollars, and why money is left on the table (prompts never
    re-sent, below the minimum, re-sent after the TTL, dynamic content early in the prompt)."""
    if topic not in ADVICE_TOPICS:
        raise ConfigError(f"no advice on {topic!r}; topics: {', '.join(ADVICE_TOPICS)}")
    loaded = _traces(traces, lenient=lenient)
    rules = default_rules()
    if gap is not None:
        rules = dataclasses.replace(rules, default_gap_seconds=gap)
    engine = Engine(loaded, rules=rules)
    return Advice(advise_caching(engine, as_of=_utc(as_of)), skipped=loaded.skipped)


def check_cache(traces: TracesLike, *, lenient: bool = False) -> CacheCheck:
    """Simulate recordings that used caching as recorded, and compare with what they billed."""
    loaded = _traces(traces, lenient=lenient)
    return CacheCheck(cache_fidelity.check_cache(list(loaded)), skipped=loaded.skipped)


def _grouping(roots: list[Path], pattern: str | None) -> Grouping:
    """A cassette's source: the first folder under the path it was found in, or the first
    capture group (else the whole match) of ``pattern`` in its path relative to that path."""
    import re

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
) -> Calibration:
    """The token estimator's error on the recordings under ``paths``: refitted and held out by
    source (``group``: a regex naming a cassette's source; default its first folder), or the
    shipped coefficients evaluated as they are (``shipped``)."""
    roots = _paths(paths)
    loaded = load(roots, lenient=lenient)
    data = fit_and_measure(list(loaded), group=_grouping(roots, group), shipped=shipped)
    return Calibration(data, skipped=loaded.skipped)


def list_cassettes(paths: PathLike | Iterable[PathLike], *, sort: str = "name") -> CassetteList:
    """One entry per cassette: recorded dates, LLM calls, providers, models, size."""
    return CassetteList(cassettes.list_cassettes(_paths(paths), sort=sort))


def check_cassettes(
    paths: PathLike | Iterable[PathLike],
    *,
    ignore: Iterable[str] = (),
    show_info: bool = False,
    settings_from: PathLike | None = None,
) -> CassetteCheck:
    """Unreadable cassettes, calls without (valid) usage, LLM calls costsim cannot meter and
    credentials left in recordings, each naming its rule and severity. ``ignore`` silences
    rules, as does ``[tool.costsim] secrets.ignore`` in the pyproject.toml found from
    ``settings_from`` (default: the working folder); ``show_info`` lists informational ones."""
    start = Path(settings_from) if settings_from is not None else None
    config_path, _ = tool_config(start)
    configured = validate_rules(
        secrets_ignore(start), f"{config_path} [tool.costsim] secrets.ignore"
    )
    skip = [*validate_rules(ignore, "--ignore"), *configured]
    return CassetteCheck(cassettes.check_cassettes(_paths(paths), ignore=skip, show_info=show_info))


def compare_baselines(old: PathLike, new: PathLike, *, fail: str = "cost:5%") -> BaselineComparison:
    """Two baselines saved by ``pytest --costsim-save``: regressions beyond the tolerances of
    ``fail`` (``cost:5%,prompt_tokens:10%``), improvements, new and gone tests."""
    data = baselines.compare_baselines(
        baselines.load_baseline(Path(old)),
        baselines.load_baseline(Path(new)),
        baselines.parse_tolerances(fail),
    )
    return BaselineComparison(data)
