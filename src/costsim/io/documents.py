"""JSON documents in files a user keeps (baselines): read as strictly as cassettes are.

The text is UTF-8, or UTF-16 / UTF-32 told by a byte order mark (an editor or PowerShell's
``>`` on Windows writes those; see :mod:`costsim.io.encoding`), and a UTF-8 mark is skipped.
Nesting is measured before the recursive decoder runs, an integer of thousands of digits is
refused, and so are what JSON does not allow but Python's decoder takes (``NaN``,
``Infinity``) and a key given twice in one object, whose first value the decoder would
silently drop.
"""

from __future__ import annotations

import json
from typing import Any

from costsim.io.bodies import json_problem, unusable_json
from costsim.io.encoding import TextEncodingError, decode_text
from costsim.io.limits import TooDeepError, check_json_depth

__all__ = ["DocumentError", "parse_document"]


class DocumentError(ValueError):
    """The bytes are not a usable JSON document; ``str(error)`` says why, as a phrase that
    follows the file's name (``not valid JSON (Expecting value at line 1 column 1)``)."""


def _constant(name: str) -> Any:
    raise DocumentError(f"not valid JSON ({name} is not a JSON number)")


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    document = dict(pairs)
    if len(document) == len(pairs):
        return document
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            raise DocumentError(
                f"not usable JSON (the key {_cut(key)} is given twice in one object)"
            )
        seen.add(key)
    return document  # (not reached: a shorter dict means a key came twice)


def _cut(text: str, limit: int = 60) -> str:
    shown = repr(text)
    return shown if len(shown) <= limit else f"{shown[: limit - 4]}...{shown[-1]}"


def parse_document(data: bytes) -> Any:
    """The JSON document ``data`` holds; a :class:`DocumentError` says what is wrong."""
    try:
        text = decode_text(data)
        check_json_depth(text)
        return json.loads(text, parse_constant=_constant, object_pairs_hook=_unique)
    except DocumentError:
        raise
    except (TextEncodingError, TooDeepError) as exc:
        raise DocumentError(str(exc).removeprefix("is ")) from None
    except json.JSONDecodeError as exc:
        raise DocumentError(f"not valid JSON ({json_problem(exc)})") from None
    except (ValueError, RecursionError) as exc:
        raise DocumentError(f"not usable JSON ({unusable_json(exc)})") from None
