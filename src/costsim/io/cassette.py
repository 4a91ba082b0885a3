"""Read vcrpy cassettes (YAML or JSON, any vcrpy version, any HTTP client) into interactions.

The document is parsed by :mod:`costsim.cassette_yaml` (safe tags only, nesting and alias
expansion bounded). Bodies come out as bytes (decompressed per ``content-encoding``) or, for
recorders that store them parsed (``parsed_body``), as the stored mapping.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from costsim.errors import CassetteError, CassetteNotFoundError, InteractionError
from costsim.io.bodies import decode_body
from costsim.io.cassette_yaml import parse_document
from costsim.io.encoding import TextEncodingError, decode
from costsim.io.walk import find_cassettes

__all__ = [
    "Body",
    "Cassette",
    "Headers",
    "Interaction",
    "cassette_from_bytes",
    "iter_cassette_paths",
    "load_cassette",
]


class Headers(Mapping[str, str]):
    """Case-insensitive HTTP headers, one value per name.

    vcrpy stores each header as a list of values. Real recordings carry lists where the next
    header's value leaked in (``openai-version: ['2020-10-01', '__cf_bm=...']``), so the first
    value is the header's value.
    """

    __slots__ = ("_items",)

    def __init__(self, raw: object) -> None:
        items: dict[str, str] = {}
        if isinstance(raw, Mapping):
            for name, value in raw.items():
                values = [
                    v
                    for v in (value if isinstance(value, list | tuple) else [value])
                    if v is not None
                ]
                if values:
                    items.setdefault(str(name).lower(), str(values[0]))
        elif isinstance(raw, list | tuple):  # [name, value] pairs, or raw "Name: value" lines
            for entry in raw:
                if isinstance(entry, list | tuple) and len(entry) == 2:
                    name, value = str(entry[0]), str(entry[1])
                elif isinstance(entry, str) and ":" in entry:
                    name, _, value = entry.partition(":")
                else:
                    continue
                items.setdefault(name.strip().lower(), value.strip())
        self._items = items

    def __getitem__(self, name: str) -> str:
        return self._items[name.lower()]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)


@dataclass(frozen=True, slots=True)
class Body:
    """A request or response body: raw bytes, or the mapping a recorder stored parsed."""

    raw: bytes | None = None
    parsed: Any = None
    problem: str | None = None
    """Why the stored body cannot be read (corrupt gzip, say): the interaction is then
    unreadable, an error for whatever reads it, or left out alone by a lenient read."""

    @property
    def empty(self) -> bool:
        return not self.raw and self.parsed is None

    def text(self) -> str:
        """The body as text (a parsed body as JSON), for searching."""
        if self.parsed is not None:
            return json.dumps(self.parsed, default=str, ensure_ascii=False)
        return (self.raw or b"").decode("utf-8", errors="replace")


@dataclass(frozen=True, slots=True)
class Interaction:
    """One recorded HTTP exchange."""

    path: Path
    index: int
    method: str
    uri: str
    request_headers: Headers
    request_body: Body
    status: int
    response_headers: Headers
    response_body: Body

    @property
    def host(self) -> str:
        try:
            return (urlsplit(self.uri).hostname or "").lower()
        except ValueError:  # an unbalanced IPv6 bracket, say: no host to tell
            return ""

    @property
    def url_path(self) -> str:
        try:
            return urlsplit(self.uri).path
        except ValueError:
            return ""

    @property
    def recorded_at(self) -> datetime | None:
        value = self.response_headers.get("date")
        if not value:
            return None
        try:
            parsed = parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError, OverflowError):
            return None
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)  # HTTP dates are GMT

    def fail(self, reason: str) -> InteractionError:
        """An error naming this interaction's file and index."""
        return InteractionError(self.path, self.index, reason)


@dataclass(frozen=True, slots=True)
class Cassette:
    path: Path
    interactions: tuple[Interaction, ...]
    size_bytes: int
    versioned: bool = True
    """The file has vcrpy's closing ``version`` key (or is a bare list, vcrpy's format before
    1.0, which had none): without it, a file cut between two interactions reads as whole."""


def iter_cassette_paths(paths: Iterator[Path] | list[Path] | tuple[Path, ...]) -> Iterator[Path]:
    """Expand files and folders (walked as :mod:`costsim.io.walk` does) into cassette files."""
    yield from find_cassettes(list(paths)).files


