"""Helpers for the HTML report tests: a page's outline, its resource references, its tags, and
cassettes with hostile names."""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

from tests.conftest import EXAMPLES

HOSTILE_MODEL = "gpt-4o<script>alert(1)</script>"
HOSTILE_FILE = "<img src=x onerror=alert(1)>.yaml"
HOSTILE_TOOL = "lookup<svg onload=alert(2)>"
HOSTILE_BROKEN = "<body onload=alert(3)>.yaml"
"""An unreadable cassette (a file name cannot hold ``/``, so no ``</script>``): its name
reaches the page through the error that skips it."""
HOSTILE = (
    HOSTILE_MODEL,
    HOSTILE_TOOL,
    *(f.removesuffix(".yaml") for f in (HOSTILE_FILE, HOSTILE_BROKEN)),
)

SHAPES = ("rect", "polygon", "polyline", "line")
URL_ATTRIBUTES = frozenset({"src", "href", "xlink:href", "action", "data", "poster", "srcset"})


def hostile_cassettes(folder: Path) -> Path:
    """A copy of the example Anthropic cassette whose model, file and tool names are markup,
    and an unreadable cassette whose file name is a script tag."""
    text = (EXAMPLES / "anthropic_support_agent.yaml").read_text(encoding="utf-8")
    text = text.replace("claude-sonnet-4-5-20250929", HOSTILE_MODEL)
    text = text.replace("claude-sonnet-4-5", HOSTILE_MODEL).replace("lookup_runbook", HOSTILE_TOOL)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / HOSTILE_FILE).write_text(text, encoding="utf-8")
    (folder / HOSTILE_BROKEN).write_text("interactions: [unterminated\n", encoding="utf-8")
    return folder


def copy_examples(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for path in EXAMPLES.glob("*.yaml"):
        shutil.copy(path, folder / path.name)
    return folder


CAPTURED = ("h1", "h2", "h3", "th", "figcaption", "text")


@dataclass
class Parsed(HTMLParser):
    """Every start tag with its attributes, and the page's outline (headings, answers,
    figures: their charts' shapes and labels, their tables' headers and row counts)."""

    tags: list[tuple[str, dict[str, str | None]]] = field(default_factory=list)
    outline: list[str] = field(default_factory=list)
    _capture: str | None = None
    _text: list[str] = field(default_factory=list)
    _svg: dict[str, int] | None = None
    _labels: list[str] = field(default_factory=list)
    _headers: list[str] = field(default_factory=list)
    _rows: int = 0
    _in_body: bool = False
    _in_title: bool = False
    """Inside a chart's tooltip (``<title>``): not part of the outline."""

    def __post_init__(self) -> None:
        HTMLParser.__init__(self, convert_charrefs=True)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        self.tags.append((tag, found))
        answer = tag == "p" and found.get("class") == "answer"
        if self._capture is None and (tag in CAPTURED or answer):
            self._capture, self._text = ("answer" if answer else tag), []
        if tag == "figure":
            self.outline.append(f"figure #{found.get('id')}")
        elif tag == "svg":
            self._svg, self._labels = {}, []
        elif tag in SHAPES and self._svg is not None:
            self._svg[tag] = self._svg.get(tag, 0) + 1
        elif tag == "table":
            self._headers, self._rows = [], 0
        elif tag == "tbody":
            self._in_body = True
        elif tag == "title" and self._svg is not None:
            self._in_title = True
        elif tag == "tr" and self._in_body:
            self._rows += 1

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        self.handle_endtag(tag)

    def handle_data(self, data: str) -> None:
        if self._capture is not None and not self._in_title:
            self._text.append(data)

    def handle_endtag(self, tag: str) -> None:
        if self._capture is not None and tag == (
            "p" if self._capture == "answer" else self._capture
        ):
            self._captured(self._capture, " ".join(" ".join(self._text).split()))
            self._capture = None
        if tag == "title":
            self._in_title = False
        elif tag == "tbody":
            self._in_body = False
        elif tag == "svg" and self._svg is not None:
            shapes = ", ".join(f"{n} {name}" for name, n in sorted(self._svg.items()))
            self.outline.append(f"  chart: {shapes}")
            self.outline.append(f"    labels: {' | '.join(self._labels)}")
            self._svg = None
        elif tag == "table":
            self.outline.append(f"  table: {' | '.join(self._headers)} ({self._rows} rows)")

    def _captured(self, what: str, text: str) -> None:
        if what == "text":
            if self._svg is not None:
                self._labels.append(text)
        elif what == "th":
            self._headers.append(text)
        elif what == "figcaption":
            self.outline.append(f"  caption: {text}")
        else:
            self.outline.append(f"{what}: {text}")


def parse(page: str) -> Parsed:
    parsed = Parsed()
    parsed.feed(page)
    parsed.close()
    return parsed


def outline(page: str) -> list[str]:
    return parse(page).outline


def resource_references(page: str) -> list[str]:
    """Anything that could make the page load something: URL attributes that are not
    in-page anchors, ``url(...)`` and ``@import`` in the style sheet, ``://`` in any attribute."""
    found = []
    for tag, attrs in parse(page).tags:
        for name, value in attrs.items():
            if value is None:
                continue
            remote = "://" in value or value.startswith("//")
            if remote or (name in URL_ATTRIBUTES and not value.startswith("#")):
                found.append(f"<{tag} {name}={value!r}>")
    style = re.search(r"<style>(.*?)</style>", page, re.S)
    if style and re.search(r"url\(|@import", style.group(1)):
        found.append("a url() or @import in the style sheet")
    return found
