"""costsim: what recorded LLM traffic cost, and what each optimisation would save.

The public API (:mod:`costsim.api`) is re-exported here lazily, so ``import costsim`` stays
cheap (the pytest plugin imports it in every test run)::

    import costsim

    comparison = costsim.compare("scenarios/coding_agent.yaml")
    print(comparison.render("table"))
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any

from costsim.errors import CostsimError

if TYPE_CHECKING:
    from costsim.api import (
        Advice,
        BaselineComparison,
        CacheCheck,
        Calibration,
        CassetteCheck,
        CassetteList,
        Comparison,
        Comparisons,
        Report,
        Scenario,
        Simulation,
        Traces,
        advise,
        calibrate,
        check_cache,
        check_cassettes,
        compare,
        compare_baselines,
        list_cassettes,
        load,
        report,
        simulate,
    )

__all__ = [
    "Advice",
    "BaselineComparison",
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
    "Traces",
    "__version__",
    "advise",
    "calibrate",
    "check_cache",
    "check_cassettes",
    "compare",
    "compare_baselines",
    "list_cassettes",
    "load",
    "report",
    "simulate",
]

try:
    __version__ = version("costsim")
except PackageNotFoundError:  # running from a source tree without installing
    __version__ = "0.0.0"


def __getattr__(name: str) -> Any:
    """The public API, imported on first use."""
    if name in __all__:
        from costsim import api

        return getattr(api, name)
    raise AttributeError(f"module 'costsim' has no attribute {name!r}")
