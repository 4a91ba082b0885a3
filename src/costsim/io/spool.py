"""A command's text kept outside memory while it is made and written.

A comparison's JSON over a hundred thousand calls is most of a gigabyte: held as one string
(and its encoded, escaped and printable copies) it took several times that in memory, which
grew with the cassettes. A :class:`Body` is written piece by piece to an unnamed temporary
file (kept in memory while small) and read back piece by piece, to the terminal, to the
output file and into the cache; a recalled output is a :class:`Body` over the region of the
cache's file that holds it.
"""

from __future__ import annotations

import codecs
import tempfile
from collections.abc import Iterable, Iterator
from typing import IO

__all__ = ["Body"]

_IN_MEMORY = 8 << 20
"""A body up to this many bytes stays in memory; a larger one goes to a temporary file."""
_BLOCK = 1 << 20
"""Bytes read at a time."""


class Body:
    """UTF-8 text in ``file``, ``length`` bytes from ``start``."""

    def __init__(self, file: IO[bytes], start: int, length: int) -> None:
        self._file, self._start, self.length = file, start, length

    @classmethod
    def of(cls, pieces: Iterable[str]) -> Body:
        """The text of ``pieces``, written as they come (each must encode as UTF-8)."""
        file = tempfile.SpooledTemporaryFile(max_size=_IN_MEMORY)  # noqa: SIM115 (kept open)
        length = 0
        for piece in pieces:
            data = piece.encode("utf-8")
            file.write(data)
            length += len(data)
        return cls(file, 0, length)

    def chunks(self) -> Iterator[bytes]:
        """Its bytes, a block at a time (from the start, each time it is asked)."""
        self._file.seek(self._start)
        left = self.length
        while left > 0:
            block = self._file.read(min(_BLOCK, left))
            if not block:
                raise OSError(f"the text ends {left} bytes early")
            left -= len(block)
            yield block

    def pieces(self) -> Iterator[str]:
        """Its text, a block at a time (a character cut between blocks kept whole)."""
        decoder = codecs.getincrementaldecoder("utf-8")()
        for block in self.chunks():
            if text := decoder.decode(block):
                yield text
        if rest := decoder.decode(b"", final=True):
            yield rest

    @property
    def text(self) -> str:
        """Its whole text (for a small body: a large one is written by :meth:`chunks`)."""
        return "".join(self.pieces())

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> Body:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
