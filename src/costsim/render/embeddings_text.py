"""What embeddings requests cost, in the words ``costsim report`` and the pytest plugin both
say it: beside the answer line, in a note of their own (they are in no LLM total), and the
calls without a price, in text and JSON."""

from __future__ import annotations

from collections import Counter
from typing import Any

from costsim.analysis.embeddings import EmbeddingTotals, UnpricedEmbedding
from costsim.model.ordering import natural_key
from costsim.render.paths import display_path
from costsim.render.text import money_cells, plural

__all__ = [
    "ESTIMATED_EMBEDDINGS",
    "ONLY_EMBEDDINGS",
    "embeddings_beside",
    "embeddings_note",
    "unpriced_embeddings",
    "unpriced_embeddings_json",
    "unpriced_reasons",
]

ONLY_EMBEDDINGS = "No LLM calls, only embeddings requests, were replayed or recorded"
"""What a test run said when vcrpy served it embeddings requests and no LLM call (not the
line of a run vcrpy saw nothing of, which reads as a setup problem)."""
ESTIMATED_EMBEDDINGS = "no usage recorded"
"""Why N embeddings calls are estimated (their tokens counted offline from their input)."""


def embeddings_beside(found: EmbeddingTotals) -> str:
    """The answer line's ``; embeddings $0.0012 more`` (``≥`` a lower bound; ``unpriced``
    when none has a price); nothing without embeddings requests."""
    if not found.calls:
        return ""
    if found.unpriced_calls and not found.priced_cost:
        return "; embeddings unpriced"
    more = money_cells([found.priced_cost])[0]
    return f"; embeddings {'≥' if found.unpriced_calls else ''}{more} more"


def embeddings_note(found: EmbeddingTotals, *, apart: bool = True) -> str | None:
    """``Embeddings, in no total above: 2 calls of 1,020 tokens (MODELS): $0.000020.``; a
    lower bound said so, a cost with no priced part unknown (never $0), estimated calls
    counted; None without any. ``apart=False``: where no LLM figure is said above."""
    if not found.calls:
        return None
    cost = money_cells([found.priced_cost])[0]
    said = []
    if found.unpriced_calls:
        said.append(f"{plural(found.unpriced_calls, 'call')} of a model without a price")
        cost = f"at least {cost}" if found.priced_cost else "cost unknown"
    if found.estimated_calls:
        said.append(f"{found.estimated_calls:,} estimated: {ESTIMATED_EMBEDDINGS}")
    if said:
        cost += f" ({'; '.join(said)})"
    models = ", ".join(sorted(found.models))
    head = "Embeddings, in no total above" if apart else "Embeddings"
    return f"{head}: {plural(found.calls, 'call')} of {found.tokens:,} tokens ({models}): {cost}."


def unpriced_reasons(found: EmbeddingTotals) -> list[str]:
    """Why calls have no price, each reason once with how many (``... (2 calls)``), as
    ``costsim report`` says its unpriced LLM calls."""
    reasons = Counter(u.reason for u in found.unpriced)
    return [f"{reason} ({plural(n, 'call')})" for reason, n in reasons.most_common()]


def unpriced_embeddings(found: EmbeddingTotals) -> list[tuple[UnpricedEmbedding, int]]:
    """Each call without a price once (a cassette several tests replay), in natural order,
    with how often it was counted."""
    counted = Counter(found.unpriced)
    return sorted(
        counted.items(),
        key=lambda item: (natural_key(str(item[0].provenance.path)), item[0].provenance.index),
    )


def unpriced_embeddings_json(found: EmbeddingTotals, *, replays: bool = False) -> list[Any]:
    """The calls without a price as every ``unpriced`` list of costsim's JSON holds them
    (``path``, ``interaction``, ``model``, ``reason``): in recorded order; ``replays``: each
    once, with how often a test run replayed it."""
    listed = unpriced_embeddings(found) if replays else [(u, 1) for u in found.unpriced]
    return [
        {
            "path": display_path(u.provenance.path),
            "interaction": u.provenance.index,
            "model": u.model,
            "reason": u.reason,
            **({"replayed": n} if replays else {}),
        }
        for u, n in listed
    ]
