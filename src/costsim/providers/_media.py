"""What metering needs to know about inline images and PDFs, read from the recorded bytes.

Image tokens depend on the image's pixel size and PDF tokens on its pages and text (see
``costsim.metering.media``), so the adapters read them once, at load time: pixel dimensions
from the PNG / JPEG / GIF / WebP header (the ``imagesize`` package reads only the header), page
count and extracted text of a PDF (``pypdf``, imported only when a recording carries a PDF).
Unreadable data is not an error: the block keeps zero dimensions / pages and metering falls
back to its per-provider default, flagged by a wider error band.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import io
import logging
from dataclasses import dataclass

__all__ = ["PdfFacts", "decode_base64", "image_dimensions", "pdf_facts"]

_PDF_MAGIC = b"%PDF"


def decode_base64(data: str) -> bytes:
    """Bytes of base64 ``data`` (a bare string or a ``data:`` URL); empty when not base64."""
    payload = data.split(",", 1)[1] if data.startswith("data:") else data
    try:
        return base64.b64decode(payload + "=" * (-len(payload) % 4), validate=False)
    except (binascii.Error, ValueError):
        return b""


def image_dimensions(raw: bytes) -> tuple[int, int]:
    """(width, height) in pixels from the image header, (0, 0) when it cannot be read."""
    if not raw:
        return 0, 0
    import imagesize

    try:
        width, height = imagesize.get(io.BytesIO(raw))
    except (ValueError, OSError, IndexError):  # truncated or unknown headers
        return 0, 0
    return (width, height) if width > 0 and height > 0 else (0, 0)


@dataclass(frozen=True, slots=True)
class PdfFacts:
    pages: int = 0
    text: str = ""
    page_points: tuple[tuple[float, float], ...] = ()
    """(width, height) of every page in PDF points (1/72 inch)."""


_READ: dict[bytes, PdfFacts] = {}
_READ_LIMIT = 64


def pdf_facts(raw: bytes) -> PdfFacts:
    """Pages, page sizes and extracted text of a PDF; empty facts when it cannot be read.

    Each distinct document is read once per process (test suites send the same fixture PDF
    in many calls), remembered by its digest, not its bytes, for the last 64 documents."""
    if not raw.startswith(_PDF_MAGIC):
        return PdfFacts()
    digest = hashlib.blake2b(raw, digest_size=16).digest()
    facts = _READ.get(digest)
    if facts is None:
        if len(_READ) >= _READ_LIMIT:
            _READ.clear()
        facts = _READ[digest] = _read_pdf(raw)
    return facts


def _read_pdf(raw: bytes) -> PdfFacts:
    import pypdf
    from pypdf.errors import PyPdfError

    logging.getLogger("pypdf").setLevel(logging.ERROR)  # malformed test PDFs are common
    try:
        reader = pypdf.PdfReader(io.BytesIO(raw))
        pages = reader.pages
        sizes = tuple((float(p.mediabox.width), float(p.mediabox.height)) for p in pages)
        text = "\n".join((page.extract_text() or "").strip() for page in pages).strip()
    except (PyPdfError, ValueError, KeyError, TypeError, OSError):
        return PdfFacts()
    return PdfFacts(len(sizes), text, sizes)
