"""Every cache entry, a row of the database or a file, ends with the digest of its bytes.

A flipped bit on disk, or an edited digit, can leave an entry that still reads as JSON and
validates: a different price, a different token count. Sealed, such an entry is refused and
rebuilt, never shown or recalled as another bill. A file is written piece by piece, so the
seal follows the bytes it covers (a row is sealed the same way).
"""

from __future__ import annotations

import hashlib
from typing import IO

__all__ = ["SEAL_LENGTH", "hasher", "seal", "sealed", "sealed_length", "unsealed"]

_MARK = b"\n#costsim-blake2b:"
_BYTES = 16
SEAL_LENGTH = len(_MARK) + 2 * _BYTES
"""Bytes a seal adds to an entry."""


def hasher() -> hashlib.blake2b:
    """What a writer feeds an entry's pieces, in order, before :func:`seal`."""
    return hashlib.blake2b(digest_size=_BYTES)


def seal(digest: hashlib.blake2b) -> bytes:
    """The seal written after the bytes ``digest`` was fed."""
    return _MARK + digest.hexdigest().encode()


def sealed(data: bytes) -> bytes:
    """``data`` followed by its seal."""
    digest = hasher()
    digest.update(data)
    return data + seal(digest)


def unsealed(data: bytes) -> bytes | None:
    """The bytes before ``data``'s seal; None when they are not the ones sealed (damaged,
    edited, cut short, or never sealed)."""
    if len(data) < SEAL_LENGTH or not data[-SEAL_LENGTH:].startswith(_MARK):
        return None
    body = data[:-SEAL_LENGTH]
    digest = hasher()
    digest.update(body)
    return body if data[-2 * _BYTES :] == digest.hexdigest().encode() else None


def sealed_length(file: IO[bytes], size: int, block: int = 1 << 20) -> int | None:
    """The length of the bytes before the seal of the ``size`` bytes of ``file`` (read from
    its start, a block at a time: a large entry is checked without being held); None when
    they are not the ones sealed."""
    if size < SEAL_LENGTH:
        return None
    file.seek(0)
    digest, left = hasher(), size - SEAL_LENGTH
    while left > 0:
        data = file.read(min(block, left))
        if not data:
            return None
        digest.update(data)
        left -= len(data)
    return size - SEAL_LENGTH if file.read(SEAL_LENGTH + 1) == seal(digest) else None
