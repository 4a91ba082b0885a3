"""A replayed call as the cassette holds it and as the code sent it (drift)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from costsim.api.testing import Difference, differences, read_vcr_call
from costsim.errors import CostsimError
from costsim.model import Call
from costsim.plugin.vcr_patch import same_body

__all__ = ["Observed", "sent_call"]


@dataclass(frozen=True, slots=True)
class Observed:
    """One replayed or recorded LLM call: as the cassette holds it, and as the code sent it.

    ``sent`` is None when the request the code sent now equals the recorded one in every way
    that can change the bill (or is not an LLM request costsim can read); otherwise the call
    is metered for what was sent, and ``differences`` says how it differs.
    """

    recorded: Call
    sent: Call | None = None
    differences: tuple[Difference, ...] = ()
    unread: str = ""
    """Why the request the code sent now could not be read (its drift is then unchecked)."""


def sent_call(
    cassette_path: str,
    index: int,
    request: Any,
    stored: Any,
    response: Mapping[str, Any],
    recorded: Call,
) -> Observed:
    """``recorded`` with the request the code sent now, when that differs in a billed way."""
    if same_body(request, stored):
        return Observed(recorded)
    try:
        sent = read_vcr_call(cassette_path, index, request, response)
    except CostsimError as exc:  # what was sent is not a readable LLM request: said
        return Observed(recorded, unread=str(exc))
    if sent is None:
        return Observed(recorded)
    sent = replace(sent, host=recorded.host)  # the same request through another host or proxy
    found = differences(recorded, sent)
    if not found:
        return Observed(recorded)
    if sent.model != recorded.model:  # the code asks another model now: price that one
        sent = replace(sent, response_model=None)
    return Observed(recorded, sent, tuple(found))
