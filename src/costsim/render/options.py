"""How text output is laid out: one options object every text renderer takes."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["RenderOptions"]


@dataclass(frozen=True, slots=True)
class RenderOptions:
    """How text output is laid out (JSON carries every figure whatever these say).

    ``width``: the terminal's columns (tables are cut to fit it); ``verbose``: list every
    event, note and unpriced call instead of the first few and ``and N more (use -v)``;
    ``wide``: the full token split, not cut to ``width``.
    """

    width: int = 100
    verbose: bool = False
    wide: bool = False

    @property
    def fit(self) -> int:
        """The width tables are cut to (none with ``wide``)."""
        return 10**6 if self.wide else self.width
