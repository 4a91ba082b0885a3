"""What was billed: traces metered and summed per cassette, and grouped by model or provider."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from costsim.analysis.embeddings import EmbeddingTotals, embedding_totals
from costsim.analysis.left_out import left_out
from costsim.errors import ConfigError, CostsimError
from costsim.io.walk import Progress, Selection, find_cassettes
from costsim.metering.meter import ErrorBand, Meter
from costsim.metering.models import family
from costsim.model import Call, CassetteTrace, NoteKind, Provenance
from costsim.pricing.hosts import host_provider
from costsim.pricing.ledger import MeteredCall, Totals, meter
from costsim.providers.normalise import load_trace

__all__ = [
    "GROUPINGS",
    "CassetteReport",
    "Loaded",
    "Report",
    "ReportNote",
    "Skipped",
    "build_report",
    "load_selected",
    "load_traces",
]


@dataclass(frozen=True, slots=True)
class Skipped:
    """A file left out in lenient mode, and why."""

    path: Path
    error: str


@dataclass(frozen=True, slots=True)
class Loaded:
    """Traces loaded from paths: the files skipped in lenient mode, the folders with none."""

    traces: list[CassetteTrace]
    skipped: list[Skipped]
    empty: tuple[Path, ...] = ()
    warnings: tuple[str, ...] = ()


def load_selected(
    paths: Iterable[Path],
    *,
    lenient: bool = False,
    selection: Selection | None = None,
    progress: Progress | None = None,
) -> Loaded:
    """Load every cassette under ``paths`` (walked as :mod:`costsim.io.walk` does). In lenient
    mode unreadable files are skipped and returned with their error; otherwise the first error
    is raised. ``progress`` is told of every file loaded."""
    found = find_cassettes(list(paths), selection, lenient=lenient)
    traces: list[CassetteTrace] = []
    skipped: list[Skipped] = []
    for done, path in enumerate(found.files, start=1):
        try:
            traces.append(load_trace(path))
        except CostsimError as exc:
            if not lenient:
                raise
            skipped.append(Skipped(path, str(exc)))
        if progress is not None:
            progress("loading", done, len(found.files))
    return Loaded(traces, skipped, found.empty, tuple(found.warnings()))


def load_traces(
    paths: Iterable[Path], *, lenient: bool = False
) -> tuple[list[CassetteTrace], list[Skipped]]:
    """Load every cassette under ``paths``: the traces, and the files skipped in lenient mode."""
    loaded = load_selected(paths, lenient=lenient)
    return loaded.traces, loaded.skipped


@dataclass(frozen=True, slots=True)
class ReportNote:
    """Something about one interaction the numbers depend on (see :class:`NoteKind`)."""

    provenance: Provenance
    kind: NoteKind
    message: str


def trace_notes(trace: CassetteTrace) -> list[ReportNote]:
    """Every note of a trace, calls' and other interactions', in recorded order."""
    notes = [
        ReportNote(call.provenance, note.kind, note.message)
        for call in trace.calls
        for note in call.notes
    ]
    notes += [ReportNote(n.provenance, n.note.kind, n.note.message) for n in trace.notes]
    return sorted(notes, key=lambda note: note.provenance.index)


@dataclass(slots=True)
class CassetteReport:
    path: Path
    totals: Totals
    other_interactions: int
    foreign_calls: Counter[str]
    """Calls another provider's host served (Azure OpenAI, OpenRouter, ...), by host: metered,
    and priced from that provider's price list."""
    size_bytes: int
    first_recorded: datetime | None
    last_recorded: datetime | None
    calls: list[MeteredCall] = field(default_factory=list, repr=False, compare=False)
    """Every metered call, in recorded order (what the charts of the HTML report draw)."""
    proxied_calls: Counter[str] = field(default_factory=Counter)
    """Calls through a host no provider is known by (a proxy such as LiteLLM, a gateway, a
    self-hosted server), by host: priced at the list price of the model each names, which
    such a host need not charge."""
    embeddings: EmbeddingTotals = field(default_factory=EmbeddingTotals)
    """Its embeddings requests: billed, in none of its LLM figures."""

    @property
    def embeddings_only(self) -> bool:
        """It holds embeddings requests and no LLM call (its LLM cost is not a cost of $0)."""
        return bool(self.embeddings.calls) and not (
            self.totals.llm_calls or self.totals.left_out_calls
        )


