"""costsim: what recorded LLM traffic cost, and what each optimisation would save.

The public API (:mod:`costsim.api`) is re-exported here lazily, so ``import costsim`` stays
cheap (the pytest plugin imports it in every test run)::

    import costsim

    comparison = costsim.compare("scenarios/coding_agent.yaml")
    print(comparison.render("table"))
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from costsim.errors import CostsimError

if TYPE_CHECKING:
    from costsim.api import (
        Advice,
        BaselineComparison,
        BaselineList,
        CacheCheck,
        Calibration,
        CassetteCheck,
        CassetteList,
        Comparison,
        Comparisons,
        Report,
        Scenario,
        Simulation,
        Strategies,
        Traces,
        advise,
        calibrate,
        check_cache,
        check_cassettes,
        compare,
        compare_baselines,
        compare_scenarios,
        list_baselines,
        list_cassettes,
        list_strategies,
        load,
        report,
        simulate,
    )

__all__ = [
    "Advice",
    "BaselineComparison",
    "BaselineList",
    "CacheCheck",
    "Calibration",
    "CassetteCheck",
    "CassetteList",
    "Comparison",
    "Comparisons",
    "CostsimError",
    "Report",
    "Scenario",
    "Simulation",
    "Strategies",
    "Traces",
    "__version__",
    "advise",
    "calibrate",
    "check_cache",
    "check_cassettes",
    "compare",
    "compare_baselines",
    "compare_scenarios",
    "list_baselines",
    "list_cassettes",
    "list_strategies",
    "load",
    "report",
    "simulate",
]


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("costsim")
    except PackageNotFoundError:  # running from a source tree without installing
        return "0.0.0"


def __getattr__(name: str) -> Any:
    """The public API and ``__version__``, imported on first use (``importlib.metadata``
    alone would cost the pytest plugin's import ~10 ms in every test run)."""
    if name == "__version__":
        return _version()
    if name in __all__:
        from costsim import api

        return getattr(api, name)
    raise AttributeError(f"module 'costsim' has no attribute {name!r}")
