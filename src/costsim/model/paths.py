"""A cassette's path as cached results store it: read back from JSON once per distinct path.

A comparison's share of one cassette names that cassette's path dozens of times (per variant,
per table, per event), and pydantic's own ``Path`` validator costs about 7 µs a value: a fifth
of reading a cached share back. :data:`CassettePath` is an ordinary :class:`~pathlib.Path`
to every type checker and to the code; to pydantic it is a string (and only a string, or a
``Path`` in Python mode) turned into the one ``Path`` object remembered for that text.

The model stays free of pydantic: the schema is built only when pydantic asks for it.
"""

from __future__ import annotations

from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Annotated, Any

if TYPE_CHECKING:
    from pydantic import GetCoreSchemaHandler
    from pydantic_core import CoreSchema

__all__ = ["CassettePath"]

_KNOWN: dict[str, Path] = {}
_LIMIT = 100_000
"""Distinct paths remembered before starting afresh (a long-lived process stays bounded)."""


def _path(value: Any) -> Path:
    if isinstance(value, str):
        known = _KNOWN.get(value)
        if known is None:
            if len(_KNOWN) >= _LIMIT:
                _KNOWN.clear()
            known = _KNOWN[value] = Path(value)
        return known
    if isinstance(value, PurePath):
        return Path(value)
    raise ValueError(f"a path is a string, not {type(value).__name__}")


class _Remembered:
    """pydantic's schema for :data:`CassettePath` (see the module docstring)."""

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        from pydantic_core import core_schema

        return core_schema.no_info_plain_validator_function(
            _path,
            serialization=core_schema.plain_serializer_function_ser_schema(
                str, when_used="json-unless-none"
            ),
        )


CassettePath = Annotated[Path, _Remembered]
"""A :class:`~pathlib.Path`, validated by pydantic as described above."""
