"""Body decoding: content-encoding, JSON and server-sent events.

Errors are raised as :class:`ValueError` with a short reason; the caller adds the file and
interaction that the reason belongs to.
"""

from __future__ import annotations

import json
import re
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from costsim.io.limits import TooDeepError, check_json_depth
from costsim.model.quoting import quoted

__all__ = [
    "MAX_DECODED_BYTES",
    "SseEvent",
    "decode_body",
    "json_kind",
    "json_problem",
    "looks_like_sse",
    "parse_json",
    "parse_sse",
    "try_json",
    "unusable_json",
]

MAX_DECODED_BYTES = 256 * 1024 * 1024
"""Largest body costsim decompresses; a "zip bomb" past it is refused, not expanded."""


def _zlib_stream(data: bytes, wbits: int) -> bytes:
    """Decompress every member of a zlib-family stream, refusing output past the bound."""
    out: list[bytes] = []
    size = 0
    while data:
        engine = zlib.decompressobj(wbits)
        chunk = engine.decompress(data, MAX_DECODED_BYTES + 1 - size)
        size += len(chunk)
        out.append(chunk)
        if size > MAX_DECODED_BYTES or engine.unconsumed_tail:
            raise ValueError(f"decompresses to more than {MAX_DECODED_BYTES:,} bytes; refused")
        if not engine.eof:
            raise EOFError("compressed data ends before the end-of-stream marker")
        data = engine.unused_data.lstrip(b"\x00")  # gzip allows members back to back
        if wbits != 31:
            break
    return b"".join(out)


def _gunzip(data: bytes) -> bytes:
    return _zlib_stream(data, 31)


def _inflate(data: bytes) -> bytes:
    try:
        return _zlib_stream(data, zlib.MAX_WBITS)
    except zlib.error:
        return _zlib_stream(data, -zlib.MAX_WBITS)  # raw deflate, as some servers send


def _unbrotli(data: bytes) -> bytes:
    try:
        import brotli
    except ImportError:
        raise ValueError(
            "is brotli-compressed; install the 'brotli' package (pip install 'costsim[brotli]')"
        ) from None
    result: bytes = brotli.decompress(data)
    return result


def _unzstd(data: bytes) -> bytes:
    try:
        import zstandard
    except ImportError:
        raise ValueError("is zstd-compressed; install the 'zstandard' package") from None
    result: bytes = zstandard.ZstdDecompressor().decompressobj().decompress(data)
    return result


_DECODERS: dict[str, Callable[[bytes], bytes]] = {
    "gzip": _gunzip,
    "x-gzip": _gunzip,
    "deflate": _inflate,
    "br": _unbrotli,
    "zstd": _unzstd,
}


def decode_body(stored: str | bytes, headers: Mapping[str, str]) -> bytes:
    """Bytes of a stored body, decompressed per ``content-encoding`` when it is compressed.

    A recorder that decoded the body before storing it may leave the header in place; a body
    that is plainly text already is taken as it is. Compressed data that cannot be
    decompressed is an error, never an empty body.
    """
    data = stored.encode("utf-8") if isinstance(stored, str) else bytes(stored)
    encodings = [
        name.strip().lower()
        for name in headers.get("content-encoding", "").split(",")
        if name.strip().lower() not in ("", "identity")
    ]
    if data[:2] == b"\x1f\x8b" and "gzip" not in encodings:
        encodings = ["gzip"]  # gzip magic without a header: decompress anyway
    for name in reversed(encodings):
        if _is_plain_text(data):
            break
        decoder = _DECODERS.get(name)
        if decoder is None:
            raise ValueError(f"has unsupported content-encoding {quoted(name)}")
        try:
            data = decoder(data)
        except ValueError:
            raise
        except Exception as exc:  # zlib.error, EOFError, brotli.error, ...
            raise ValueError(f"is corrupt {name} data ({type(exc).__name__}: {exc})") from None
    return data


