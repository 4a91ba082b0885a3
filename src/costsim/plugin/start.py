"""The start of a ``pytest --costsim`` run: read and check what it asks, then start metering.

Everything asked is checked before any test runs (a bad option or setting is a usage error,
never a failure at the end); then calls are metered in a metering process beside the tests
where one can be forked (:mod:`costsim.plugin.helper`), else in the test process. Light on
purpose: a run that asks nothing unusual imports neither the engine nor the price lists here.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from costsim.errors import CostsimError
from costsim.plugin.run import REPORT_SUFFIXES, Setup, baseline_path, read_settings

if TYPE_CHECKING:
    from costsim.plugin.local import LocalState
    from costsim.plugin.recorder import Recorder
    from costsim.plugin.settings import PluginSettings

    State = LocalState | Recorder
    """What the hooks talk to: calls metered here, or noted for the metering process."""

__all__ = ["configure"]


def _project_file(config: pytest.Config) -> Path:
    inifile = config.inipath
    if inifile is not None and inifile.name == "pyproject.toml":
        return inifile
    return Path(str(config.rootpath)) / "pyproject.toml"


def configure(config: pytest.Config, settings_key: pytest.StashKey[PluginSettings | None]) -> State:
    """Check what the run asks (a usage error before any test runs), then start metering: in
    a metering process beside the tests where one can fork, else in this one."""
    from costsim.api.gates import parse_tolerances

    project = _project_file(config)
    settings = read_settings(project)
    config.stash[settings_key] = settings
    setup = _setup(config, project, settings)
    if config.getoption("costsim_strategies"):
        from costsim.api.testing import parse_strategies

        parse_strategies(config.getoption("costsim_strategies"))
    parse_tolerances(config.getoption("costsim_fail"))
    top = config.getoption("costsim_top")
    if top is not None and top < 0:
        raise CostsimError(f"--costsim-top must be 0 or more, not {top}")
    for report in config.getoption("costsim_report") or ():
        if Path(report).suffix.lower() not in REPORT_SUFFIXES:
            raise CostsimError(
                f"--costsim-report {report}: cannot tell which format to write to "
                f"{Path(report).suffix or 'a file without an extension'} "
                "(use .json, .md or .html)"
            )
    root = Path(str(config.rootpath))
    if config.getoption("costsim_save"):
        baseline_path(root, config.getoption("costsim_save"))
    if config.getoption("costsim_compare"):
        from costsim.api.testing import load_baseline

        load_baseline(baseline_path(root, config.getoption("costsim_compare")))
    state = _state(config, setup)
    state.install()
    return state


def _setup(config: pytest.Config, project: Path, settings: PluginSettings | None) -> Setup:
    if settings is None:
        return Setup(
            drift=config.getoption("costsim_drift") or "warn",
            warm=config.getoption("costsim_warm") or "steady",
        )
    notes: tuple[str, ...] = ()
    if settings.costsim is not None:
        notes = (
            "[tool.costsim] costsim no longer turns costsim on: set costsim = true under "
            "[tool.pytest.ini_options] (or pass --costsim)",
        )
    return Setup(
        drift=config.getoption("costsim_drift") or settings.drift or "warn",
        warm=config.getoption("costsim_warm") or settings.warm or "steady",
        calibration=settings.calibration_file(project),
        pattern_budgets=tuple(settings.pattern_budgets()),
        notes=notes,
    )


def _state(config: pytest.Config, setup: Setup) -> State:
    """A metering process's recorder, unless this is an xdist worker or controller (they
    meter here: workers run in parallel already) or a process cannot be forked safely."""
    from costsim.plugin.helper import forkable

    xdist = hasattr(config, "workerinput") or getattr(config.option, "dist", "no") != "no"
    if not xdist and forkable():
        from costsim.plugin.recorder import Recorder

        recorder = Recorder.start(setup)
        if recorder is not None:
            return recorder
    from costsim.plugin.local import LocalState

    return LocalState(setup)
