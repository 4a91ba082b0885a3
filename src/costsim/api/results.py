"""What the public API returns: each result renders itself through the format registry.

``to_json()`` is the document the CLI writes with ``--format json``; ``render(fmt)`` is its
text in one of the formats the result has (``table``, ``markdown``, ``json``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from os import PathLike
from pathlib import Path
from typing import Any, ClassVar, overload

from costsim.analysis import advice, cache_fidelity, cassettes, comparison, report
from costsim.analysis.baseline_store import BaselineDiff, SavedBaseline
from costsim.analysis.breakdown import Breakdown as BreakdownTable
from costsim.analysis.breakdown import breakdown
from costsim.analysis.checks import Finding
from costsim.analysis.report import Skipped
from costsim.analysis.spread import Band
from costsim.metering.evaluate import CalibrationReport
from costsim.model import CassetteTrace
from costsim.pricing.ledger import Totals
from costsim.render.breakdown import breakdown_json, breakdown_markdown, breakdown_table
from costsim.render.formats import RenderOptions, formats, render, streamed_document
from costsim.render.json_stream import json_chunks, json_text, materialized
from costsim.scenario import gate
from costsim.scenario.result import ScenarioComparison, ScenarioRuns
from costsim.strategies.catalog import StrategyInfo

__all__ = [
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
    "Report",
    "Result",
    "Simulation",
    "Strategies",
    "Traces",
]


@dataclass(frozen=True, slots=True)
class Traces(Sequence[CassetteTrace]):
    """Loaded cassettes, one trace each, and the files skipped in lenient mode."""

    traces: tuple[CassetteTrace, ...]
    skipped: tuple[Skipped, ...] = ()
    warnings: tuple[str, ...] = ()
    """Folders that held no cassette."""

    @overload
    def __getitem__(self, index: int) -> CassetteTrace: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[CassetteTrace]: ...

    def __getitem__(self, index: int | slice) -> CassetteTrace | Sequence[CassetteTrace]:
        return self.traces[index]

    def __len__(self) -> int:
        return len(self.traces)

    def __iter__(self) -> Iterator[CassetteTrace]:
        return iter(self.traces)


@dataclass(frozen=True, slots=True)
class Result:
    """A result of the public API: its data, its JSON document, its text formats."""

    kind: ClassVar[str] = ""
    data: Any
    skipped: tuple[Skipped, ...] = field(default=(), kw_only=True)
    """Cassettes left out in lenient mode, and why."""

    warnings: tuple[str, ...] = field(default=(), kw_only=True)
    """What the user should know that is not an error (a folder holding no cassette)."""

    def to_json(self) -> dict[str, Any]:
        """The JSON document (the one the CLI writes with ``--format json``)."""
        return materialized(self.streamed_json())  # type: ignore[no-any-return]

    def streamed_json(self) -> dict[str, Any]:
        """:meth:`to_json`, its largest lists made only as they are written (see
        :mod:`costsim.render.json_stream`)."""
        return {**streamed_document(self.kind, self.data), "warnings": list(self.warnings)}

    def render(
        self, fmt: str = "table", *, width: int = 100, verbose: bool = False, wide: bool = False
    ) -> str:
        """The result as text: ``table``, ``markdown`` or ``json`` (see :meth:`formats`).

        Tables fit ``width`` (paths shortened from the left); ``verbose`` lists every event,
        note and unpriced call; ``wide`` adds the full token split and does not cut."""
        if fmt == "json":
            return json_text(self.streamed_json())
        options = RenderOptions(width=width, verbose=verbose, wide=wide)
        return render(self.kind, self.data, fmt, options)

    def pieces(
        self, fmt: str = "table", *, width: int = 100, verbose: bool = False, wide: bool = False
    ) -> Iterator[str]:
        """:meth:`render`'s text in pieces, made as they are asked for: a large JSON document
        is never whole in memory."""
        if fmt == "json":
            return json_chunks(self.streamed_json())
        return iter([self.render(fmt, width=width, verbose=verbose, wide=wide)])

    @classmethod
    def formats(cls) -> list[str]:
        return formats(cls.kind)


@dataclass(frozen=True, slots=True)
class Report(Result):
    """What recorded traffic was billed, per cassette or grouped."""

    kind: ClassVar[str] = "report"
    data: report.Report

    @property
    def totals(self) -> Totals:
        return self.data.totals


@dataclass(frozen=True, slots=True)
class Simulation(Result):
    """One variant (a list of strategies) against the recorded baseline."""

    kind: ClassVar[str] = "simulation"
    data: comparison.Comparison
    by: BreakdownTable | None = field(default=None, kw_only=True)
    """The breakdown ``by`` asked for (``simulate --by``), after the table and in the JSON."""

    def streamed_json(self) -> dict[str, Any]:
        found = Result.streamed_json(self)  # (a slotted dataclass: no zero-argument super)
        if self.by is not None:
            found["breakdown"] = breakdown_json(self.by)
        return found

    def render(
        self, fmt: str = "table", *, width: int = 100, verbose: bool = False, wide: bool = False
    ) -> str:
        text = Result.render(self, fmt, width=width, verbose=verbose, wide=wide)
        if self.by is None or fmt not in ("table", "markdown"):
            return text  # JSON holds it; the HTML page, like compare's, does not
        if fmt == "markdown":
            return text + "\n" + breakdown_markdown(self.by)
        return text + "\n" + breakdown_table(self.by, width=width, verbose=verbose)

    @property
    def baseline(self) -> Totals:
        return self.data.baseline

    @property
    def totals(self) -> Totals:
        return self.data.variants[0].totals

    @property
    def saving(self) -> Decimal | None:
        """Recorded cost minus the variant's (None when either is not fully priced)."""
        before, after = self.data.baseline.cost_usd, self.totals.cost_usd
        return None if before is None or after is None else before - after

    @property
    def delta(self) -> Band:
        """The variant's change in cost against the recording with its p90 band: ``.value``,
        ``.low``, ``.high`` (negative: a saving), ``.exact`` when nothing was estimated."""
        return self.data.variants[0].delta


