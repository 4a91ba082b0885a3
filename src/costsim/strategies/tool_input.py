"""What a tool call's input says: its values, not the names of its fields."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

__all__ = ["input_values"]


def input_values(value: Any) -> Iterator[str]:
    """Every value in a tool input, as text, depth first: strings as they are, numbers as
    written; the keys of its objects are left out (``element`` in ``{"element": "Pay"}`` is
    the tool's field, not something the call took from a result)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, bool) or value is None:
        return
    elif isinstance(value, int | float):
        yield str(value)
    elif isinstance(value, dict):
        for item in value.values():
            yield from input_values(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from input_values(item)
