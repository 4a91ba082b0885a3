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

from costsim.analysis.breakdown import BREAKDOWNS
from costsim.analysis.cassettes import SORT_KEYS
from costsim.analysis.report import GROUPINGS
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
    list_cassettes,
    load,
    report,
    simulate,
)
from costsim.api.execution import cache_info, clear_cache, configured
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
from costsim.render.formats import EXTENSIONS, FORMATS, format_for
from costsim.scenario import Scenario, find_scenarios

__all__ = [
    "ADVICE_TOPICS",
    "BREAKDOWN_KEYS",
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
    "advise",
    "cache_info",
    "calibrate",
    "check_cache",
    "check_cassettes",
    "clear_cache",
    "compare",
    "compare_baselines",
    "compare_scenarios",
    "configured",
    "find_scenarios",
    "format_for",
    "list_baselines",
    "list_cassettes",
    "list_strategies",
    "load",
    "report",
    "scenario_variants",
    "simulate",
]

REPORT_GROUPINGS = tuple(GROUPINGS)
"""What :func:`report` can group ``by``."""
BREAKDOWN_KEYS = tuple(BREAKDOWNS)
"""What :meth:`Comparison.breakdown` (``compare --by``) can break a comparison down by: the
report's groupings, and agent roles and tools, which only a scenario knows."""
CASSETTE_SORT_KEYS = tuple(SORT_KEYS)
"""How :func:`list_cassettes` can sort."""
