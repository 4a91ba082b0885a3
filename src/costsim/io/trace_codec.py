"""Normalised traces as JSON for the cache: pydantic validates them back, nothing executes.

Blocks are told apart by their ``kind`` literal, so a trace round-trips equal. Two details
are restored on the way back: recorded dates get the standard library's time zones (pydantic
returns its own ``TzInfo``), and a trace cached from a file with the same bytes at another
path is moved to the path asked for (entries are keyed by content, not by place).
"""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta, timezone
from functools import cache
from pathlib import Path

from pydantic import TypeAdapter, ValidationError

from costsim.model import Call, CassetteTrace, InteractionNote, Provenance
from costsim.model.sharing import shared_calls

__all__ = ["decode_trace", "encode_trace"]


@cache
def _adapter() -> TypeAdapter[CassetteTrace]:
    return TypeAdapter(CassetteTrace)


def encode_trace(trace: CassetteTrace) -> bytes:
    return _adapter().dump_json(trace)


def decode_trace(data: bytes, path: Path) -> CassetteTrace | None:
    """The trace in ``data``, at ``path``; None when it does not validate."""
    try:
        trace = _adapter().validate_json(data)
    except (ValidationError, ValueError, RecursionError):
        return None
    if any(
        call.recorded_at is not None and call.recorded_at.tzinfo is None for call in trace.calls
    ):
        return None  # costsim records dates with their zone: not an entry it wrote
    moved = trace.path != path
    calls = shared_calls([_restore(call, path if moved else None) for call in trace.calls])
    notes, embeddings = trace.notes, trace.embeddings
    if moved:
        notes = tuple(
            InteractionNote(Provenance(path, n.provenance.index), n.note) for n in trace.notes
        )
        embeddings = tuple(
            dataclasses.replace(e, provenance=Provenance(path, e.provenance.index))
            for e in embeddings
        )
    return dataclasses.replace(trace, path=path, calls=calls, notes=notes, embeddings=embeddings)


def _zone(offset: timedelta | None) -> timezone:
    return UTC if not offset else timezone(offset)


def _restore(call: Call, path: Path | None) -> Call:
    changes: dict[str, object] = {}
    when = call.recorded_at
    if when is not None and when.tzinfo is not None:
        changes["recorded_at"] = datetime.replace(when, tzinfo=_zone(when.utcoffset()))
    if path is not None:
        changes["provenance"] = Provenance(path, call.provenance.index)
    return dataclasses.replace(call, **changes) if changes else call  # type: ignore[arg-type]