def _is_plain_text(data: bytes) -> bool:
    """Whether stored bytes are already-decoded text (compressed data never is)."""
    if data[:2] == b"\x1f\x8b":
        return False  # gzip magic: compressed, however the header reads
    probe = data[:4096]
    try:
        text = probe.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < len(probe) - 3:
            return False
        text = probe[: exc.start].decode("utf-8")
    if not all(ch.isprintable() or ch in "\r\n\t" for ch in text):
        return False
    # Decoded HTTP bodies (JSON, SSE, error pages) are mostly ASCII; compressed bytes that
    # happen to be valid UTF-8 are not.
    return sum(ch.isascii() for ch in text) >= 0.9 * len(text)


def parse_json(body: bytes | str) -> Any:
    """Decode a JSON body; raises ValueError with the position of the problem.

    Nesting is checked before the (recursive) decoder runs; numbers the decoder cannot hold
    (an integer of thousands of digits) are a ValueError too, never a crash.
    """
    try:
        check_json_depth(body)
        return json.loads(body)
    except TooDeepError as exc:
        raise ValueError(str(exc)) from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"is not valid JSON ({json_problem(exc)})") from None
    except UnicodeDecodeError as exc:
        raise ValueError(f"is not UTF-8 text (byte {exc.start})") from None
    except (ValueError, RecursionError) as exc:
        raise ValueError(f"is not usable JSON ({unusable_json(exc)})") from None


def unusable_json(exc: ValueError | RecursionError) -> str:
    """Why the decoder gave up, in a few words (not Python's advice to the programmer)."""
    digits = re.search(r"value has (\d+) digits", str(exc))
    if digits:
        return f"an integer of {int(digits[1]):,} digits, more than any count or price holds"
    return str(exc).splitlines()[0][:120] if str(exc) else type(exc).__name__


def json_problem(exc: json.JSONDecodeError) -> str:
    """What the decoder found, and where: ``Expecting value at line 1 column 121``,
    ``Unterminated string starting at line 1 column 310``."""
    at = "" if exc.msg.endswith(" at") else " at"
    return f"{exc.msg}{at} line {exc.lineno} column {exc.colno}"


def try_json(text: str) -> Any:
    """``text`` decoded as JSON, or None when it is not (safely) decodable JSON."""
    try:
        return parse_json(text)
    except ValueError:
        return None


@dataclass(frozen=True, slots=True)
class SseEvent:
    event: str
    data: Any
    """The event's data decoded as JSON, or the raw text when it is not JSON (``[DONE]``)."""


def looks_like_sse(body: bytes) -> bool:
    head = body[:256].lstrip()
    return head.startswith((b"event:", b"data:", b":"))


def parse_sse(body: bytes) -> list[SseEvent]:
    """Split a text/event-stream body into events (``event:`` / ``data:`` fields).

    A last event the body ends inside (no blank line after it, and data that is not whole
    JSON) is not an event, as the SSE standard has it: a stream cut off mid-event reads as
    the events before the cut, and the caller sees a stream without its end."""
    events: list[SseEvent] = []
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"is not UTF-8 text (byte {exc.start})") from None
    text = text.replace("\r\n", "\n").replace("\r", "\n")  # the standard's three line ends
    chunks = text.split("\n\n")
    cut = len(chunks) - 1 if not text.endswith("\n\n") else -1
    for at, chunk in enumerate(chunks):
        name, data_lines = "", []
        for line in chunk.split("\n"):
            if line.startswith("event:"):
                name = line[6:].strip()
            elif line.startswith("data:"):
                data_lines.append(line[5:].removeprefix(" "))
        if not data_lines:
            continue
        data_text = "\n".join(data_lines)
        try:
            data: Any = parse_json(data_text)
        except ValueError as exc:
            if at == cut:
                break  # the stream was cut inside its last event
            if data_text.strip().startswith("{"):
                raise ValueError(
                    f"has an event {quoted(name or '(unnamed)')} whose data {exc}"
                ) from None
            data = data_text
        events.append(SseEvent(event=name, data=data))
    return events


_JSON_KINDS: dict[type, str] = {
    type(None): "null",
    bool: "boolean",
    int: "number",
    float: "number",
    str: "string",
    list: "array",
    dict: "object",
}


def json_kind(value: object) -> str:
    """What a decoded JSON value is, in JSON's words (``null``, ``array``, ...)."""
    return _JSON_KINDS.get(type(value), type(value).__name__)
