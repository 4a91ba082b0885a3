"""What embeddings requests cost, in the words ``costsim report`` and the pytest plugin both
say it: beside the answer line, and in a note of their own (they are in no LLM total)."""

from __future__ import annotations

from costsim.analysis.embeddings import EmbeddingTotals
from costsim.render.text import money_cells, plural

__all__ = ["embeddings_beside", "embeddings_note"]


def embeddings_beside(found: EmbeddingTotals) -> str:
    """The answer line's ``; embeddings $0.0012 more`` (``≥`` a lower bound; ``unpriced``
    when none has a price); nothing without embeddings requests."""
    if not found.calls:
        return ""
    if found.unpriced_calls and not found.priced_cost:
        return "; embeddings unpriced"
    more = money_cells([found.priced_cost])[0]
    return f"; embeddings {'≥' if found.unpriced_calls else ''}{more} more"


def embeddings_note(found: EmbeddingTotals) -> str | None:
    """``Embeddings, in no total above: 2 calls of 1,020 tokens (MODELS): $0.000020.``; a
    lower bound said so, a cost with no priced part unknown (never $0); None without any."""
    if not found.calls:
        return None
    cost = money_cells([found.priced_cost])[0]
    if found.unpriced_calls:
        without = f"({plural(found.unpriced_calls, 'call')} of a model without a price)"
        cost = f"at least {cost} {without}" if found.priced_cost else f"cost unknown {without}"
    models = ", ".join(sorted(found.models))
    return (
        f"Embeddings, in no total above: {plural(found.calls, 'call')} of {found.tokens:,} "
        f"tokens ({models}): {cost}."
    )
