"""AWS event-stream bodies (``application/vnd.amazon.eventstream``), as Bedrock streams them.

Each frame is: total length (u32), headers length (u32), prelude CRC32, headers, payload,
message CRC32, all big-endian (AWS "Event stream encoding"). A header is a name (u8 length),
a value type (u8) and a value. Bedrock's ``invoke-with-response-stream`` payloads are
``{"bytes": base64(Anthropic event JSON)}``; ``converse-stream`` payloads are the event itself,
named by the ``:event-type`` header. Frames are returned as :class:`~costsim.bodies.SseEvent`
so adapters read them like server-sent events.
"""

from __future__ import annotations

import base64
import binascii
import struct
import zlib
from collections.abc import Mapping

from costsim.io.bodies import SseEvent, parse_json

__all__ = ["looks_like_eventstream", "parse_eventstream"]

_FIXED = {0: 0, 1: 0, 2: 1, 3: 2, 4: 4, 5: 8, 8: 8, 9: 16}
"""Header value types of fixed size (bool true/false, byte, short, int, long, timestamp, uuid);
types 6 (bytes) and 7 (string) carry a u16 length."""


def looks_like_eventstream(body: bytes) -> bool:
    """Whether a body starts with a well-formed event-stream prelude (its CRC checks)."""
    if len(body) < 16:
        return False
    total, headers, crc = struct.unpack(">III", body[:12])
    return bool(total >= 16 and headers <= total - 16 and zlib.crc32(body[:8]) == crc)


def _headers(data: bytes) -> dict[str, str]:
    found: dict[str, str] = {}
    offset = 0
    while offset < len(data):
        size = data[offset]
        name = data[offset + 1 : offset + 1 + size].decode("utf-8", errors="replace")
        offset += 1 + size
        if offset >= len(data):
            raise ValueError("has an event-stream header without a value")
        kind = data[offset]
        offset += 1
        if kind in (6, 7):
            (length,) = struct.unpack(">H", data[offset : offset + 2])
            value = data[offset + 2 : offset + 2 + length]
            offset += 2 + length
            if kind == 7:
                found[name] = value.decode("utf-8", errors="replace")
        elif kind in _FIXED:
            offset += _FIXED[kind]
        else:
            raise ValueError(f"has an event-stream header of unknown type {kind}")
    return found


def _event(headers: Mapping[str, str], payload: bytes) -> SseEvent:
    name = headers.get(":event-type") or headers.get(":exception-type") or ""
    data = parse_json(payload) if payload.strip() else {}
    if isinstance(data, Mapping) and isinstance(data.get("bytes"), str):
        try:
            inner = base64.b64decode(data["bytes"], validate=True)
        except (binascii.Error, ValueError):
            raise ValueError("has an event-stream chunk whose bytes are not base64") from None
        data = parse_json(inner)
        if isinstance(data, Mapping) and isinstance(data.get("type"), str):
            name = data["type"]
    if headers.get(":message-type") == "exception":
        message = data.get("message") if isinstance(data, Mapping) else None
        return SseEvent("error", {"type": "error", "error": {"message": message or name}})
    return SseEvent(name, data)


def parse_eventstream(body: bytes) -> list[SseEvent]:
    """Every frame of an event-stream body; a frame cut short ends the list (a cut stream)."""
    events: list[SseEvent] = []
    offset = 0
    while len(body) - offset >= 16:
        total, header_size = struct.unpack(">II", body[offset : offset + 8])
        (prelude_crc,) = struct.unpack(">I", body[offset + 8 : offset + 12])
        if zlib.crc32(body[offset : offset + 8]) != prelude_crc:
            raise ValueError(f"has a corrupt event-stream frame at byte {offset}")
        if total < 16 or header_size > total - 16:
            raise ValueError(f"has an event-stream frame of impossible length at byte {offset}")
        if offset + total > len(body):
            break  # the recording ends inside this frame
        frame = body[offset : offset + total]
        (message_crc,) = struct.unpack(">I", frame[-4:])
        if zlib.crc32(frame[:-4]) != message_crc:
            raise ValueError(f"has a corrupt event-stream frame at byte {offset}")
        try:
            headers = _headers(frame[12 : 12 + header_size])
        except (IndexError, struct.error):
            raise ValueError(f"has a corrupt event-stream header at byte {offset}") from None
        events.append(_event(headers, frame[12 + header_size : -4]))
        offset += total
    return events
