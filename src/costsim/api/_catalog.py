"""The API for finding one's way: the registered strategies, and the baselines a project
has saved."""

from __future__ import annotations

from pathlib import Path

from costsim.analysis import baseline_store
from costsim.analysis.baseline import parse_tolerances
from costsim.api._traffic import PathLike
from costsim.api.results import BaselineComparison, BaselineList, Strategies
from costsim.strategies.catalog import describe_strategies

__all__ = ["compare_baselines", "list_baselines", "list_strategies"]


def list_strategies(name: str | None = None) -> Strategies:
    """Every registered strategy (built-in and from ``costsim.strategies`` entry points) with
    its parameters, types, defaults and meanings; or the one ``name``d ("did you mean" when
    it is unknown)."""
    return Strategies(describe_strategies(name))


def list_baselines(folder: PathLike | None = None) -> BaselineList:
    """The baselines ``pytest --costsim-save NAME`` saved in the project's ``.costsim`` folder
    (found from the working folder as pytest finds its root; or ``folder``). A file that
    cannot be read is listed with why, and is a warning: the others are still listed."""
    home = Path(folder) if folder is not None else None
    listing = baseline_store.list_baselines(home)
    unreadable = tuple(f"skipped {item.error}" for item in listing[1] if item.error is not None)
    return BaselineList(listing, warnings=unreadable)


def compare_baselines(
    old: PathLike,
    new: PathLike,
    *,
    fail: str = "cost:5%",
    folder: PathLike | None = None,
) -> BaselineComparison:
    """Two baselines, each a saved name (``main``: ``.costsim/main.json``) or a path:
    regressions beyond the tolerances of ``fail`` (``cost:5%,prompt_tokens:10``),
    improvements, new and gone tests."""
    home = Path(folder) if folder is not None else None
    diff = baseline_store.diff_baselines(str(old), str(new), parse_tolerances(fail), home)
    return BaselineComparison(diff)
