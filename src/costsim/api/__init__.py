"""costsim's public API: every command of the CLI is one function here, returning a result
with ``.to_json()`` (the document the CLI writes) and ``.render(fmt)``::

    import costsim

    traces = costsim.load("cassettes/")
    print(costsim.report(traces).render("table"))           # what was billed
    print(costsim.simulate(traces, "caching:ttl=1h").saving)  # one what-if variant
    comparison = costsim.compare("scenarios/coding_agent.yaml")  # a scenario's variants

Options are keyword-only. Inputs that name cassettes take a path, a list of paths, or traces
already loaded with :func:`load`; folders are walked as ruff and pytest walk them (hidden
folders, virtual environments and ``site-packages`` skipped; ``include`` / ``exclude`` globs).
Long runs report through ``progress(what, done, total)``. The names are re-exported lazily by
the ``costsim`` package.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from costsim.api._advice import ADVICE_TOPICS, advise
    from costsim.api._catalog import compare_baselines, list_baselines, list_strategies
    from costsim.api._scenarios import compare, compare_scenarios, scenario_variants
    from costsim.api._traffic import (
        PathLike,
        StrategiesLike,
        TracesLike,
        calibrate,
        check_cache,
        check_cassettes,
        estimator,
        list_cassettes,
        load,
        report,
        simulate,
    )
    from costsim.api.execution import (
        cache_damage,
        cache_info,
        cache_problem,
        clear_cache,
        configured,
    )
    from costsim.api.recall import Transcript, comparison_key, recall_output, remember_output
    from costsim.api.results import (
        Advice,
        BaselineComparison,
        BaselineList,
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
        Strategies,
        Traces,
    )
    from costsim.io.walk import Progress
    from costsim.providers.normalise import CALL_LEFT_OUT
    from costsim.render.options import EXTENSIONS, FORMATS, format_for
    from costsim.scenario import Scenario, find_scenarios

__all__ = [
    "ADVICE_TOPICS",
    "BREAKDOWN_KEYS",
    "CALL_LEFT_OUT",
    "CASSETTE_SORT_KEYS",
    "EXTENSIONS",
    "FORMATS",
    "REPORT_GROUPINGS",
    "Advice",
    "BaselineComparison",
    "BaselineList",
    "Breakdown",
    "CacheCheck",
    "Calibration",
    "CassetteCheck",
    "CassetteList",
    "Comparison",
    "Comparisons",
    "PathLike",
    "Progress",
    "Report",
    "Result",
    "Scenario",
    "Simulation",
    "Strategies",
    "StrategiesLike",
    "Traces",
    "TracesLike",
    "Transcript",
    "advise",
    "cache_damage",
    "cache_info",
    "cache_problem",
    "calibrate",
    "check_cache",
    "check_cassettes",
    "clear_cache",
    "compare",
    "compare_baselines",
    "compare_scenarios",
    "comparison_key",
    "configured",
    "estimator",
    "find_scenarios",
    "format_for",
    "list_baselines",
    "list_cassettes",
    "list_strategies",
    "load",
    "recall_output",
    "remember_output",
    "report",
    "scenario_variants",
    "simulate",
]

_HOMES = {
    "ADVICE_TOPICS": "costsim.api._advice",
    "advise": "costsim.api._advice",
    "compare_baselines": "costsim.api._catalog",
    "list_baselines": "costsim.api._catalog",
    "list_strategies": "costsim.api._catalog",
    "compare": "costsim.api._scenarios",
    "compare_scenarios": "costsim.api._scenarios",
    "scenario_variants": "costsim.api._scenarios",
    "PathLike": "costsim.api._traffic",
    "StrategiesLike": "costsim.api._traffic",
    "TracesLike": "costsim.api._traffic",
    "calibrate": "costsim.api._traffic",
    "check_cache": "costsim.api._traffic",
    "check_cassettes": "costsim.api._traffic",
    "estimator": "costsim.api._traffic",
    "list_cassettes": "costsim.api._traffic",
    "load": "costsim.api._traffic",
    "report": "costsim.api._traffic",
    "simulate": "costsim.api._traffic",
    "cache_damage": "costsim.api.execution",
    "cache_info": "costsim.api.execution",
    "cache_problem": "costsim.api.execution",
    "clear_cache": "costsim.api.execution",
    "configured": "costsim.api.execution",
    "Transcript": "costsim.api.recall",
    "comparison_key": "costsim.api.recall",
    "recall_output": "costsim.api.recall",
    "remember_output": "costsim.api.recall",
    "Advice": "costsim.api.results",
    "BaselineComparison": "costsim.api.results",
    "BaselineList": "costsim.api.results",
    "Breakdown": "costsim.api.results",
    "CacheCheck": "costsim.api.results",
    "Calibration": "costsim.api.results",
    "CassetteCheck": "costsim.api.results",
    "CassetteList": "costsim.api.results",
    "Comparison": "costsim.api.results",
    "Comparisons": "costsim.api.results",
    "Report": "costsim.api.results",
    "Result": "costsim.api.results",
    "Simulation": "costsim.api.results",
    "Strategies": "costsim.api.results",
    "Traces": "costsim.api.results",
    "Progress": "costsim.io.walk",
    "CALL_LEFT_OUT": "costsim.providers.normalise",
    "EXTENSIONS": "costsim.render.options",
    "FORMATS": "costsim.render.options",
    "format_for": "costsim.render.options",
    "Scenario": "costsim.scenario",
    "find_scenarios": "costsim.scenario",
}
"""Where each public name lives: imported on first use, so that importing one module of the
API (the pytest plugin's :mod:`costsim.api.testing`) does not import all of it."""

_VOCABULARIES = {
    "REPORT_GROUPINGS": ("costsim.analysis.report", "GROUPINGS"),
    "BREAKDOWN_KEYS": ("costsim.analysis.breakdown", "BREAKDOWNS"),
    "CASSETTE_SORT_KEYS": ("costsim.analysis.cassettes", "SORT_KEYS"),
}
"""What :func:`report` can group ``by``; what :meth:`Comparison.breakdown` (``compare --by``)
can break a comparison down by (the report's groupings, and agent roles and tools, which only
a scenario knows); how :func:`list_cassettes` can sort. Each a tuple of names."""

REPORT_GROUPINGS: tuple[str, ...]
BREAKDOWN_KEYS: tuple[str, ...]
CASSETTE_SORT_KEYS: tuple[str, ...]


def __getattr__(name: str) -> Any:
    if name in _VOCABULARIES:
        module, attribute = _VOCABULARIES[name]
        value: Any = tuple(getattr(import_module(module), attribute))
    elif name in _HOMES:
        value = getattr(import_module(_HOMES[name]), name)
    else:
        raise AttributeError(f"module 'costsim.api' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
