"""Small readers for decoded JSON, so adapters stay declarative about shapes they accept."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from costsim.io.bodies import try_json
from costsim.model import CacheControl


def obj(value: Any) -> Mapping[str, Any]:
    """``value`` if it is a JSON object, else an empty one."""
    return value if isinstance(value, Mapping) else {}


def items(value: Any) -> list[Any]:
    """``value`` if it is a JSON array, else an empty list."""
    return value if isinstance(value, list) else []


def integer(value: Any) -> int:
    """A token count: ints (and integral floats) as they are, anything else (null) as 0."""
    if isinstance(value, bool):
        return 0
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return 0


def optional_int(value: Any) -> int | None:
    return None if value is None else integer(value)


def text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def cache_control(value: Any) -> CacheControl | None:
    if not isinstance(value, Mapping):
        return None
    return CacheControl(ttl="1h" if value.get("ttl") == "1h" else "5m")


def digest(value: Any) -> str:
    """A short stable digest of inline data (images, documents) used as its identity."""
    raw = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    return "sha1:" + hashlib.sha1(raw.encode("utf-8"), usedforsecurity=False).hexdigest()[:16]


def parse_arguments(value: Any) -> Any:
    """Tool-call arguments: OpenAI sends a JSON string; keep the string if it is not JSON."""
    if isinstance(value, str):
        if not value.strip():
            return {}
        decoded = try_json(value)
        return value if decoded is None and value.strip() != "null" else decoded
    return value


def timestamp(value: Any) -> datetime | None:
    """A Unix timestamp (seconds) as an aware datetime; None when absent or implausible."""
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 1_000_000_000:
        return None
    try:
        return datetime.fromtimestamp(value, tz=UTC)
    except (OverflowError, OSError, ValueError):
        return None
