"""The HTML report in a real browser: Debian's Chromium driven by Playwright's Python package,
pointed at the system executable (nothing is downloaded). Every chart draws, nothing logs an
error, nothing is fetched, nothing recorded runs; a screenshot is saved.

Skips, saying why, where Playwright or Chromium is absent, unless ``COSTSIM_REQUIRE_BROWSER``
is set (``.ci/run`` sets it: CI installs Chromium and must run these). Set
``COSTSIM_SCREENSHOT=docs/html-report.png`` to refresh the README's screenshot.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from click.testing import CliRunner

import costsim
from costsim.cli import cli
from tests.conftest import ROOT
from tests.html_pages import HOSTILE_MODEL, hostile_cassettes

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]
MARKS = "rect, polygon, polyline"


def _unavailable(reason: str) -> None:
    if os.environ.get("COSTSIM_REQUIRE_BROWSER"):
        pytest.fail(f"{reason} (COSTSIM_REQUIRE_BROWSER is set: the browser tests must run)")
    pytest.skip(reason)


def _chromium() -> str:
    found = os.environ.get("COSTSIM_CHROMIUM") or shutil.which("chromium")
    if found is None and Path("/usr/bin/chromium").exists():
        found = "/usr/bin/chromium"
    if found is None:
        _unavailable("Chromium is not installed (Debian: apt-get install chromium)")
    assert found is not None
    return found


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("Playwright's Python package is not installed (pip install -e '.[dev]')")
    executable = _chromium()
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@dataclass
class Opened:
    """A page opened from a file, and what it did: console errors, requests, dialogs."""

    page: Page
    errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)


@pytest.fixture
def open_page(browser: Browser) -> Iterator[Any]:
    contexts = []

    def opener(path: Path, scheme: str = "light") -> Opened:
        context = browser.new_context(
            viewport={"width": 1100, "height": 1300},
            color_scheme=scheme,  # type: ignore[arg-type]
        )
        contexts.append(context)
        page = context.new_page()
        opened = Opened(page)
        page.on("console", lambda m: opened.errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda exc: opened.errors.append(str(exc)))
        page.on("dialog", lambda d: (opened.dialogs.append(d.message), d.dismiss()))

        def route(r: Any) -> None:
            if r.request.url.startswith("file:"):
                r.continue_()
            else:
                opened.requests.append(r.request.url)
                r.abort()

        context.route("**/*", route)
        page.goto(path.as_uri())
        page.wait_for_load_state("load")
        return opened

    yield opener
    for context in contexts:
        context.close()


def _charts_drawn(page: Page) -> list[dict[str, float]]:
    """Each chart's box and the largest box among its marks (shapes)."""
    boxes: list[dict[str, float]] = page.locator("svg.chart").evaluate_all(
        f"""charts => charts.map(svg => {{
            const box = svg.getBoundingClientRect();
            const marks = Array.from(svg.querySelectorAll("{MARKS}")).map(m => {{
                const r = m.getBoundingClientRect(); return r.width * r.height; }});
            return {{width: box.width, height: box.height, mark: Math.max(0, ...marks)}};
        }})"""
    )
    return boxes


@pytest.fixture(scope="module")
def bundled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``costsim compare scenarios/ --format html -o report.html``, run from the project."""
    out = tmp_path_factory.mktemp("bundled") / "report.html"
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(ROOT)
        args = ["compare", "scenarios/", "--format", "html", "-o", str(out)]
        result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    return out


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_bundled_scenarios_draw_in_chromium(
    open_page: Any, bundled: Path, tmp_path: Path, scheme: str
) -> None:
    opened: Opened = open_page(bundled, scheme)
    charts = _charts_drawn(opened.page)
    assert len(charts) >= 4
    for index, chart in enumerate(charts):
        assert chart["width"] > 0 and chart["height"] > 0, f"chart {index} has no box"
        assert chart["mark"] > 0, f"chart {index} drew no mark"
    assert opened.errors == [] and opened.requests == [] and opened.dialogs == []
    shot = tmp_path / f"report-{scheme}.png"
    opened.page.screenshot(path=str(shot))
    assert shot.stat().st_size > 10_000
    target = os.environ.get("COSTSIM_SCREENSHOT")
    if target and scheme == "light":  # the README's: the coding agent, its tables folded
        opened.page.set_viewport_size({"width": 1000, "height": 1500})
        opened.page.evaluate("document.querySelectorAll('details').forEach(d => d.open = false)")
        opened.page.locator("#s3").evaluate("section => section.scrollIntoView()")
        opened.page.screenshot(path=str(ROOT / target))


def test_tables_sort_page_and_print(open_page: Any, bundled: Path) -> None:
    page = open_page(bundled).page
    paged = page.locator("table[data-page]").first
    rows = paged.locator("tbody tr")
    visible = rows.evaluate_all("rows => rows.filter(r => !r.hidden).length")
    assert 0 < visible <= 25 < rows.count()
    page.locator("details").first.evaluate("d => d.open = true")
    cost = page.locator("#s3-cost table")
    header = cost.locator("thead th").nth(7).locator("button")
    header.click()
    first = cost.locator("tbody tr").first.locator("td").first.inner_text()
    header.click()
    assert cost.locator("tbody tr").first.locator("td").first.inner_text() != first
    page.emulate_media(media="print")
    hidden = rows.evaluate_all(
        "rows => rows.filter(r => r.getBoundingClientRect().height === 0).length"
    )
    assert hidden == 0, "every row prints"
    collapsed = page.locator("#s3-turns table")  # its <details> is closed on screen
    assert collapsed.evaluate("t => t.getBoundingClientRect().height") > 0, "tables print open"
    assert page.pdf()[:4] == b"%PDF"


def test_hostile_names_run_nothing(open_page: Any, tmp_path: Path) -> None:
    folder = hostile_cassettes(tmp_path / "hostile")
    out = tmp_path / "hostile.html"
    out.write_text(costsim.report(folder, lenient=True, by="model").render("html"), "utf-8")
    opened: Opened = open_page(out)
    page = opened.page
    assert page.locator("img").count() == 0
    assert page.locator("script").count() == 1
    assert (
        page.locator("body").evaluate("b => b.querySelectorAll('[onerror],[onload]').length") == 0
    )
    page.locator("details").evaluate_all("ds => ds.forEach(d => d.open = true)")
    assert HOSTILE_MODEL in page.locator("body").inner_text()
    assert opened.dialogs == [] and opened.errors == [] and opened.requests == []


def test_the_corpus_report_opens_paged(
    corpus: Path, open_page: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    out = tmp_path / "corpus.html"
    result = CliRunner().invoke(cli, ["report", str(corpus), "--format", "html", "-o", str(out)])
    assert result.exit_code == 0, result.output
    opened: Opened = open_page(out)
    charts = _charts_drawn(opened.page)
    assert charts and all(c["width"] > 0 and c["mark"] > 0 for c in charts)
    table = opened.page.locator("#cassettes table")
    shown = table.locator("tbody tr").evaluate_all("rows => rows.filter(r => !r.hidden).length")
    assert shown == 25
    assert opened.errors == [] and opened.requests == []
