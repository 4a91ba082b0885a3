"""Results of batch APIs recorded in a cassette: Anthropic's Message Batches results
(``GET /v1/messages/batches/{id}/results``) and an OpenAI Batch API output file
(``GET /v1/files/{id}/content``), each a JSON line per request.

Their requests were billed (at the batch rate), but one download holds many of them and the
requests themselves were sent in the batch's creation: costsim does not meter them, and says
so for each download, with how many billed results it holds, rather than count it as an
"other" interaction.
"""

from __future__ import annotations

import json
import re
from typing import Any

from costsim.io.cassette import Interaction
from costsim.model import InteractionNote, Note, NoteKind, Provenance

__all__ = ["batch_results_note"]

_ANTHROPIC = re.compile(r"/v1/messages/batches/[^/]+/results/?$")
_OPENAI_FILE = re.compile(r"/v1/files/[^/]+/content/?$")


def batch_results_note(interaction: Interaction) -> InteractionNote | None:
    """The note for a download of batch results that holds billed results; None otherwise."""
    if interaction.method != "GET" or interaction.status >= 400:
        return None
    path = interaction.url_path
    anthropic = bool(_ANTHROPIC.search(path))
    if not anthropic and not _OPENAI_FILE.search(path):
        return None
    billed = sum(1 for line in _lines(interaction) if _billed(line, anthropic))
    if not billed:
        return None
    what = "Message Batches results" if anthropic else "a Batch API output file"
    return InteractionNote(
        Provenance(interaction.path, interaction.index),
        Note(
            NoteKind.UNRECOGNISED_CALL,
            f"{what} with {billed} billed result(s) at the batch rate: costsim does not meter "
            "batch results, so they are not in the totals",
        ),
    )


def _lines(interaction: Interaction) -> list[Any]:
    raw = interaction.response_body.raw or b""
    found = []
    for line in raw.splitlines()[:100_000]:
        try:
            found.append(json.loads(line))
        except (ValueError, RecursionError):
            continue
    return found


def _billed(line: Any, anthropic: bool) -> bool:
    """A result that was billed: Anthropic's ``succeeded``, an OpenAI response of status 200."""
    if not isinstance(line, dict) or "custom_id" not in line:
        return False
    if anthropic:
        result = line.get("result")
        return isinstance(result, dict) and result.get("type") == "succeeded"
    response = line.get("response")
    return isinstance(response, dict) and response.get("status_code") == 200
