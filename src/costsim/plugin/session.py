"""State of a ``pytest --costsim`` run: which test made which LLM call, and what it cost.

Each call vcrpy replays or records is normalised and metered by the library and attributed to
the test (or fixture scope) running at the time. Under pytest-xdist every worker keeps its own
session and hands its figures to the controller (:meth:`CostsimSession.worker_output`).
"""

from __future__ import annotations

import fnmatch
import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from costsim.api.testing import (
    Budget,
    EmbeddingTotals,
    MeteredCall,
    TestCost,
    TestMeter,
    Totals,
    WhatIfCost,
    budget_failures,
    read_vcr_interaction,
)
from costsim.errors import CostsimError
from costsim.model import LEFT_OUT_KINDS, Call, EmbeddingCall, InteractionNote, NoteKind
from costsim.model.ordering import naturally
from costsim.plugin.budget_patterns import idle
from costsim.plugin.drift_entry import DriftEntry
from costsim.plugin.observe import Observed, sent_call
from costsim.plugin.settings import DriftMode
from costsim.plugin.vcr_patch import Observing, VcrPatch
from costsim.render.text import display_path

__all__ = ["CostsimSession", "DriftEntry", "TestLedger"]


_USAGE = frozenset({NoteKind.INVALID_USAGE, NoteKind.INCOMPLETE_STREAM, NoteKind.NO_USAGE})
"""Notes that say why a call's recorded usage could not be used."""


