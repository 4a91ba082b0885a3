"""A tokenizer vocabulary (its mergeable ranks) packed for a quick read back from the cache.

Building an encoding's ranks from its shipped BPE file (decompress, check, split, decode
200,000 base64 tokens, parse their ranks) takes about 0.12 s for o200k_base, and a process
pool's every worker builds both encodings a run uses. Packed, the tokens are one run of bytes
in rank order and their end offsets, read back in about a third of the time: a
cold ``compare`` saves that once per worker, and a run that simulates a changed cassette in
its own process once.

The packed form is plain data, checked whole on the way in: a magic line, the SHA-256 of
what follows, the token count, the offsets (4-byte little-endian) and the tokens. Anything
else is refused (None) and the ranks are built from the shipped file again.
"""

from __future__ import annotations

import hashlib
import struct
import sys
from array import array
from itertools import pairwise

__all__ = ["pack", "unpack"]

_MAGIC = b"costsim-vocabulary-1\n"
_COUNT = struct.Struct("<I")
_DIGEST = 32
_SWAP = sys.byteorder != "little"  # offsets are kept little-endian


def pack(ranks: dict[bytes, int]) -> bytes | None:
    """The packed form of ``ranks``; None unless the ranks are 0, 1, 2, ... in order (as
    every tiktoken vocabulary's are), the only kind the form holds."""
    tokens = list(ranks)
    if list(ranks.values()) != list(range(len(tokens))):
        return None
    ends = array("I")
    end = 0
    for token in tokens:
        end += len(token)
        ends.append(end)
    if ends.itemsize != 4:
        return None
    if _SWAP:
        ends.byteswap()
    body = _COUNT.pack(len(tokens)) + ends.tobytes() + b"".join(tokens)
    return _MAGIC + hashlib.sha256(body).digest() + body


def unpack(data: bytes) -> dict[bytes, int] | None:
    """The ranks packed in ``data``; None when it is not a whole packed vocabulary."""
    head = len(_MAGIC) + _DIGEST
    if not data.startswith(_MAGIC) or len(data) < head + _COUNT.size:
        return None
    body = memoryview(data)[head:]
    if hashlib.sha256(body).digest() != data[len(_MAGIC) : head]:
        return None
    (count,) = _COUNT.unpack_from(body)
    tokens_at = _COUNT.size + 4 * count
    if not count or len(body) < tokens_at:  # an empty vocabulary would count nothing
        return None
    ends = array("I")
    if ends.itemsize != 4:
        return None
    ends.frombytes(body[_COUNT.size : tokens_at])
    if _SWAP:
        ends.byteswap()
    tokens = bytes(body[tokens_at:])
    if ends[-1] != len(tokens):
        return None
    # the digest says the bytes are the ones written (a torn or damaged file is refused)
    starts = [0, *ends]
    ranks = dict(zip((tokens[a:b] for a, b in pairwise(starts)), range(count), strict=True))
    return ranks if len(ranks) == count else None  # a token twice: not a vocabulary
