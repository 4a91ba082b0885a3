"""What ``costsim cassettes check`` finds in one cassette: every finding names a rule.

Rules are the credential rules of :mod:`costsim.secret_rules` and the recording rules below;
``--ignore RULE`` and ``[tool.costsim] secrets.ignore`` silence a rule by its id.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from costsim.analysis.cut_short import cut_short, cut_short_message
from costsim.analysis.embeddings import embedding_tokens
from costsim.analysis.report import ReportNote, trace_notes
from costsim.analysis.secret_rules import RULES, Rule, Severity
from costsim.analysis.secrets import find_secrets
from costsim.errors import ConfigError, CostsimError, InteractionError
from costsim.io.cassette import Cassette, cassette_from_bytes, load_cassette
from costsim.model import LEFT_OUT_KINDS, CassetteTrace, NoteKind
from costsim.model.quoting import quoted
from costsim.pricing.ledger import meter
from costsim.providers.normalise import normalise

__all__ = [
    "ALL_RULES",
    "Finding",
    "among_siblings",
    "check_bytes",
    "check_cassette",
    "validate_rules",
]

RECORDING_RULES: tuple[Rule, ...] = (
    Rule("unreadable", Severity.ERROR, "the cassette cannot be read"),
    Rule("no-llm-calls", Severity.WARNING, "no LLM calls"),
    Rule("no-version", Severity.INFO, "no closing 'version' key: perhaps cut short"),
    Rule("cut-short", Severity.WARNING, "no closing 'version' key where its folder's have one"),
    Rule("no-usage", Severity.WARNING, "an LLM call or embeddings request without usage"),
    Rule(NoteKind.INVALID_USAGE.value, Severity.WARNING, "invalid recorded usage"),
    Rule(NoteKind.INCOMPLETE_STREAM.value, Severity.WARNING, "a stream cut before its usage"),
    Rule(NoteKind.UNRECOGNISED_CALL.value, Severity.WARNING, "an LLM call costsim cannot meter"),
    Rule(
        NoteKind.UNREADABLE_EMBEDDINGS.value,
        Severity.WARNING,
        "an embeddings request whose tokens cannot be known",
    ),
    Rule(NoteKind.USAGE_ONLY.value, Severity.INFO, "a call metered from its usage alone"),
    Rule(NoteKind.UNPRICED_FEE.value, Severity.WARNING, "a per-use fee without a price"),
    Rule(
        NoteKind.MIXED_TTL_WRITES.value,
        Severity.WARNING,
        "cache writes without their 5m / 1h split, priced at 5m: a lower bound",
    ),
    Rule("unpriced", Severity.WARNING, "a call whose model or tier has no known price"),
    Rule(NoteKind.BASE_TIER.value, Severity.INFO, "a server-tool sum over 200K at the base tier"),
    Rule(
        NoteKind.LONG_WINDOW_UNSEEN.value,
        Severity.INFO,
        "a prompt over 200K without the 1M-window beta in the recording",
    ),
    Rule(NoteKind.ERROR_AFTER_USAGE.value, Severity.INFO, "an error after the usage: billed"),
)
ALL_RULES: dict[str, Rule] = {**{r.id: r for r in RECORDING_RULES}, **RULES}
_NOTE_RULES = {NoteKind.NO_USAGE.value: "no-usage"}
_NO_VERSION = (
    "no 'version' key, which vcrpy writes after the last interaction: a file cut short "
    "between two interactions reads as whole, its later calls missing from every total "
    "(re-record it; if it is whole, add 'version: 1' at its end)"
)


@dataclass(frozen=True, slots=True)
class Finding:
    path: Path
    interaction: int | None
    rule: str
    severity: Severity
    message: str

    def line(self) -> str:
        where = f"interaction {self.interaction}: " if self.interaction is not None else ""
        return f"{where}[{self.severity}] {self.rule}: {self.message}"


def _finding(path: Path, index: int | None, rule_id: str, message: str) -> Finding:
    return Finding(path, index, rule_id, ALL_RULES[rule_id].severity, message)


def check_cassette(path: Path) -> list[Finding]:
    """Everything wrong in one cassette, in recorded order."""
    return _check(path, lambda: load_cassette(path))


def check_bytes(path: Path, data: bytes) -> list[Finding]:
    """:func:`check_cassette` of the cassette file at ``path`` from its bytes (read by the
    caller)."""
    return _check(path, lambda: cassette_from_bytes(path, data))


def among_siblings(paths: Sequence[Path], findings: Sequence[list[Finding]]) -> list[list[Finding]]:
    """Each file's findings (one list per path), a missing ``version`` key made a warning
    (``cut-short``) where other cassettes of its folder end with one (see
    :mod:`costsim.analysis.cut_short`); alone, or beside others without one, it stays a
    hint."""
    unversioned = [
        path
        for path, found in zip(paths, findings, strict=True)
        if any(f.rule in ("no-version", "unreadable") for f in found)
    ]
    others = cut_short(paths, unversioned)
    return [
        [
            _finding(path, None, "cut-short", cut_short_message(others[path]))
            if f.rule == "no-version" and path in others
            else f
            for f in found
        ]
        for path, found in zip(paths, findings, strict=True)
    ]


def _check(path: Path, read: Callable[[], Cassette]) -> list[Finding]:
    try:
        cassette = read()
        trace = normalise(cassette)
    except CostsimError as exc:
        index = exc.index if isinstance(exc, InteractionError) else None
        reason = str(exc).removeprefix(f"{path}: ")
        if index is not None:  # the finding names its interaction once
            reason = reason.removeprefix(f"interaction {index}: ")
        return [_finding(path, index, "unreadable", reason)]
    findings: list[Finding] = []
    if not cassette.versioned:
        findings.append(_finding(path, None, "no-version", _NO_VERSION))
    notes = trace_notes(trace)
    if not _billed(trace, notes):
        findings.append(_finding(path, None, "no-llm-calls", "no LLM calls recorded"))
    explained = set()
    for note in notes:
        rule = _NOTE_RULES.get(note.kind.value, note.kind.value)
        findings.append(_finding(path, note.provenance.index, rule, note.message))
        explained.add(note.provenance.index)
    for call in trace.calls:
        index = call.provenance.index
        if call.usage is None and not call.errored and index not in explained:
            findings.append(_finding(path, index, "no-usage", f"{call.flavour} call without usage"))
        cost = meter(call).price if call.usage is not None else None
        if cost is not None and not cost.priced:
            reason = cost.unpriced_reason or f"no price for {quoted(call.priced_model)}"
            findings.append(_finding(path, index, "unpriced", f"{reason}: its cost is unknown"))
    for embedding in trace.embeddings:
        if embedding.estimated:
            said = f"its {embedding_tokens(embedding):,} tokens estimated from its input"
            message = f"embeddings request without usage: {said}"
            findings.append(_finding(path, embedding.provenance.index, "no-usage", message))
    for secret in find_secrets(cassette):
        message = f"{secret.kind} in {secret.where} ({secret.preview})"
        findings.append(_finding(path, secret.index, secret.rule, message))
    return sorted(findings, key=lambda f: -1 if f.interaction is None else f.interaction)


def _billed(trace: CassetteTrace, notes: Iterable[ReportNote]) -> bool:
    """The cassette records billed traffic costsim meters or names: LLM calls, embeddings
    requests (a RAG test's cassette), or those it could not read (each a finding of its own)."""
    said = (*LEFT_OUT_KINDS, NoteKind.UNREADABLE_EMBEDDINGS)
    return bool(trace.calls or trace.embeddings) or any(n.kind in said for n in notes)


def validate_rules(names: Iterable[str], source: str) -> frozenset[str]:
    """Rule ids as given by the user; an unknown one is an error listing the valid ones."""
    for name in names:
        if name not in ALL_RULES:
            close = difflib.get_close_matches(name, ALL_RULES, n=1)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            raise ConfigError(
                f"{source}: {name!r} is not a rule.{hint} Valid: {', '.join(sorted(ALL_RULES))}"
            )
    return frozenset(names)
