"""The text of a YAML or JSON file: UTF-8, or UTF-16 / UTF-32 as YAML tells them apart.

YAML (1.2, section 5.2) and JSON (RFC 8259, section 8.1) streams may be UTF-8, UTF-16 or
UTF-32; a byte order mark names the encoding, and without one the null bytes around the first
character (always ASCII) do. An editor or a shell on Windows (PowerShell's ``>``) writes
UTF-16 with a mark; such a cassette reads as any other.
"""

from __future__ import annotations

import codecs

__all__ = ["TextEncodingError", "decode", "decode_head", "decode_text"]

_MARKS = (  # longest first: a UTF-32 LE mark begins with the UTF-16 LE one
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
)


class TextEncodingError(ValueError):
    """The bytes are not text in the encoding they show: ``str(error)`` says where."""


def _encoding(data: bytes) -> tuple[str, int]:
    """(the encoding, the length of its mark) of ``data``."""
    for mark, name in _MARKS:
        if data.startswith(mark):
            return name, len(mark)
    head = data[:4]
    if len(head) == 4 and head[:3] == b"\0\0\0" and head[3]:
        return "utf-32-be", 0
    if len(head) == 4 and head[0] and head[1:] == b"\0\0\0":
        return "utf-32-le", 0
    if len(head) >= 2 and not head[0] and head[1]:
        return "utf-16-be", 0
    if len(head) >= 2 and head[0] and not head[1]:
        return "utf-16-le", 0
    return "utf-8", 0


def decode_text(data: bytes) -> str:
    """The text of ``data`` without its byte order mark; a :class:`TextEncodingError` names
    the encoding and the byte where it breaks."""
    return decode(data)[0]


def decode(data: bytes) -> tuple[str, int]:
    """(the text of ``data``, its size in UTF-8 bytes: what size limits are set in)."""
    name, skip = _encoding(data)
    try:
        text = data[skip:].decode(name)
    except UnicodeDecodeError as exc:
        if not skip and b"\0" in data:  # no mark, a null byte: binary (a trial read "UTF-16")
            raise TextEncodingError(
                f"is not text (a null byte at byte {data.index(0)}): a binary file, not YAML "
                "or JSON"
            ) from None
        label = "UTF-8" if name == "utf-8" else name.upper().replace("-BE", " BE")
        label = label.replace("-LE", " LE")
        raise TextEncodingError(f"is not {label} text (byte {exc.start + skip})") from None
    return text, len(data) - skip if name == "utf-8" else len(text.encode("utf-8"))


def decode_head(data: bytes) -> str:
    """The text of the first bytes of a file (``data``), in its encoding, without its mark;
    a character the cut splits, or a byte that is not text, is left out."""
    name, skip = _encoding(data)
    return data[skip:].decode(name, errors="ignore")
