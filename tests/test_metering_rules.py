"""Provider rules (images, PDFs, tool-use prompt, Responses recipe), source-held-out
validation, ``calibrate --shipped / --group`` and the per-call error estimate.

Small cases are computed by hand from the providers' documented rules; the corpus tests check
the acceptance figures of leave-one-source-out validation on real recordings.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import struct
import zlib
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from costsim.cli import cli
from costsim.metering.classes import content_blocks, content_class, is_recipe
from costsim.metering.evaluate import calibrate, first_folder
from costsim.metering.media import anthropic_image_tokens, document_overhead, openai_image_tokens
from costsim.metering.meter import Meter
from costsim.metering.models import tool_prompt_tokens
from costsim.metering.serialise import serialise
from costsim.model import (
    Call,
    CassetteTrace,
    DocumentBlock,
    Flavour,
    ImageBlock,
    Message,
    Provenance,
    TextBlock,
    ToolDef,
    Usage,
)
from costsim.providers import adapter_for
from costsim.providers._media import decode_base64, image_dimensions, pdf_facts
from tests.conftest import EXAMPLES

HERE = Provenance(Path("x.yaml"), 0)


def _png(width: int, height: int) -> bytes:
    """A valid 1-bit PNG of the given size, written by hand (signature, IHDR, IDAT, IEND)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0)
    rows = b"".join(b"\x00" + b"\x00" * ((width + 7) // 8) for _ in range(height))
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


def _gif(width: int, height: int) -> bytes:
    return b"GIF89a" + struct.pack("<HH", width, height) + b"\x00\x00\x00;"


def test_image_headers_give_pixel_sizes() -> None:
    assert image_dimensions(_png(640, 480)) == (640, 480)
    assert image_dimensions(_gif(33, 7)) == (33, 7)
    assert image_dimensions(b"not an image") == (0, 0)
    encoded = "data:image/png;base64," + base64.b64encode(_png(12, 34)).decode()
    assert image_dimensions(decode_base64(encoded)) == (12, 34)


def test_adapters_read_image_sizes_from_recorded_bytes() -> None:
    data = base64.b64encode(_png(640, 480)).decode()
    anthropic = adapter_for("POST", "/v1/messages", {"messages": []})
    request: dict[str, Any] = {
        "model": "claude-sonnet-4-5",
        "messages": [
            {
                "role": "user",
                "content": [
                    {
                        "type": "image",
                        "source": {"type": "base64", "media_type": "image/png", "data": data},
                    },
                    {"type": "text", "text": "What is this?"},
                ],
            }
        ],
    }
    assert anthropic is not None
    block = anthropic.parse_request(request).messages[0].content[0]
    assert isinstance(block, ImageBlock) and (block.width, block.height) == (640, 480)
    chat = adapter_for("POST", "/v1/chat/completions", {"messages": []})
    assert chat is not None
    url = {"url": f"data:image/png;base64,{data}", "detail": "low"}
    parsed = chat.parse_request(
        {
            "model": "gpt-4o",
            "messages": [{"role": "user", "content": [{"type": "image_url", "image_url": url}]}],
        }
    )
    image = parsed.messages[0].content[0]
    assert isinstance(image, ImageBlock) and (image.width, image.detail) == (640, "low")


def test_anthropic_image_tokens_by_hand() -> None:
    # 640 x 480 / 750 = 409.6: 410 tokens, no resize
    assert anthropic_image_tokens(640, 480, "claude-sonnet-4-5") == 410
    # 3000 x 2000 is over ~1,600 tokens: scaled by sqrt(1600 * 750 / 6e6) = 0.4472 to
    # 1341 x 894 = 1,198,854 px / 750 = 1598.5: 1599 tokens
    assert anthropic_image_tokens(3000, 2000, "claude-sonnet-4-5") == 1599
    # Opus 4.7 reads up to 2576 px / 4,784 tokens: the token cap binds first, scaling by
    # sqrt(4784 * 750 / 6e6) = 0.7733 to 2319 x 1546 = 3,585,174 px / 750 = 4780.2 -> 4781
    assert anthropic_image_tokens(3000, 2000, "claude-opus-4-7") == 4781
    # a US Letter PDF page is rendered at the limit: 962 x 1246 px = 1599 tokens
    assert anthropic_image_tokens(612, 792, "claude-3-5-haiku", fill=True) == 1599


def test_openai_image_tokens_by_hand() -> None:
    # tiles: 3008 x 2000 -> 2048 x 1362 -> 1155 x 768 -> 3 x 2 tiles: 85 + 6 * 170
    assert openai_image_tokens(3008, 2000, "gpt-4o") == 1105
    assert openai_image_tokens(3008, 2000, "gpt-4o", "low") == 85
    assert openai_image_tokens(640, 480, "gpt-4o-mini") == 2833 + 2 * 5667  # 2 tiles
    assert openai_image_tokens(640, 480, "gpt-5") == 70 + 2 * 140
    # patches: 1800 x 2400 shrinks to 1056 x 1408 = 33 x 44 = 1452 patches (the guide's
    # example) x 1.62 on gpt-4.1-mini = 2352.2 -> 2353
    assert openai_image_tokens(1800, 2400, "gpt-4.1-mini") == 2353
    # 640 x 480 = 20 x 15 = 300 patches; gpt-5-mini is billed 1.2 per patch, o4-mini 1.72
    assert openai_image_tokens(640, 480, "gpt-5-mini") == 360
    assert openai_image_tokens(640, 480, "o4-mini") == 516


def test_anthropic_tool_prompt_from_the_documented_table() -> None:
    assert tool_prompt_tokens("claude-sonnet-4-5-20250929", forced=False) == 496
    assert tool_prompt_tokens("claude-sonnet-4-5", forced=True) == 588
    assert tool_prompt_tokens("claude-3-5-haiku-20241022", forced=False) == 264
    assert tool_prompt_tokens("claude-3-5-sonnet-20240620", forced=True) == 261
    assert tool_prompt_tokens("claude-opus-4-7", forced=False) == 675


def test_responses_follow_the_chat_recipe() -> None:
    call = Call(
        flavour=Flavour.OPENAI_RESPONSES,
        model="gpt-4o",
        provenance=HERE,
        system=(TextBlock("You are terse."),),
        messages=(Message("user", (TextBlock("hi"),)),),
    )
    # instructions as a system message (3 + "system" 1 + 4) + (3 + "user" 1 + "hi" 1) + 3
    assert serialise(call).raw == 16
    assert serialise(dataclasses.replace(call, model="gpt-5")).raw == 15  # primes with 2
    assert is_recipe(call) and content_class(call) == "text"


def test_images_and_pdfs_are_rule_tokens() -> None:
    image = ImageBlock("image/png", "sha1:x", width=640, height=480)
    call = Call(
        flavour=Flavour.ANTHROPIC_MESSAGES,
        model="claude-sonnet-4-5",
        provenance=HERE,
        messages=(Message("user", (image, TextBlock("hi"))),),
    )
    features = serialise(call)
    assert features.fixed == 410 and features.images == 1
    assert content_class(call) == "images"
    pdf = DocumentBlock(
        "application/pdf", "sha1:y", "Dummy PDF file", pages=1, page_points=((612.0, 792.0),)
    )
    assert document_overhead(pdf, Flavour.ANTHROPIC_MESSAGES, "claude-sonnet-4-5") == 1599
    with_pdf = dataclasses.replace(call, messages=(Message("user", (pdf,)),))
    assert serialise(with_pdf).fixed == 1599 and content_class(with_pdf) == "documents"


def test_pdf_facts_read_pages_and_text(corpus: Path) -> None:
    path = next(corpus.rglob("*test_openai__test_document_as_binary_content_input*"))
    text = path.read_text()
    start = text.index("data:application/pdf;base64,")
    data = text[start : text.index("'", start)] if "'" in text[start:] else text[start:]
    facts = pdf_facts(decode_base64(data.split()[0].strip("\"'")))
    assert facts.pages == 1 and facts.text == "Dummy PDF file"


def _trace(path: Path, calls: list[Call]) -> CassetteTrace:
    return CassetteTrace(path, tuple(calls), 0, 0)


def _recorded(model: str, text: str, prompt: int, *, path: Path) -> Call:
    return Call(
        flavour=Flavour.ANTHROPIC_MESSAGES,
        model=model,
        provenance=Provenance(path, 0),
        messages=(Message("user", (TextBlock(text),)),),
        tools=(ToolDef("t", "A tool.", {"type": "object"}),),
        usage=Usage(uncached_input=prompt),
    )


def test_leave_one_source_out_never_sees_the_source(tmp_path: Path) -> None:
    # source a: prompts are rules + 2 x raw; source b: rules + 1 x raw. A fit that has seen
    # only b predicts a with slope 1, so a's held-out error is large while b's is small.
    traces = []
    for source, slope in (("a", 2.0), ("b", 1.0)):
        for i in range(12):
            path = tmp_path / source / f"c{i}.yaml"
            text = "word " * (10 + 7 * i)
            call = _recorded("claude-sonnet-4-5", text, 0, path=path)
            features = serialise(call)
            prompt = round(features.fixed + slope * features.raw)
            traces.append(_trace(path, [dataclasses.replace(call, usage=Usage(prompt))]))
    report = calibrate(traces, group=first_folder(tmp_path), defaults=False)
    assert report.sources == ["a", "b"]
    cell = next(c for c in report.cells if c.klass == "tools")
    assert cell.calls == 24
    assert cell.p90_ape is not None and cell.p90_ape > 10  # a predicted from b alone
    assert cell.loco_median_ape is not None and cell.loco_median_ape < cell.median_ape  # type: ignore[operator]


def test_calibrate_shipped_and_group_options(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["calibrate", str(EXAMPLES), "--shipped", "--format", "json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["mode"] == "shipped"
    assert all(f["source"] in ("default", "uncalibrated") for f in document["families"])
    cell = next(c for c in document["flavours"] if c["class"] == "all")
    assert {"calibrated_median_ape", "calibrated_p90_ape", "increment_median_error_pct"} <= set(
        cell
    )
    table = CliRunner().invoke(cli, ["calibrate", str(EXAMPLES), "--shipped"])
    assert "requests without images or documents (shipped coefficients" in " ".join(
        table.stdout.split()
    )
    grouped = CliRunner().invoke(
        cli, ["calibrate", str(EXAMPLES), "--group", r"^(\w+?)_", "--format", "json"]
    )
    assert grouped.exit_code == 0, grouped.output
    assert json.loads(grouped.stdout)["sources"] == ["anthropic", "openai"]
    bad = CliRunner().invoke(cli, ["calibrate", str(EXAMPLES), "--group", "("])
    assert bad.exit_code == 2 and "not a regular expression" in bad.output


def test_expected_error_is_narrow_for_openai_text_and_wide_for_images() -> None:
    meter = Meter()
    text = Call(
        flavour=Flavour.OPENAI_CHAT,
        model="gpt-4o",
        provenance=HERE,
        messages=(Message("user", (TextBlock("hi"),)),),
    )
    exact = meter.expected_error(text)
    assert exact.median == 0.0 and exact.klass == "text" and exact.calls >= 100
    image = ImageBlock("url", "https://example.com/a.png")
    photo = Call(
        flavour=Flavour.ANTHROPIC_MESSAGES,
        model="claude-sonnet-4-5",
        provenance=HERE,
        messages=(Message("user", (image, TextBlock("hi"))),),
    )
    wide = meter.expected_error(photo)
    assert wide.klass == "images" and wide.p90 > 5 * exact.p90
    assert wide.tokens(1000) == pytest.approx((wide.median * 10, wide.p90 * 10))
    # a delta OpenAI's recipe counts exactly has a zero band; the same request, none at all
    longer = dataclasses.replace(
        text, messages=(Message("user", (TextBlock("hi there, how are you?"),)),)
    )
    band = meter.delta_band(text, longer)
    assert band.delta == serialise(longer).raw - serialise(text).raw and band.p90 == 0.0
    assert meter.delta_band(text, text).delta == 0.0


def test_delta_band_scales_with_the_change_on_anthropic() -> None:
    meter = Meter()
    call = _recorded("claude-sonnet-4-5", "short", 1000, path=Path("x.yaml"))
    grown = dataclasses.replace(
        call, messages=(Message("user", (TextBlock("short " + "more words " * 50),)),)
    )
    band = meter.delta_band(call, grown)
    # the request has tools, but what changed is text: banded as text changes are
    error = meter.errors.increment("anthropic-messages", "text")
    assert band.delta > 0 and band.p90 == pytest.approx(band.delta * error.p90 / 100)
    assert band.low < band.delta < band.high


def _single_media_errors(traces: list[CassetteTrace], group: Any) -> list[float]:
    """Held-out errors of calls whose only non-text content is one sized image or one PDF."""
    from costsim.metering import evaluate

    samples, _ = evaluate._samples(traces, group)
    folds = evaluate._Folds(samples, lambda s: s.source)
    predictions = evaluate._predict(samples, lambda s: folds.coefficients(s.family, s.source))
    calls = {(trace.path, call.provenance.index): call for trace in traces for call in trace.calls}
    errors = []
    for sample in samples:
        media = [b for b in content_blocks(calls[sample.key]) if b.kind != "text"]
        if len(media) != 1:
            continue
        block = media[0]
        sized = (isinstance(block, ImageBlock) and block.width) or (
            isinstance(block, DocumentBlock) and block.pages
        )
        if sized:
            errors.append(abs(predictions[sample.key] - sample.recorded) / sample.recorded * 100)
    return errors


def test_leave_one_source_out_acceptance_on_corpus(corpus: Path) -> None:
    from costsim.analysis.report import load_traces
    from costsim.metering.calibration import median

    traces, _ = load_traces([corpus])
    report = calibrate(traces, group=first_folder(corpus), defaults=False)
    assert len(report.sources) == 3
    cells = {(c.flavour, c.klass): c for c in report.cells}
    anthropic = cells[("anthropic-messages", "no_media")]
    assert anthropic.p90_ape is not None and anthropic.p90_ape <= 20.0
    assert anthropic.increment_median_error_pct is not None
    assert anthropic.increment_median_error_pct <= 10.0
    assert anthropic.increment_p90_error_pct is not None
    assert anthropic.increment_p90_error_pct <= 25.0
    chat = cells[("openai-chat", "text")]
    assert chat.exact_match_rate is not None and chat.exact_match_rate >= 0.995
    # The targets are 5% / 20% (Responses) and 1% (Chat with tools); the guards hold
    # the levels reached (1.1% / 5.9%, 0.8% / 2.3%) with a little room.
    responses = cells[("openai-responses", "no_media")]
    assert responses.median_ape is not None and responses.median_ape <= 1.5
    assert responses.p90_ape is not None and responses.p90_ape <= 8.0
    tools = cells[("openai-chat", "tools")]
    assert tools.median_ape is not None and tools.median_ape <= 1.0
    assert tools.p90_ape is not None and tools.p90_ape <= 3.0
    media = _single_media_errors(traces, first_folder(corpus))
    assert len(media) >= 50
    assert (median(media) or 0.0) <= 15.0


def test_pdf_facts_read_each_document_once(monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    import pypdf

    from costsim.providers import _media

    def pdf(width: float) -> bytes:
        writer = pypdf.PdfWriter()
        writer.add_blank_page(width=width, height=792)
        out = io.BytesIO()
        writer.write(out)
        return out.getvalue()

    reads: list[int] = []
    read = _media._read_pdf
    monkeypatch.setattr(_media, "_read_pdf", lambda raw: reads.append(len(raw)) or read(raw))
    monkeypatch.setattr(_media, "_READ", {})
    narrow, wide = pdf(300), pdf(600)
    assert pdf_facts(narrow).page_points == ((300.0, 792.0),)
    assert pdf_facts(bytes(narrow)) == pdf_facts(narrow)  # equal bytes, not the same object
    assert pdf_facts(wide).page_points == ((600.0, 792.0),)
    assert len(reads) == 2
    assert pdf_facts(b"%PDF-1.4 truncated") == _media.PdfFacts()
