"""Metering a test run's calls in one process: this one, or the metering process.

:class:`LocalState` is what the hooks talk to when calls are metered where they are seen (a
run without a second core, an xdist worker or controller, ``COSTSIM_METER_PROCESS=0``); the
metering process of :mod:`costsim.plugin.helper` runs one too, fed by the test process. Both
doors give the same figures, because both are this class over one
:class:`~costsim.plugin.session.CostsimSession`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from costsim.api.testing import MeteredCall, TestMeter
from costsim.plugin.finish import finish
from costsim.plugin.render import SummaryOptions, summary_lines
from costsim.plugin.run import FIRST_RUN_NOTE, Run, Setup
from costsim.plugin.session import CostsimSession

__all__ = ["LocalState"]


class LocalState:
    """A run's state and its ends (figures, failures, summary), metered here."""

    def __init__(self, setup: Setup) -> None:
        self.session = CostsimSession()
        self.session.drift = setup.drift  # type: ignore[assignment]
        self.session.pattern_budgets.extend(setup.pattern_budgets)
        self.session.notes.extend(setup.notes)
        self.session.meter = TestMeter(setup.calibration, warm=setup.warm)
        if setup.warm == "first":  # the assumption behind drifted calls and what-if columns
            self.session.notes.append(FIRST_RUN_NOTE)
        self._stored: dict[tuple[str, int, int, int], tuple[Any, Mapping[str, Any]]] = {}
        self._summary: tuple[SummaryOptions, list[str] | Exception] | None = None

    # --- what the hooks keep (shared with the test process's recorder) -------------------

    @property
    def budgets(self) -> dict[str, Any]:
        return self.session.budgets

    @property
    def tolerances(self) -> dict[str, dict[str, float]]:
        return self.session.tolerances

    @property
    def usage_errors(self) -> list[str]:
        return self.session.usage_errors

    @property
    def selected(self) -> set[str]:
        return self.session.selected

    @property
    def internal_errors(self) -> list[str]:
        return self.session.internal_errors

    @contextmanager
    def attributing(self, name: str) -> Iterator[None]:
        with self.session.attributing(name):
            yield

    def install(self) -> None:
        self.session.install()

    def uninstall(self) -> None:
        self.session.uninstall()

    def close(self) -> None:
        """Nothing runs elsewhere."""

    # --- observing -----------------------------------------------------------------------

    def observe(
        self,
        test: str,
        file: str,
        shown: str,
        index: int,
        request: Any,
        response: Mapping[str, Any],
        stored: Any,
        stamp: tuple[str, int, int, int] | None,
    ) -> None:
        """One call, seen by the test process while ``test`` ran, of the cassette at
        ``file`` (absolute: the test process may have changed folder) that reports name
        ``shown``; ``stamp`` names a replayed interaction of an unchanged file, whose request
        and response are then kept, so that its next replays (:meth:`observe_again`) need not
        be sent again."""
        if stamp is not None and stored is not None:
            self._stored.setdefault(stamp, (stored, response))
        with self.session.attributing(test):
            self.session.observe(file, index, request, response, stored, shown=shown)

    def observe_again(
        self, test: str, file: str, shown: str, index: int, stamp: tuple[str, int, int, int]
    ) -> None:
        """A replay, sent as recorded, of an interaction :meth:`observe` has seen."""
        stored, response = self._stored[stamp]
        self.observe(test, file, shown, index, stored, response, stored, None)

    # --- the ends ------------------------------------------------------------------------

    def calls(self, test: str) -> list[MeteredCall]:
        return self.session.calls(test)

    def _apply(self, run: Run) -> None:
        """What the test process kept (markers, the tests selected) joins the session."""
        session = self.session
        session.budgets.update(run.budgets)
        session.tolerances.update(run.tolerances)
        session.usage_errors.extend(e for e in run.usage_errors if e not in session.usage_errors)
        session.internal_errors.extend(run.internal_errors)
        session.selected.update(run.selected)
        session.order = session.order or list(run.order)
        session.deselected.update(run.deselected)
        session.whole_files.update(run.whole_files)
        session.root = run.root
        strategies = run.option("strategies")
        if strategies:
            session.what_if(strategies)

    def finish(self, run: Run, summary: SummaryOptions | None = None) -> list[str]:
        """Gates, baselines and report files: the failures of the costsim part."""
        self._apply(run)
        return finish(run, self.session)

    def worker_output(self, run: Run) -> str:
        """An xdist worker's figures, for the controller."""
        self._apply(run)
        return self.session.worker_output()

    def merge_worker(self, output: str) -> None:
        self.session.merge_worker(output)

    def meter(self, tests: set[str]) -> None:
        """Meter ``tests``' calls ahead of the end (each is memoised until it calls again).
        Only a head start: a test whose calls fail to meter here fails again at the end,
        where the failure is reported, so it is not reported twice."""
        for test in tests:
            with contextlib.suppress(Exception):
                self.session.calls(test)

    def prepare_summary(self, options: SummaryOptions | None) -> None:
        """Render the summary ahead of the test process asking for it (a failure is kept
        for the asking)."""
        if options is None:
            return
        try:
            self._summary = (options, summary_lines(self.session, options))
        except Exception as exc:
            self._summary = (options, exc)

    def summary(self, options: SummaryOptions) -> list[str]:
        prepared = self._summary
        if prepared is not None and prepared[0] == options:
            if isinstance(prepared[1], Exception):
                raise prepared[1]
            return prepared[1]
        return summary_lines(self.session, options)
