"""How a model is named in a breakdown: as the recording names it, one name per price.

A response names a dated snapshot (``claude-haiku-4-5-20251001``), a request (and a variant's
routed call) the alias (``claude-haiku-4-5``); genai-prices prices both under one id, which may
read unlike either (``claude-3-5-haiku-latest`` for ``claude-3-5-haiku-20241022``). A
breakdown row is one price, named as the traffic names it: the name without its date stamp when
that prices the same, else the name as recorded (``gpt-4o-2024-05-13`` has its own price).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from functools import cache
from typing import Any

from genai_prices import Usage as PriceUsage
from genai_prices import calc_price

__all__ = ["close_model", "model_label"]

_DATED = re.compile(r"^(?P<name>.+?)[-@](?:\d{8}|\d{4}-\d{2}-\d{2}|latest)$")
"""A trailing date stamp (``-20251001``, ``-2024-07-18``, Vertex AI's ``@20250514``), or
``-latest``."""


def model_label(name: str, provider: str, model_id: str | None) -> str:
    """``name`` (the model a call was priced as) for a breakdown row: without its date stamp
    when genai-prices prices that the same (``model_id``), else as it is. A call billed
    nothing (an errored request) or priced otherwise has no ``model_id``: it is looked up, so
    that call and a billed one of the same model are one row."""
    found = _DATED.match(name)
    if found is None:
        return name
    if model_id is None:
        model_id = _price_id(name, provider)
        if model_id is None:
            return name  # no price: as it is
    undated = found["name"]
    return undated if _price_id(undated, provider) == model_id else name


@cache
def _price_id(name: str, provider: str) -> str | None:
    try:
        result = calc_price(
            PriceUsage(input_tokens=0, output_tokens=0),
            name,
            provider_id=provider,
            genai_request_timestamp=datetime(2026, 1, 1, tzinfo=UTC),
        )
    except (LookupError, ValueError, ArithmeticError):
        return None
    return str(result.model.id)


@cache
def close_model(name: str, provider: str | None) -> str | None:
    """The model genai-prices knows (at ``provider``; None: at any) whose id is closest to
    ``name`` (a typo's likely meaning: ``gpt-4o-mni``, ``gpt-4o-mini``), None when none is
    close, or when ``name`` is one it knows (by id or by a name its models match)."""
    import difflib  # only when a name has no price, or names no call

    from genai_prices.data_snapshot import get_snapshot

    providers = [p for p in get_snapshot().providers if provider is None or p.id == provider]
    ids = {model.id for known in providers for model in known.models}
    matched = [found for known in providers if (found := known.find_model(name)) is not None]
    if name in ids or any(_named(name, model) for model in matched):
        return None
    if matched:  # a name that starts like one of a model's (claude-sonnet-4-5x): that model
        return str(matched[0].id)
    close = difflib.get_close_matches(name, sorted(ids), n=1, cutoff=0.8)
    return close[0] if close else None


def _named(name: str, model: Any) -> bool:
    """``name`` is a name of ``model`` (one genai-prices matched it to): one its rules name
    exactly (``claude-sonnet-4``), or a dated snapshot of it (``claude-sonnet-4-20250514``),
    not any name that merely starts like one of its (``claude-sonnet-4-5x``, a typo)."""
    from costsim.pricing.snapshots import snapshot_date

    return snapshot_date(name) is not None or name in _exact_names(model.match)


def _exact_names(clause: Any) -> set[str]:
    """The names a genai-prices match rule names exactly (its ``equals``, in any ``or``)."""
    found = {clause.equals} if isinstance(getattr(clause, "equals", None), str) else set()
    for inner in getattr(clause, "or_", None) or ():
        found |= _exact_names(inner)
    return found