def load_cassette(path: Path) -> Cassette:
    """Read one cassette file. Raises a :class:`CassetteError` naming what is wrong."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise CassetteNotFoundError(path) from None
    except OSError as exc:
        raise CassetteError(path, f"cannot be read ({exc.strerror})") from None
    return cassette_from_bytes(path, data)


def cassette_from_bytes(path: Path, data: bytes) -> Cassette:
    """Parse the bytes of the cassette file at ``path`` (read by the caller)."""
    try:
        text, size = decode(data)
    except TextEncodingError as exc:
        raise CassetteError(path, str(exc)) from None
    if not text.strip():
        what = "is empty" if not data else f"holds only blank space ({plural_bytes(len(data))})"
        raise CassetteError(path, f"{what}: not a vcrpy cassette")
    document = parse_document(path, text, size)
    raw_interactions = _interaction_list(path, document)
    if _cut_short(document, text):
        raise CassetteError(
            path,
            "does not end with a newline and has no 'version' key (vcrpy writes it last): a "
            "truncated cassette? Re-record it; if it is whole, end it with a newline",
        )
    interactions = tuple(
        _interaction(path, index, raw) for index, raw in enumerate(raw_interactions)
    )
    versioned = not isinstance(document, Mapping) or "version" in document
    return Cassette(path, interactions, size_bytes=len(data), versioned=versioned)


def plural_bytes(count: int) -> str:
    return f"{count:,} byte{'' if count == 1 else 's'}"


def _cut_short(document: Any, text: str) -> bool:
    """A YAML cassette that stops mid-line before vcrpy's closing ``version`` key: cut off
    between two interactions, where what is left still parses. Every YAML writer ends its
    file with a newline, but some recorders write no version, so neither sign alone is
    enough; JSON cassettes do not count (vcrpy writes them without a final newline)."""
    if not isinstance(document, Mapping) or "version" in document:
        return False
    if not text or text.endswith(("\n", "\r")):
        return False
    return text.lstrip()[:1] not in ("{", "[")


def _interaction_list(path: Path, document: Any) -> list[Any]:
    if isinstance(document, list):  # cassettes from vcrpy before 1.0: a bare list
        return document
    if not isinstance(document, Mapping):
        raise CassetteError(path, "is not a vcrpy cassette (no 'interactions' list)")
    interactions = document.get("interactions")
    if not isinstance(interactions, list):
        if "variants" in document and "cassettes" in document:
            raise CassetteError(
                path,
                "is a costsim scenario, not a vcrpy cassette: give it to costsim compare (or "
                "point this command at the cassettes it lists)",
            )
        raise CassetteError(path, "is not a vcrpy cassette (no 'interactions' list)")
    return interactions


def _interaction(path: Path, index: int, raw: Any) -> Interaction:
    if not isinstance(raw, Mapping) or not isinstance(raw.get("request"), Mapping):
        raise InteractionError(path, index, "has no 'request' mapping")
    request, response = raw["request"], raw.get("response")
    if not isinstance(response, Mapping):
        raise InteractionError(path, index, "has no 'response' mapping")
    request_headers = Headers(request.get("headers"))
    response_headers = Headers(response.get("headers"))
    status = response.get("status")
    code = status.get("code") if isinstance(status, Mapping) else status
    if code is None:
        code = response.get("status_code")
    if code is None:
        raise InteractionError(path, index, "response has no status (truncated cassette?)")
    status_code = _status(code)
    if status_code is None:
        raise InteractionError(
            path, index, f"response status {_short(code)} is not an HTTP status code"
        )
    method, uri = request.get("method"), _uri(request)
    if not isinstance(method, str) or not method.strip():
        raise InteractionError(path, index, f"request has no method ({_short(method)})")
    if method.strip().upper() not in _METHODS:
        raise InteractionError(path, index, f"request method {_short(method)} is not HTTP's")
    if not uri:
        given = request.get("uri", request.get("url"))
        what = "no URI" if given in (None, "") else f"a URI that is not text ({_short(given)})"
        raise InteractionError(path, index, f"request has {what}")

    def body(message: Mapping[str, Any], headers: Headers, side: str) -> Body:
        try:
            return _body(message, headers)
        except ValueError as exc:  # the interaction is whole: what reads it says so
            return Body(problem=f"{side} body: {exc}")

    return Interaction(
        path=path,
        index=index,
        method=method.strip().upper(),
        uri=uri,
        request_headers=request_headers,
        request_body=body(request, request_headers, "request"),
        status=status_code,
        response_headers=response_headers,
        response_body=body(response, response_headers, "response"),
    )


_METHODS = frozenset(
    {"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "CONNECT", "TRACE"}
)


def _status(code: object) -> int | None:
    """An HTTP status code (100-599) from what the recorder stored, else None."""
    if isinstance(code, bool):
        return None
    if isinstance(code, str) and code.strip().isdigit() and len(code.strip()) == 3:
        code = int(code.strip())
    if isinstance(code, float) and code.is_integer():
        code = int(code)
    return code if isinstance(code, int) and 100 <= code <= 599 else None


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:40] + "…"


def _body(message: Mapping[str, Any], headers: Headers) -> Body:
    if "parsed_body" in message:
        parsed = message["parsed_body"]
        if isinstance(parsed, str | bytes):  # pydantic-ai stores SSE streams as text
            return Body(raw=decode_body(parsed, headers))
        return Body(parsed=parsed)
    stored = message.get("body")
    if isinstance(stored, Mapping) and set(stored) <= {"string", "encoding"}:
        stored = stored.get("string")
    if stored is None and "content" in message:
        stored = message["content"]
    if stored is None:
        return Body()
    if isinstance(stored, Mapping | list):  # a body some recorder stored as data
        return Body(parsed=stored)
    return Body(raw=decode_body(_stored_bytes(stored), headers))


def _stored_bytes(stored: object) -> str | bytes:
    """Body content as vcrpy's loader may build it: text, bytes, BytesIO, or an iterator."""
    if isinstance(stored, str | bytes):
        return stored
    if isinstance(stored, io.BytesIO):
        return stored.getvalue()
    if isinstance(stored, Iterator):
        chunks = list(stored)
        if all(isinstance(chunk, bytes) for chunk in chunks):
            return b"".join(chunks)
        if all(isinstance(chunk, str) for chunk in chunks):
            return "".join(chunks)
    raise ValueError(f"is a {type(stored).__name__}, not text or bytes")


def _uri(request: Mapping[str, Any]) -> str:
    uri = request.get("uri") or request.get("url")
    if uri:
        return uri if isinstance(uri, str) else ""
    if "host" in request:  # vcrpy before 1.0: protocol, host, port and path
        protocol = request.get("protocol") or "https"
        port = request.get("port")
        default = {"https": 443, "http": 80}.get(str(protocol))
        netloc = str(request["host"]) + (f":{port}" if port and port != default else "")
        return f"{protocol}://{netloc}{request.get('path') or '/'}"
    return ""
