"""vcrpy's live objects (the request a test sent, the response a cassette replays) as an
:class:`~costsim.io.cassette.Interaction`, the same shape a cassette file is read into."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from costsim.io.bodies import decode_body
from costsim.io.cassette import Body, Headers, Interaction

__all__ = ["interaction_from_vcr"]


def interaction_from_vcr(
    cassette_path: str, index: int, request: Any, response: Mapping[str, Any]
) -> Interaction:
    """``request`` is a ``vcr.request.Request``; ``response`` the dict vcrpy stores."""
    request_headers = Headers(getattr(request, "headers", {}))
    response_headers = Headers(response.get("headers", {}))
    body = response.get("body")
    stored = body.get("string") if isinstance(body, Mapping) else body
    raw_request = request.body if isinstance(request.body, bytes | str) else None
    status = response.get("status")
    code = status.get("code") if isinstance(status, Mapping) else status
    return Interaction(
        path=Path(cassette_path),
        index=index,
        method=str(request.method).upper(),
        uri=str(request.uri),
        request_headers=request_headers,
        request_body=_body(raw_request, request_headers, "request"),
        status=int(code or 0),
        response_headers=response_headers,
        response_body=_body(stored, response_headers, "response"),
    )


def _body(stored: str | bytes | None, headers: Headers, side: str) -> Body:
    """The body, or why it cannot be read (corrupt gzip, say): what reads the interaction
    then raises an error naming it."""
    if not stored:
        return Body()
    try:
        return Body(raw=decode_body(stored, headers))
    except ValueError as exc:
        return Body(problem=f"{side} body: {exc}")
