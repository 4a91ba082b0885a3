"""Tokens of images and PDF documents, from the providers' documented rules.

No tokenizer sees an image: its tokens follow from its pixel size (read from the recorded
bytes by the provider adapters) and the model. The rules, as the providers document them:

- **Anthropic** (platform.claude.com/docs/en/build-with-claude/vision, "Evaluate image size"):
  an image whose long edge exceeds 1568 px, or that would cost more than ~1,600 tokens
  (1.15 megapixels), is first scaled down, preserving its aspect ratio; it then costs
  ``width * height / 750`` tokens. Claude Opus 4.7 and later read images up to 2576 px and
  4,784 tokens.
- **Anthropic PDFs** (.../build-with-claude/pdf-support, "Estimate your costs"): each page is
  converted to an image *and* its text is extracted; both are billed. A page image is rendered
  at the largest size the vision limits allow.
- **OpenAI** (developers.openai.com/api/docs/guides/images-vision, "Calculating costs"):
  *tile* models scale to fit 2048 x 2048, then so the shortest side is at most 768 px, and cost
  ``base + tile * (512 px tiles)``; ``detail: low`` costs ``base``. *Patch* models cover the
  image with 32 px patches (at most 1,536, shrinking the image to fit) times a multiplier.
  Billed usage disagrees with the guide for two models, and billed usage wins: gpt-5-mini is
  billed 1.2 per patch and gpt-5-nano 1.5 (the guide says 1.62 and 2.46; measured on the
  corpus, where 640 x 480 images cost 360 and 450 tokens, and reported the same way on
  community.openai.com).
- **OpenAI PDFs** (developers.openai.com/api/docs/guides/file-inputs): the extracted text and
  page images go into the context; billed usage on the corpus shows the page images of small
  PDFs cost far less than a full-size image, so page overhead is the measured
  :data:`OPENAI_PDF_PAGE` tokens per page on top of the text.

An image sent by URL or file id has no known size: it is counted as :data:`UNKNOWN_IMAGE`, a
typical photo, and its calls carry the wide error band of the "images" content class.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from costsim.metering.models import lookup
from costsim.model import DocumentBlock, Flavour, ImageBlock

__all__ = [
    "OPENAI_PDF_PAGE",
    "UNKNOWN_IMAGE",
    "anthropic_image_tokens",
    "document_overhead",
    "image_tokens",
    "openai_image_tokens",
]

UNKNOWN_IMAGE = (1024, 768)
"""Pixel size assumed for an image whose bytes were not recorded (URL, file id)."""

OPENAI_PDF_PAGE = 0
"""Tokens per PDF page OpenAI bills beyond the extracted text (measured; see module doc)."""

PDF_POINTS = (612.0, 792.0)
"""US Letter, in points: the page size assumed for a PDF whose bytes were not recorded."""


@dataclass(frozen=True, slots=True)
class _ClaudeVision:
    long_edge: int
    max_tokens: int


# Claude's image limits by model (vision guide): newer models read larger images.
_CLAUDE_VISION: dict[str, _ClaudeVision] = {
    "claude": _ClaudeVision(1568, 1600),
    "claude-opus-4-7": _ClaudeVision(2576, 4784),
    "claude-opus-4-8": _ClaudeVision(2576, 4784),
    "claude-opus-5": _ClaudeVision(2576, 4784),
    "claude-sonnet-5": _ClaudeVision(2576, 4784),
    "claude-fable": _ClaudeVision(2576, 4784),
}
_PIXELS_PER_TOKEN = 750


def anthropic_image_tokens(width: int, height: int, model: str, *, fill: bool = False) -> int:
    """Tokens of a ``width`` x ``height`` image on Claude; ``fill`` scales *up* to the limits
    too (how a PDF page is rendered)."""
    limits = lookup(_CLAUDE_VISION, model, _CLAUDE_VISION["claude"])
    scale = min(
        limits.long_edge / max(width, height),
        math.sqrt(limits.max_tokens * _PIXELS_PER_TOKEN / (width * height)),
    )
    if not fill:
        scale = min(scale, 1.0)
    w, h = int(width * scale), int(height * scale)
    return math.ceil(w * h / _PIXELS_PER_TOKEN)


@dataclass(frozen=True, slots=True)
class _Tiles:
    base: int
    tile: int


@dataclass(frozen=True, slots=True)
class _Patches:
    multiplier: float
    budget: int = 1536


_OpenAIVision = _Tiles | _Patches

# Per model prefix, longest match wins (images-vision guide, "Calculating costs").
_OPENAI_VISION: dict[str, _OpenAIVision] = {
    "gpt-4": _Tiles(85, 170),  # gpt-4-turbo / vision-preview, gpt-4o, gpt-4.1, gpt-4.5
    "chatgpt-4o": _Tiles(85, 170),
    "gpt-4o-mini": _Tiles(2833, 5667),
    "gpt-4.1-mini": _Patches(1.62),
    "gpt-4.1-nano": _Patches(2.46),
    "gpt-5": _Tiles(70, 140),
    "gpt-5-mini": _Patches(1.2),  # billed; the guide says 1.62
    "gpt-5-nano": _Patches(1.5),  # billed; the guide says 2.46
    "gpt-5.2": _Patches(1.2),
    "gpt-5.4-mini": _Patches(1.2),
    "gpt-5.4-nano": _Patches(1.2),
    "o1": _Tiles(75, 150),
    "o3": _Tiles(75, 150),
    "o4-mini": _Patches(1.72),
    "codex-mini": _Patches(1.72),
    "computer-use": _Tiles(65, 129),
}


def _tiles(width: int, height: int, rule: _Tiles, detail: str) -> int:
    if detail == "low":
        return rule.base
    scale = min(1.0, 2048 / max(width, height))
    w, h = width * scale, height * scale
    shrink = min(1.0, 768 / min(w, h))
    w, h = w * shrink, h * shrink
    return rule.base + rule.tile * math.ceil(w / 512) * math.ceil(h / 512)


def _patches(width: int, height: int, rule: _Patches) -> int:
    count = math.ceil(width / 32) * math.ceil(height / 32)
    if count > rule.budget:
        shrink = math.sqrt(32 * 32 * rule.budget / (width * height))
        w, h = width * shrink / 32, height * shrink / 32
        shrink *= min(math.floor(w) / w, math.floor(h) / h)
        count = math.ceil(int(width * shrink) / 32) * math.ceil(int(height * shrink) / 32)
    return math.ceil(min(count, rule.budget) * rule.multiplier)


def openai_image_tokens(width: int, height: int, model: str, detail: str = "") -> int:
    """Tokens of a ``width`` x ``height`` image on an OpenAI model at ``detail``."""
    rule = lookup(_OPENAI_VISION, model, _Tiles(85, 170))
    if isinstance(rule, _Tiles):
        return _tiles(width, height, rule, detail)
    return _patches(width, height, rule)


def image_tokens(block: ImageBlock, flavour: Flavour, model: str) -> int:
    """Provider tokens of one image (a typical photo when its size was not recorded)."""
    width, height = (block.width, block.height) if block.width else UNKNOWN_IMAGE
    if flavour is Flavour.ANTHROPIC_MESSAGES:
        return anthropic_image_tokens(width, height, model)
    return openai_image_tokens(width, height, model, block.detail)


def document_overhead(block: DocumentBlock, flavour: Flavour, model: str) -> int:
    """Provider tokens of a document beyond its text: Claude's page images, OpenAI's pages.

    A PDF sent by URL or file id is counted as one page of US Letter.
    """
    if block.text and not block.pages and block.media_type != "application/pdf":
        return 0  # a plain-text document: its text is all there is
    pages = block.page_points or (PDF_POINTS,) * max(block.pages, 1)
    if flavour is Flavour.ANTHROPIC_MESSAGES:
        return sum(anthropic_image_tokens(round(w), round(h), model, fill=True) for w, h in pages)
    return OPENAI_PDF_PAGE * len(pages)
