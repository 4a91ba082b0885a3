"""Text wrapped to a width in columns and in bytes, breaking long labels between their
parameters."""

from __future__ import annotations

import re
import textwrap

from costsim.render.cuts import display_width, extra_bytes, narrowed
from costsim.render.visible import visible

__all__ = ["wrap"]


class _AtCommas(textwrap.TextWrapper):
    """Wraps at spaces; a word longer than a line is broken after a comma where it has one: a
    strategy's label (``routing:default=standard,tiers.light=claude-haiku-4-5,...``) between
    its parameters, not inside a model's name (``claude-haik`` / ``u-4-5``). A shorter one
    moves to the next line whole."""

    def _split(self, text: str) -> list[str]:
        room = self.width - len(self.subsequent_indent)
        return [
            part
            for chunk in super()._split(text)
            for part in (_COMMA.split(chunk) if len(chunk) > room else [chunk])
            if part
        ]


_COMMA = re.compile(r"(?<=,)(?=[^\d\s,])")  # not inside a number (1,234)


def wrap(text: str, width: int, *, indent: str = "", subsequent: str | None = None) -> list[str]:
    """``text`` as lines of at most ``width`` columns, and bytes (long words are broken); its
    control characters as escapes (see :func:`~costsim.render.visible.visible`)."""
    text = visible(text)
    later = indent + "  " if subsequent is None else subsequent

    def lines(size: int) -> list[str]:
        return _AtCommas(
            width=max(size, 20),
            initial_indent=indent,
            subsequent_indent=later,
            break_on_hyphens=False,
        ).wrap(text) or [indent.rstrip()]

    if display_width(text) == len(text):  # room for every byte beyond a character's one
        return lines(width - extra_bytes(text) - extra_bytes(indent))
    # wide letters (``日``: two columns, three bytes) would leave lines a few letters long
    return narrowed(lines, width, lambda line: len(line.encode("utf-8", "surrogatepass")))
