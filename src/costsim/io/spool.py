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
import contextlib
import tempfile
from collections.abc import Iterable, Iterator
from typing import IO

from costsim.errors import OutputError

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
        """The text of ``pieces``, written as they come (each must encode as UTF-8). Raises
        :class:`OutputError` when the temporary folder cannot take it."""
        file = tempfile.SpooledTemporaryFile(max_size=_IN_MEMORY)  # noqa: SIM115 (kept open)
        length = 0
        try:
            for piece in pieces:
                data = piece.encode("utf-8")
                file.write(data)
                length += len(data)
        except OSError as exc:
            _close(file)
            raise OutputError(
                f"the output ({length:,} bytes so far) cannot be kept in the temporary folder "
                f"{tempfile.gettempdir()} ({exc.strerror or exc}): free space there, or set "
                "TMPDIR to a folder with room"
            ) from None
        except BaseException:  # Ctrl-C, an error making the text: nothing left behind
            _close(file)
            raise
        return cls(file, 0, length)

    def chunks(self) -> Iterator[bytes]:
        """Its bytes, a block at a time (from the start, each time it is asked)."""
        self._file.seek(self._start)
        left = self.length
        while left > 0:
            block = self._file.read(min(_BLOCK, left))
            if not block:  # a cached output cut in place while it was read: not costsim's way
                raise OutputError(
                    f"the output ends {left:,} bytes early (its cache entry was cut while "
                    "it was read): run again, or with --no-cache"
                )
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
        _close(self._file)

    def __enter__(self) -> Body:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _close(file: IO[bytes]) -> None:
    with contextlib.suppress(OSError):  # a temporary file that could not be flushed: gone
        file.close()
