"""One order for names people read: runs of digits as numbers (``test[2]`` before
``test[10]``), wherever costsim lists tests, cassettes or models by name or breaks a tie."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

__all__ = ["natural_key", "naturally"]

_DIGITS = re.compile(r"([0-9]+)")


def natural_key(text: str) -> tuple[Any, ...]:
    """``text`` with its runs of digits compared as numbers, however long: by length without
    leading zeros, then digit by digit, then as written (``t[02]`` before ``t[2]``), so that
    no two names compare equal."""
    parts = _DIGITS.split(text)  # text, digits, text, digits, ..., text
    return tuple(
        (len(part.lstrip("0")), part.lstrip("0"), part) if index % 2 else part
        for index, part in enumerate(parts)
    )


def naturally(names: Iterable[str]) -> list[str]:
    """``names`` in natural order."""
    return sorted(names, key=natural_key)
