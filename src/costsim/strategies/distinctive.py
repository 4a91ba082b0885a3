"""Distinctive tokens of a text: what a response can only have taken from what it was sent.

A recorded response that names a path, a quoted string, a code span, an identifier
(``retry_call``, ``DuplicateRefundError``, ``rf_8812``) or a number of three or more digits
that the request held only in a part a strategy takes away depended on that part: the
strategies' divergence checks look for these.
"""

from __future__ import annotations

import re

__all__ = ["distinctive"]

_DISTINCTIVE = re.compile(
    r"(?P<path>~?(?:[\w.-]*/)+[\w.-]+)"
    r"|\"(?P<quoted>[^\"\n]{4,80})\"|`(?P<code>[^`\n]{3,80})`"
    r"|(?P<word>\b\w{6,}\b)"  # an identifier: a digit, an inner capital or underscore (below)
    r"|(?P<number>\b\d{3,}\b)"
)


def distinctive(text: str) -> list[str]:
    """Paths, quoted strings, code spans, numbers of 3+ digits, and words of 6+ characters with
    a digit, or a capital or an underscore after the first letter, in order."""
    tokens: list[str] = []
    for match in _DISTINCTIVE.finditer(text):
        kind = match.lastgroup or ""
        token = match.group(kind)
        if kind == "word" and not any(c.isdigit() or c.isupper() or c == "_" for c in token[1:]):
            continue
        tokens.append(token)
    return tokens
