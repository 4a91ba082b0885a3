"""A share as it is written down (in the cache, and from a worker to the process that merges):
what a variant leaves as recorded is not written again.

A share holds, per variant, the sums of every cassette (the variant's, and its
baseline's) and every cassette's band; most variants change few cassettes, so almost all of
those equal the recording's sums and a zero band. Written in full, the corpus's comparison was
26 MB of JSON, 23 of them such repeats. Packed, a variant's per-cassette tables hold only the
cassettes where they differ (from the recording's sums, or from a zero band), and unpacking
puts the others back, in the recording's order: the unpacked share equals the share packed
(and shares the recording's sums between columns, as :func:`costsim.analysis.merging.merge`
does). A table whose cassettes are not the recording's, in its order, is written in full.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TypeVar

from costsim.analysis.outcomes import Share, VariantPart
from costsim.analysis.spread import NONE, Spread
from costsim.model import CassettePath

__all__ = ["Packed", "Sparse", "pack", "unpack"]

V = TypeVar("V")

_ZERO_BAND: tuple[Spread, Spread, bool] = (NONE, NONE, False)
"""A cassette's band when nothing behind it is estimated: (cost, delta) spreads, estimated."""


@dataclass(slots=True)
class Sparse:
    """Which of a variant's per-cassette tables are written as differences."""

    per_cassette: bool = False
    baseline_per_cassette: bool = False
    bands: bool = False


@dataclass(slots=True)
class Packed:
    """A share whose variants' per-cassette tables may hold only what differs (``sparse``,
    one per variant; none: nothing is packed)."""

    share: Share
    sparse: list[Sparse] = field(default_factory=list)


def _differences(
    table: dict[CassettePath, V], keys: list[CassettePath], base: Mapping[CassettePath, V] | V
) -> dict[CassettePath, V] | None:
    """The entries of ``table`` unlike ``base`` (a table, or one value for every cassette);
    None when ``table``'s cassettes are not ``keys`` in that order."""
    if len(table) != len(keys) or list(table) != keys:
        return None
    if isinstance(base, Mapping):
        return {path: value for path, value in table.items() if value != base[path]}
    return {path: value for path, value in table.items() if value != base}


def pack(share: Share) -> Packed:
    """``share`` with what each variant leaves as recorded left out (``share`` is unchanged)."""
    recorded = share.baseline_per_cassette
    keys = list(recorded)
    parts: list[VariantPart] = []
    sparse: list[Sparse] = []
    for item in share.variants:
        own = _differences(item.per_cassette, keys, recorded)
        like = _differences(item.baseline_per_cassette, keys, recorded)
        bands = _differences(item.bands.per_cassette, keys, _ZERO_BAND)
        sparse.append(Sparse(own is not None, like is not None, bands is not None))
        parts.append(
            replace(
                item,
                per_cassette=item.per_cassette if own is None else own,
                baseline_per_cassette=item.baseline_per_cassette if like is None else like,
                bands=item.bands if bands is None else replace(item.bands, per_cassette=bands),
            )
        )
    return Packed(replace(share, variants=parts), sparse)


def _filled(
    table: dict[CassettePath, V], keys: list[CassettePath], base: Mapping[CassettePath, V] | V
) -> dict[CassettePath, V]:
    if isinstance(base, Mapping):
        return {path: table.get(path, base[path]) for path in keys}
    return {path: table.get(path, base) for path in keys}


def unpack(packed: Packed) -> Share:
    """The share ``packed`` was made from (every variant's per-cassette tables whole)."""
    share = packed.share
    if not packed.sparse:
        return share
    if len(packed.sparse) != len(share.variants):
        raise ValueError("a packed share names a different number of variants")
    recorded = share.baseline_per_cassette
    keys = list(recorded)
    for item, sparse in zip(share.variants, packed.sparse, strict=True):
        tables = (
            (sparse.per_cassette, item.per_cassette),
            (sparse.baseline_per_cassette, item.baseline_per_cassette),
            (sparse.bands, item.bands.per_cassette),
        )
        if any(packed and not table.keys() <= recorded.keys() for packed, table in tables):
            raise ValueError("a packed share's variant names a cassette the share does not")
        if sparse.per_cassette:
            item.per_cassette = _filled(item.per_cassette, keys, recorded)
        if sparse.baseline_per_cassette:
            item.baseline_per_cassette = _filled(item.baseline_per_cassette, keys, recorded)
        if sparse.bands:
            item.bands.per_cassette = _filled(item.bands.per_cassette, keys, _ZERO_BAND)
    return share
