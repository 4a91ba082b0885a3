"""Text cut to a width, and the bytes a cut costs: small and free of the table libraries, for
what the pytest plugin prints in the test process."""

from __future__ import annotations

__all__ = ["ELLIPSIS", "extra_bytes", "shorten_left", "shorten_right"]

ELLIPSIS = "…"


def shorten_left(text: str, width: int) -> str:
    """``text`` cut from the left to ``width`` characters (``…`` marks the cut)."""
    if len(text) <= width:
        return text
    return ELLIPSIS + text[len(text) - max(width - 1, 1) :]


def shorten_right(text: str, width: int) -> str:
    """``text`` cut from the right to ``width`` characters (``…`` marks the cut)."""
    if len(text) <= width:
        return text
    return text[: max(width - 1, 1)] + ELLIPSIS


def extra_bytes(text: str) -> int:
    """Bytes beyond one per character (``…``, ``Δ``, ``±``): tools that measure lines in
    bytes (``awk``, ``wc -c``) see them too, so fitting keeps room for them."""
    return len(text.encode("utf-8", "surrogatepass")) - len(text)  # a name not UTF-8: no error