@dataclass  # not slotted: its base, Observing, is a plain class
class CostsimSession(Observing):
    """Everything a costsim-enabled pytest run collects."""

    drift: DriftMode = "warn"
    """``ignore`` meters replayed calls as recorded, whatever the code sends now."""
    current: str = "<outside tests>"
    observed: dict[str, list[Observed]] = field(default_factory=dict)
    merged: dict[str, TestCost] = field(default_factory=dict)
    """Figures from xdist workers, merged on the controller."""
    merged_drift: list[DriftEntry] = field(default_factory=list)
    budgets: dict[str, Budget] = field(default_factory=dict)
    pattern_budgets: list[tuple[str, Budget]] = field(default_factory=list)
    tolerances: dict[str, dict[str, float]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    """LLM calls that could not be metered."""
    unreadable: dict[str, int] = field(default_factory=dict)
    """Per test, its calls that could not be metered: its cost is partial (a worker's go
    into the costs it sends)."""
    unrecognised: dict[str, int] = field(default_factory=dict)
    """Per test, the interactions it replayed that look like LLM calls costsim cannot meter
    (each also a note, as report notes it; a worker's go into the costs it sends)."""
    embeddings: EmbeddingTotals = field(default_factory=EmbeddingTotals)
    """The embeddings requests of the run (each replay, as an LLM call's; workers' too), as
    ``costsim report`` prices them: in no test's figures, budget or baseline; said beside."""
    internal_errors: list[str] = field(default_factory=list)
    """costsim's own failures: reported, and they fail the costsim part of the run."""
    notes: list[str] = field(default_factory=list)
    what_if_costs: dict[str, dict[str, WhatIfCost]] = field(default_factory=dict)
    """Per test, each --costsim-strategies variant's simulated cost (merged from workers)."""
    what_if_notes: dict[str, list[str]] = field(default_factory=dict)
    """Per what-if variant, the distinct notes its strategies gave (why one could not act)."""
    usage_errors: list[str] = field(default_factory=list)
    """Bad markers found by xdist workers (they cannot stop the run themselves)."""
    selected: set[str] = field(default_factory=set)
    """Node ids of the tests this run collected (after deselection), workers' included."""
    order: list[str] = field(default_factory=list)
    """Node ids of the tests in collection order (every process collects them alike)."""
    deselected: set[str] = field(default_factory=set)
    """Node ids of the tests left out and announced so (-k, -m, --deselect), workers'
    included."""
    whole_files: set[str] = field(default_factory=set)
    """Test files collected whole (see :attr:`Run.whole_files`), workers' included."""
    root: Path | None = None
    """pytest's rootdir, which test ids are relative to (known when the run finishes)."""
    meter: TestMeter = field(default_factory=TestMeter)
    _metered: dict[str, tuple[int, list[MeteredCall]]] = field(default_factory=dict)
    _patch: VcrPatch | None = None
    _noted: set[str] = field(default_factory=set)
    """The notes :meth:`_not_metered` gave (a test replaying the same interaction: once)."""
    _replayed: dict[tuple[str, int, int, int], Call | InteractionNote | EmbeddingCall | None] = (
        field(default_factory=dict)
    )
    """Recorded calls (or notes) read already, by (cassette, interaction, file's mtime and
    size): a cassette replayed by many tests is read once while its file is unchanged."""

    # --- observing vcrpy -------------------------------------------------------------------

    def _recorded(
        self,
        file: str,
        cassette_path: str,
        index: int,
        request: Any,
        response: Mapping[str, Any],
        stored: Any,
    ) -> Call | InteractionNote | EmbeddingCall | None:
        """The call as the cassette holds it (a recorded one: as it was sent), the note
        of an interaction that looks like an LLM call costsim cannot meter, or the embeddings
        request it is."""
        if stored is None:
            return read_vcr_interaction(cassette_path, index, request, response)
        try:
            status = os.stat(file)
        except OSError:
            return read_vcr_interaction(cassette_path, index, stored, response)
        key = (os.path.abspath(file), index, status.st_mtime_ns, status.st_size)
        if key not in self._replayed:
            self._replayed[key] = read_vcr_interaction(cassette_path, index, stored, response)
        return self._replayed[key]

    def observe(
        self,
        cassette_path: str,
        index: int,
        request: Any,
        response: Mapping[str, Any],
        stored: Any = None,
        *,
        shown: str | None = None,
    ) -> None:
        """Note one replayed (``stored`` is the cassette's request) or recorded interaction;
        ``shown``: how reports name the cassette (default: relative to the working folder).

        A call that cannot be read is noted, never raised: the user's test must not fail
        because of costsim. The run fails on it afterwards unless lenient.
        """
        file = cassette_path
        cassette_path = shown or display_path(Path(cassette_path))  # relative: reports travel
        try:
            recorded = self._recorded(file, cassette_path, index, request, response, stored)
            if recorded is None:
                return
            if isinstance(recorded, InteractionNote):
                self._not_metered(recorded)
                return
            if isinstance(recorded, EmbeddingCall):  # as recorded (or estimated from its input)
                self.embeddings.add(recorded, None)  # at its recorded date, as calls are
                return
            observed = Observed(recorded)
            if stored is not None and self.drift != "ignore":
                observed = sent_call(cassette_path, index, request, stored, response, recorded)
        except CostsimError as exc:
            self.errors.append(f"{self.current}: {exc}")
            self.unreadable[self.current] = self.unreadable.get(self.current, 0) + 1
            return
        except Exception as exc:  # a costsim bug must not fail the user's test
            self.internal_errors.append(
                f"{self.current}: {cassette_path} interaction {index}: costsim could not meter "
                f"it ({type(exc).__name__}: {exc}); please report it"
            )
            return
        if observed.unread:
            said = f"drift not checked, the request it sent is unreadable: {observed.unread}"
            self.notes.append(f"{self.current}: {said}")
        self.observed.setdefault(self.current, []).append(observed)

    def _not_metered(self, found: InteractionNote) -> None:
        """An LLM-looking interaction costsim cannot meter (counted for the test) or an
        embeddings request it cannot count: noted once per test, as report notes it."""
        if found.note.kind in LEFT_OUT_KINDS:  # in no LLM figure: the test's cost unknown
            self.unrecognised[self.current] = self.unrecognised.get(self.current, 0) + 1
        where = f"{display_path(found.provenance.path)}: interaction {found.provenance.index}"
        said = f"[{found.note.kind}] {self.current}: {where}: {found.note.message}"
        if said not in self._noted:
            self._noted.add(said)
            self.notes.append(said)

    # --- metering --------------------------------------------------------------------------

    def calls(self, test: str) -> list[MeteredCall]:
        """``test``'s calls, metered (memoised until the test makes another call)."""
        observed = self.observed.get(test, [])
        cached = self._metered.get(test)
        if cached is None or cached[0] != len(observed):
            recorded = [item.recorded for item in observed]
            sent = [item.sent or item.recorded for item in observed]
            cached = self._metered[test] = (len(observed), self.meter.as_sent(recorded, sent))
        return cached[1]

    def what_if(self, strategies: str) -> None:
        """Each test's cost under each ``--costsim-strategies`` variant, as the code sent it
        (a call that could not be read is unpriced in each, as in the test's own cost)."""
        tests = {
            test: ([i.recorded for i in items], [i.sent or i.recorded for i in items])
            for test, items in self.observed.items()
        }
        for test in self.unrecognised:  # a row with no call metered has a what-if too
            tests.setdefault(test, ([], []))
        costs = self.meter.what_if(
            tests,
            strategies,
            unreadable=self.unreadable,
            unmetered=self.unrecognised,
            notes=self.what_if_notes,
        )
        self.what_if_costs.update(costs)
        for said in self.what_if_notes.values():  # one order, however xdist split the run
            said.sort()

    # --- results -------------------------------------------------------------------------

    def drifted(self) -> list[DriftEntry]:
        """Every drifted call of the run (this process's and the workers'): by test in
        collection order, each test's calls in the order it made them (whichever worker ran
        it, and whenever)."""
        entries = list(self.merged_drift)
        for test, observed in self.observed.items():
            if not any(item.differences for item in observed):
                continue
            metered = self.calls(test)
            recorded = self.meter.recorded([item.recorded for item in observed])
            for item, sent, was in zip(observed, metered, recorded, strict=True):
                if item.differences:
                    entries.append(self._drift_entry(test, item, sent, was))
        place = {test: index for index, test in enumerate(self.order)}
        # stable: a test's calls stay in order; fixture scopes go last, by name
        return sorted(entries, key=lambda entry: (place.get(entry.test, len(place)), entry.test))

    def _drift_entry(
        self, test: str, item: Observed, sent: MeteredCall, recorded: MeteredCall
    ) -> DriftEntry:
        prompt = (
            sent.usage.prompt_total - recorded.usage.prompt_total
            if sent.usage is not None and recorded.usage is not None
            else None
        )
        amounts = (sent.price, recorded.price)
        cost = (
            amounts[0].amount - amounts[1].amount
            if amounts[0] is not None
            and amounts[1] is not None
            and amounts[0].amount is not None
            and amounts[1].amount is not None
            else None
        )
        provenance = item.recorded.provenance
        return DriftEntry(
            test, display_path(provenance.path), provenance.index, item.differences, prompt, cost
        )

    def costs(self) -> dict[str, TestCost]:
        costs = {}
        for name, observed in self.observed.items():
            costs[name] = TestCost.of(self.calls(name))
            costs[name].drifted_calls = sum(bool(item.differences) for item in observed)
            unrecorded = [
                item.recorded
                for item in observed
                if item.recorded.usage is None and not item.recorded.errored
            ]
            costs[name].unrecorded_calls = len(unrecorded)
            costs[name].unrecorded = [
                f"{display_path(call.provenance.path)} interaction {call.provenance.index}: "
                + next((n.message for n in call.notes if n.kind in _USAGE), "no usage recorded")
                for call in unrecorded
            ]
        for name, count in self.unreadable.items():  # unknown cost: the test's is partial
            cost = costs.setdefault(name, TestCost())
            cost.calls += count
            cost.unpriced_calls += count
        for name, count in self.unrecognised.items():  # in no figure: counted apart
            costs.setdefault(name, TestCost()).unrecognised_calls += count
        for name, cost in self.merged.items():
            if name in costs:
                costs[name].merge(cost)
            else:
                costs[name] = cost
        return costs

    def merge_what_if(self, test: str, columns: Mapping[str, WhatIfCost]) -> None:
        """Add a worker's what-if costs for ``test`` (a fixture scope may run on several)."""
        mine = self.what_if_costs.setdefault(test, {})
        for name, value in columns.items():
            mine[name] = mine[name] + value if name in mine else value

    def budget_for(self, test: str) -> list[Budget]:
        found = [b for pattern, b in self.pattern_budgets if fnmatch.fnmatchcase(test, pattern)]
        if test in self.budgets:
            found.append(self.budgets[test])
        return found

    def idle_patterns(self, tested: Iterable[str]) -> list[str]:
        """Budget patterns no test of the run matches (``tested``, selected, or deselected by
        ``-k``: a pattern for those is right, only not in use this run): they check nothing.
        A pattern for the tests of a file that exists but that this run did not collect
        (``pytest tests/test_one.py`` with budgets for the others) is not in use either."""
        tests = self.selected | self.deselected | set(tested)
        return idle([pattern for pattern, _ in self.pattern_budgets], tests, self.root)

    def failures(self) -> list[str]:
        failures = []
        costs = self.costs()
        for test in naturally(costs):
            cost = costs[test]
            for budget in self.budget_for(test):
                failures.extend(budget_failures(test, cost, budget))
        return failures

    # --- xdist -----------------------------------------------------------------------------

    def worker_output(self) -> str:
        """This worker's figures, for the controller (:meth:`merge_worker`). Never raises: if
        the figures cannot be gathered, the controller is told why instead."""
        try:
            figures: dict[str, Any] = {
                "tests": {name: cost.to_json() for name, cost in self.costs().items()},
                "what_if": {
                    test: {name: cost.to_json() for name, cost in columns.items()}
                    for test, columns in self.what_if_costs.items()
                },
                "what_if_notes": self.what_if_notes,
                "errors": self.errors,
                "notes": self.notes,
                "embeddings": self.embeddings.to_json(listed=True),
                "drift": [entry.to_json() for entry in self.drifted()],
                "budgets": {
                    name: budget.model_dump(exclude_none=True)
                    for name, budget in self.budgets.items()
                },
                "tolerances": self.tolerances,
                "usage_errors": self.usage_errors,
                "selected": sorted(self.selected),
                "order": self.order,
                "deselected": sorted(self.deselected),
                "whole_files": sorted(self.whole_files),
            }
        except Exception as exc:  # costsim's own bug: the controller must hear of it
            figures = {"tests": {}}
            self.internal_errors.append(
                f"a worker's figures: {type(exc).__name__}: {exc} (a costsim bug; please report it)"
            )
        figures["internal_errors"] = self.internal_errors
        return json.dumps(figures)

    def merge_worker(self, output: str) -> None:
        figures = json.loads(output)
        for name, data in figures.get("tests", {}).items():
            cost = TestCost.from_json(data)
            if name in self.merged:
                self.merged[name].merge(cost)
            else:
                self.merged[name] = cost
        for test, columns in figures.get("what_if", {}).items():
            self.merge_what_if(
                test, {name: WhatIfCost.from_json(value) for name, value in columns.items()}
            )
        for name, said in figures.get("what_if_notes", {}).items():
            mine = self.what_if_notes.setdefault(name, [])
            mine[:] = sorted({*mine, *said})  # one order, whichever worker reports first
        self.embeddings.merge(EmbeddingTotals.from_json(figures.get("embeddings", {})))
        self.errors.extend(figures.get("errors", []))
        self.notes.extend(figures.get("notes", []))
        self.internal_errors.extend(figures.get("internal_errors", []))
        # every worker collects every test, so each finds the same bad marker: one error
        self.usage_errors.extend(
            e for e in figures.get("usage_errors", []) if e not in self.usage_errors
        )
        self.selected.update(figures.get("selected", []))
        self.order = self.order or list(figures.get("order", []))
        self.deselected.update(figures.get("deselected", []))
        self.whole_files.update(figures.get("whole_files", []))
        self.merged_drift.extend(DriftEntry.from_json(entry) for entry in figures.get("drift", []))
        for name, values in figures.get("budgets", {}).items():
            self.budgets[name] = Budget.parse(values, name)
        self.tolerances.update(figures.get("tolerances", {}))


@dataclass(frozen=True, slots=True)
class TestLedger:
    """What the ``costsim`` fixture gives a test: its own calls so far, and their totals."""

    __test__: ClassVar[bool] = False  # not a pytest test class

    session: Any
    """What meters the run's calls (anything with ``calls(test)``)."""
    test: str

    @property
    def calls(self) -> list[MeteredCall]:
        return list(self.session.calls(self.test))

    @property
    def totals(self) -> Totals:
        return Totals.of(self.calls)