@dataclass(slots=True)
class Report:
    by: str
    cassettes: list[CassetteReport]
    groups: dict[str, Totals]
    totals: Totals
    skipped: list[Skipped] = field(default_factory=list)
    as_of: datetime | None = None
    estimator: list[ErrorBand] = field(default_factory=list)
    """Error bands of the families whose calls had to be estimated (no recorded usage)."""
    notes: list[ReportNote] = field(default_factory=list)
    """Invalid usage, cut streams, calls read from usage only, LLM calls not metered."""
    embeddings: EmbeddingTotals = field(default_factory=EmbeddingTotals)
    """The embeddings requests: billed, in no LLM total."""


def _by_model(metered: MeteredCall) -> str:
    return metered.billed_model  # as a comparison groups it


def _by_provider(metered: MeteredCall) -> str:
    return metered.call.billed_by


def _by_flavour(metered: MeteredCall) -> str:
    return metered.call.flavour.value


GROUPINGS: dict[str, Callable[[MeteredCall], str] | None] = {
    "cassette": None,
    "model": _by_model,
    "provider": _by_provider,
    "flavour": _by_flavour,
}


def _needs_estimate(call: Call) -> bool:
    return call.usage is None and not call.errored


def _metered(
    trace: CassetteTrace, as_of: datetime | None, estimator: Meter | None
) -> Iterator[MeteredCall]:
    """The trace's calls as billed; a call without usage estimated as compare's baseline
    estimates it (its prompt split by the provider's caching rules among the trace's)."""
    if estimator is None or not any(_needs_estimate(call) for call in trace.calls):
        for call in trace.calls:
            yield meter(call, as_of=as_of)
        return
    from costsim.engine.simulate import Engine  # only where a call needs an estimate

    for item in Engine([trace], meter=estimator).recorded(trace).calls:
        yield meter(item.call, as_of=as_of, usage=item.usage)


def build_report(
    traces: Iterable[CassetteTrace],
    *,
    by: str = "cassette",
    as_of: datetime | None = None,
    skipped: Iterable[Skipped] = (),
    estimator: Meter | None = None,
) -> Report:
    """What the recorded calls were billed; calls recorded without usage are estimated by
    ``estimator`` (default: the coefficients shipped with costsim)."""
    if by not in GROUPINGS:
        raise ConfigError(f"cannot group by {by!r}; valid: {', '.join(GROUPINGS)}")
    key_of = GROUPINGS[by]
    traces = list(traces)
    unmetered = [call for trace in traces for call in trace.calls if _needs_estimate(call)]
    if unmetered and estimator is None:
        estimator = Meter()
    cassettes: list[CassetteReport] = []
    groups: dict[str, Totals] = {}
    total = Totals()
    embeddings = EmbeddingTotals()
    notes: list[ReportNote] = []
    for trace in traces:
        notes.extend(trace_notes(trace))
        metered = list(_metered(trace, as_of, estimator))
        totals = Totals.of(metered)
        totals.left_out_calls = left_out(trace)
        total.merge(totals)
        if key_of is not None:
            for item in metered:
                groups.setdefault(key_of(item), Totals()).add(item)
        dates = [call.recorded_at for call in trace.calls if call.recorded_at is not None]
        found = embedding_totals([trace], as_of)
        embeddings.merge(found)
        cassettes.append(
            CassetteReport(
                path=trace.path,
                totals=totals,
                other_interactions=trace.other_interactions,
                foreign_calls=Counter(call.host for call in trace.calls if call.served_by),
                proxied_calls=Counter(
                    call.host
                    for call in trace.calls
                    if call.host and call.platform is None and host_provider(call.host) is None
                ),
                size_bytes=trace.size_bytes,
                first_recorded=min(dates, default=None),
                last_recorded=max(dates, default=None),
                calls=metered,
                embeddings=found,
            )
        )
    return Report(
        by=by,
        cassettes=cassettes,
        groups=dict(sorted(groups.items())),
        totals=total,
        skipped=list(skipped),
        as_of=as_of,
        estimator=sorted(
            {estimator.band(family(call)) for call in unmetered} if estimator else set(),
            key=lambda band: band.family,
        ),
        notes=notes,
        embeddings=embeddings,
    )