@dataclass(frozen=True, slots=True)
class Breakdown(Result):
    kind: ClassVar[str] = "breakdown"


@dataclass(frozen=True, slots=True)
class Comparison(Result):
    """A scenario's variants against its recorded baseline, and the gates they break."""

    kind: ClassVar[str] = "comparison"
    data: ScenarioComparison

    def streamed_json(self) -> dict[str, Any]:
        """The scenario's document, as one entry of ``costsim compare --format json``."""
        from costsim.render.scenario import skipped_json

        return {**Result.streamed_json(self), "skipped": skipped_json(self.skipped)}

    @property
    def name(self) -> str:
        return self.data.loaded.scenario.name

    @property
    def variants(self) -> list[comparison.VariantSummary]:
        return self.data.comparison.variants

    @property
    def gate_failures(self) -> tuple[str, ...]:
        return self.data.gate_failures

    def gate(self, *, fail_over: float | None = None) -> list[str]:
        """The scenario's budgets a variant breaks, and variants over ``fail_over`` percent."""
        return gate(self.data.comparison, self.data.loaded.scenario.budgets, fail_over)

    def breakdown(self, by: str) -> Breakdown:
        """Cost per ``model`` or ``agent`` role, or tokens per ``tool``, in every variant."""
        return Breakdown(breakdown(by, self.data.comparison, self.data.agent_matcher()))


@dataclass(frozen=True, slots=True)
class CacheCheck(Result):
    """How faithfully the cache simulator reproduces recordings that used caching."""

    kind: ClassVar[str] = "check-cache"
    data: cache_fidelity.FidelityReport


@dataclass(frozen=True, slots=True)
class Advice(Result):
    """Which caching placement and TTL minimise cost on recorded traces, and what is left on
    the table."""

    kind: ClassVar[str] = "advice"
    data: advice.CachingAdvice

    @property
    def recommended(self) -> str | None:
        """The recommended ``caching`` strategy (as for ``-s``), or None: keep the recording's."""
        best = self.data.best
        return None if best is None else best.variant.describe()

    @property
    def saving(self) -> Decimal | None:
        """What the recommendation saves against the recording."""
        best = self.data.best
        return None if best is None or best.delta.value is None else -best.delta.value


@dataclass(frozen=True, slots=True)
class Calibration(Result):
    """How well the offline token estimator does on recordings it was not fitted on."""

    kind: ClassVar[str] = "calibration"
    data: CalibrationReport

    def save(self, path: str | PathLike[str]) -> Path:
        """Save the fit (not a ``shipped`` evaluation) for every later estimate: point
        ``[tool.costsim] calibration`` (or ``--calibration``) at the file. Atomic."""
        from costsim.metering.saved import write_calibration

        families = [f for f in self.data.families if f.calls]
        calls = sum(f.calls for f in families)
        sources = ", ".join(self.data.sources) or "one source"
        fitted_on = f"{calls:,} recorded calls of {len(families)} model families, from {sources}"
        target = Path(path)
        write_calibration(target, self.data, fitted_on)
        return target


@dataclass(frozen=True, slots=True)
class CassetteList(Result):
    """One entry per cassette: recorded dates, LLM calls, providers, models, size."""

    kind: ClassVar[str] = "cassette-list"
    data: list[cassettes.CassetteListing]


@dataclass(frozen=True, slots=True)
class CassetteCheck(Result):
    """What is wrong in a folder of recordings, one finding per rule and place."""

    kind: ClassVar[str] = "cassette-check"
    data: cassettes.CassetteCheck

    @property
    def findings(self) -> tuple[Finding, ...]:
        return self.data.findings

    @property
    def failing(self) -> int:
        """Errors and warnings (informational findings never fail the check)."""
        return self.data.failing


@dataclass(frozen=True, slots=True)
class Comparisons(Result):
    """A ``compare`` run: every scenario's comparison, breakdown and gate failures."""

    kind: ClassVar[str] = "comparisons"
    data: ScenarioRuns

    @property
    def gate_failures(self) -> list[str]:
        """Every budget or ``fail_over`` limit broken, each naming its scenario and variant."""
        return self.data.gate_failures


@dataclass(frozen=True, slots=True)
class BaselineComparison(Result):
    """Two saved baselines: regressions beyond tolerance, improvements, new and gone tests."""

    kind: ClassVar[str] = "baseline-comparison"
    data: BaselineDiff

    @property
    def regressions(self) -> list[str]:
        return self.data.comparison.regressions

    @property
    def improvements(self) -> list[str]:
        return self.data.comparison.improvements


@dataclass(frozen=True, slots=True)
class BaselineList(Result):
    """The baselines saved in a project's ``.costsim`` folder."""

    kind: ClassVar[str] = "baseline-list"
    data: tuple[Path, list[SavedBaseline]]

    @property
    def names(self) -> list[str]:
        """The baselines that could be read."""
        return [saved.name for saved in self.data[1] if saved.error is None]


@dataclass(frozen=True, slots=True)
class Strategies(Result):
    """Registered strategies with their parameters, types, defaults and meanings."""

    kind: ClassVar[str] = "strategies"
    data: list[StrategyInfo]
