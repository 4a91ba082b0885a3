"""A name from a recording as a note or a message names it: whole when it is of a sane length,
else its start and end around an ellipsis, and how long it was.

A recording can name a model, a tool or a header with 10,000 characters; a note that quotes
it whole fills a hundred lines, once for each note that names it. Every note and message
that quotes a recorded name goes through :func:`quoted` (or :func:`short_name`, unquoted);
JSON keeps the name exact in its own field.
"""

from __future__ import annotations

import re

__all__ = ["NAME_LIMIT", "model_family", "quoted", "short_name"]

NAME_LIMIT = 120
"""Characters of a name quoted whole (a Bedrock inference profile's ARN takes about 100)."""


def _cut(name: str, limit: int) -> tuple[str, str]:
    """(``name`` or its start and end around ``…``, `` (N characters)`` when cut, else
    nothing)."""
    if len(name) <= limit:
        return name, ""
    head = (limit - 1) * 2 // 3
    tail = limit - 1 - head
    return f"{name[:head]}…{name[len(name) - tail :]}", f" ({len(name):,} characters)"


def short_name(name: str, limit: int = NAME_LIMIT) -> str:
    """``name`` whole up to ``limit`` characters, else cut in the middle:
    ``claude-xxxxxx…xxxx (10,000 characters)``."""
    kept, said = _cut(name, limit)
    return kept + said


_DATE_STAMP = re.compile(r"[-@](?:\d{8}|\d{4}-\d{2}-\d{2})$")


def model_family(name: str) -> str:
    """A model named without its date stamp (``claude-haiku-4-5-20251001``,
    ``claude-sonnet-4@20250514``: ``claude-haiku-4-5``), cut as :func:`short_name` cuts it:
    for notes that say the same of a snapshot and its alias, once."""
    return short_name(_DATE_STAMP.sub("", name) or name)


def quoted(name: str, limit: int = NAME_LIMIT) -> str:
    """``name`` quoted as ``repr`` quotes it (control characters as escapes), cut as
    :func:`short_name` cuts it: ``'claude-xxxxxx…xxxx' (10,000 characters)``."""
    kept, said = _cut(name, limit)
    return repr(kept) + said
