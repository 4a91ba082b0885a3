"""The HTML report: one self-contained page per result, charts with their numbers, everything
from a recording escaped, cost split by class adding up; the plugin writes it by extension.
(The same pages in a real browser: tests/test_html_browser.py.)"""

from __future__ import annotations

import html
import time
from decimal import Decimal
from pathlib import Path

import pytest
from click.testing import CliRunner
from syrupy.assertion import SnapshotAssertion

import costsim
from costsim.cli import cli
from costsim.pricing.money import money
from costsim.render.html.costs import Costed, Spend, dollar_band
from costsim.render.html.markup import Trusted, el
from costsim.render.html.style import CSP
from tests.conftest import EXAMPLES, ROOT
from tests.html_pages import (
    HOSTILE,
    hostile_cassettes,
    outline,
    parse,
    resource_references,
)

pytest_plugins = ["pytester"]

AGENT = EXAMPLES / "anthropic_support_agent.yaml"
SAFE_TAGS = frozenset(
    [
        "html",
        "head",
        "meta",
        "title",
        "style",
        "body",
        "header",
        "h1",
        "h2",
        "h3",
        "p",
        "main",
        "section",
        "nav",
        "ul",
        "li",
        "a",
        "figure",
        "figcaption",
        "svg",
        "g",
        "rect",
        "line",
        "polyline",
        "polygon",
        "text",
        "details",
        "summary",
        "div",
        "table",
        "caption",
        "thead",
        "tbody",
        "tfoot",
        "tr",
        "th",
        "td",
        "button",
        "script",
    ]
)
"""Every element the pages are built from."""
MAX_CORPUS_PAGE = 5 * 1024 * 1024


@pytest.fixture(autouse=True)
def _at_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # paths on the page are shown relative to the working folder


def _cli(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == 0, result.output
    return result.stdout


def _self_contained(page: str) -> None:
    assert page.startswith("<!DOCTYPE html>")
    assert resource_references(page) == []
    parsed = parse(page)
    csp = [
        a["content"] for tag, a in parsed.tags if a.get("http-equiv") == "Content-Security-Policy"
    ]
    assert csp == [CSP] and "default-src 'none'" in CSP
    assert [tag for tag, _ in parsed.tags].count("script") == 1


# --- the markup and the cost split ---------------------------------------------------------


def test_markup_escapes_text_and_attributes() -> None:
    node = el("p", "<b>&'\"", title='"><script>', class_="x")
    assert node.html() == '<p title="&quot;&gt;&lt;script&gt;" class="x">&lt;b&gt;&amp;\'"</p>'
    assert el("style", Trusted("a>b{}")).html() == "<style>a>b{}</style>"


def test_the_cost_split_adds_up_to_each_calls_cost() -> None:
    report = costsim.report(EXAMPLES).data
    calls = [c for item in report.cassettes for c in item.calls]
    assert len(calls) == 6
    for item in calls:
        split = item.split
        assert item.price is not None and split is not None
        assert split.total == pytest.approx(item.price.amount, abs=Decimal("1e-18"))
        assert min(split.uncached, split.cache_read, split.cache_write, split.output) >= 0
    spend = Spend.of(Costed.of(calls))
    assert spend.cost.total == pytest.approx(report.totals.cost_usd, abs=Decimal("1e-18"))
    # a variant's totals carry the split of its re-billed calls, streamed or not
    for source in (EXAMPLES, costsim.load(EXAMPLES)):
        simulation = costsim.simulate(source, ["truncation", "caching:ttl=1h"]).data
        for totals in (simulation.baseline, simulation.variants[0].totals):
            assert totals.cost_usd is not None and totals.cost_usd > 0
            assert totals.split.total == pytest.approx(totals.cost_usd, abs=Decimal("1e-18"))
        assert simulation.variants[0].totals.split.cache_write > 0


def test_the_error_band_in_dollars_brackets_the_variant_cost() -> None:
    traces = ROOT / "scenarios" / "cassettes" / "coding_agent"
    variant = costsim.simulate(traces, ["truncation", "caching"]).data.variants[0]
    band = dollar_band(variant)
    cost = variant.totals.cost_usd
    assert band.value == cost and band.low is not None and band.high is not None
    assert not band.exact and band.low < cost < band.high
    page = costsim.simulate(traces, ["truncation", "caching"]).render("html")
    assert f"{money(max(band.low, 0))} to {money(band.high)}" in page  # the cost table's range


# --- the pages through the CLI ----------------------------------------------------------------


def test_the_overview_headlines_only_a_saving(tmp_path: Path) -> None:
    """Two scenarios whose only variant adds cost: the headline read "Biggest saving: ... $0.00326"
    (the amount's sign dropped); nothing saves, so there is no such headline (a review's)."""
    for name in ("one", "two"):
        (tmp_path / f"{name}.yaml").write_text(
            f"name: {name}\ncassettes: [{ROOT}/scenarios/cassettes/side_calls/*.yaml]\n"
            "variants:\n  compact: [{compaction: {max_messages: 12, keep_last: 4}}]\n"
        )
    page = _cli("compare", str(tmp_path), "--format", "html")
    assert "2 scenarios compared" in page and "Biggest saving" not in page


def test_compare_of_the_bundled_scenarios_is_one_self_contained_page(tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    started = time.perf_counter()
    _cli("compare", "scenarios/", "--format", "html", "-o", str(out))
    page = out.read_text(encoding="utf-8")
    _self_contained(page)
    tags = [tag for tag, _ in parse(page).tags]
    assert tags.count("svg") >= 4
    assert set(tags) <= SAFE_TAGS
    lines = outline(page)
    for scenario in ("coding agent", "browser MCP session", "multi-agent orchestrator"):
        assert f"h2: {scenario}" in lines
    # the headline's saving says how sure it is, as every answer does (it said only $2.2199)
    assert "Biggest saving: truncate-compact-cache in coding agent, $2.220 (p90 $2.113 to" in page
    for figure in ("cost", "turns", "waterfall-8", "cassettes", "agents", "tools", "models"):
        assert any(line.startswith("figure #s") and line.endswith(f"-{figure}") for line in lines)
    assert time.perf_counter() - started < 60


def test_report_and_simulate_write_html(tmp_path: Path) -> None:
    report = _cli("report", str(EXAMPLES), "--format", "html")
    _self_contained(report)
    assert "answer: $" in "\n".join(outline(report))
    simulated = _cli(
        "simulate", str(AGENT), "-s", "truncation", "-s", "caching", "--format", "html"
    )
    _self_contained(simulated)
    assert "figure #sim-waterfall-1" in outline(simulated)


def test_html_is_a_format_of_every_page_kind() -> None:
    assert "html" in costsim.Report.formats()
    assert "html" in costsim.Simulation.formats()
    assert "html" in costsim.Comparison.formats()
    assert "html" in costsim.Comparisons.formats()


def test_the_corpus_report_stays_small_and_paged(corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "corpus.html"
    _cli("report", str(corpus), "--format", "html", "-o", str(out))
    assert out.stat().st_size < MAX_CORPUS_PAGE
    page = out.read_text(encoding="utf-8")
    _self_contained(page)
    tables = [a for tag, a in parse(page).tags if tag == "table"]
    assert any(a.get("data-page") for a in tables), "long tables are paginated"


# --- safe to open ------------------------------------------------------------------------------


def _hostile_pages(folder: Path) -> dict[str, str]:
    hostile_cassettes(folder)
    scenario = costsim.Scenario(
        name="hostile <b>scenario</b>",
        cassettes=[f"{folder}/*.yaml"],
        variants={
            "cache": ["caching"],
            "route": [{"routing": {"agents": {"<i>agent</i>": "claude-haiku-4-5"}}}, "caching"],
        },
        agents={"<i>agent</i>": {"match": "support"}},
    )
    return {
        "report": costsim.report(folder, lenient=True, by="model").render("html"),
        "simulate": costsim.simulate(
            folder, ["selective_tools:mode=oracle", "caching"], lenient=True
        ).render("html"),
        "compare": costsim.compare(scenario, lenient=True).render("html"),
    }


def test_no_recorded_string_reaches_the_page_unescaped(tmp_path: Path) -> None:
    shown = {  # each hostile string is on the page, as text
        "report": ["&lt;img src=x onerror=alert(1)&gt;.yaml", "&lt;body onload=alert(3)&gt;"],
        "simulate": ["lookup&lt;svg onload=alert(2)&gt;"],
        "compare": ["&lt;i&gt;agent&lt;/i&gt;", "hostile &lt;b&gt;scenario&lt;/b&gt;"],
    }
    for kind, page in _hostile_pages(tmp_path / "hostile").items():
        for text in HOSTILE:
            assert text not in page, f"{kind}: {text!r} written as markup"
        parsed = parse(page)
        assert {tag for tag, _ in parsed.tags} <= SAFE_TAGS, kind
        assert not [n for _, attrs in parsed.tags for n in attrs if n.startswith("on")], kind
        assert "gpt-4o&lt;script&gt;alert(1)&lt;/script&gt;" in page, kind
        for text in shown[kind]:
            assert text in page, f"{kind}: {text!r} not shown"
        _self_contained(page)


# --- structure snapshots ---------------------------------------------------------------------


def test_simulation_page_structure(snapshot: SnapshotAssertion) -> None:
    page = costsim.simulate(AGENT, ["truncation", "caching:ttl=1h"]).render("html")
    assert outline(page) == snapshot


def test_report_page_structure(snapshot: SnapshotAssertion) -> None:
    page = costsim.report(EXAMPLES, by="provider").render("html")
    assert outline(page) == snapshot


# --- the pytest plugin --------------------------------------------------------------------------

REPLAY = """
import json

import pytest
import requests
import vcr
import yaml

with open("agent.yaml") as f:
    RECORDED = [json.loads(i["request"]["body"]) for i in yaml.safe_load(f)["interactions"]]

@pytest.mark.parametrize("n", [2, 3], ids=["<b>two</b>", "three"])
def test_agent(n):
    with vcr.use_cassette("agent.yaml", record_mode="none"):
        for body in RECORDED[:n]:
            requests.post("https://api.anthropic.com/v1/messages", json=body)
"""


def test_the_plugin_writes_html_by_extension(pytester: pytest.Pytester) -> None:
    import shutil

    shutil.copy(AGENT, pytester.path / "agent.yaml")
    pytester.makepyfile(test_agent=REPLAY)
    result = pytester.runpytest(
        "--costsim", "--costsim-report", "costs.html", "--costsim-strategies", "caching"
    )
    result.assert_outcomes(passed=2)
    page = (pytester.path / "costs.html").read_text(encoding="utf-8")
    _self_contained(page)
    lines = outline(page)
    assert "figure #tests" in lines and "figure #what-if" in lines
    assert "test_agent.py::test_agent[&lt;b&gt;two&lt;/b&gt;]" in page
    assert "<b>two</b>" not in page


def test_chart_scales_and_labels() -> None:
    from costsim.render.html.svg import nice_ticks, short_money, short_tokens

    assert nice_ticks(0, 2.6677) == [0, 1, 2, 3]
    assert nice_ticks(0, 0.012281) == [0, 0.0025, 0.005, 0.0075, 0.01, 0.0125]
    assert nice_ticks(0, 0) == [0]
    assert [short_money(v) for v in (0, 0.0125, 0.1, 2.5, 1250)] == [
        "$0.00", "$0.0125", "$0.10", "$2.50", "$1.25k",
    ]  # fmt: skip
    assert [short_tokens(v) for v in (950, 12_500, 3_200_000)] == ["950", "12.5k", "3.2M"]


def test_the_report_page_says_what_the_table_notes() -> None:
    """Errored calls, calls to other providers and undated calls: the same sentences as the
    table's notes, on the page."""
    from costsim.render.report_text import report_notes

    report = costsim.report(EXAMPLES)
    notes = report_notes(report.data)
    assert any("errored call" in note for note in notes)
    page = report.render("html")
    for note in notes:
        assert html.escape(note.lstrip("* "), quote=False) in page


def test_the_page_and_the_text_name_the_same_answer() -> None:
    """Both answers pick the variant that saves most (the page used to pick the lowest cost,
    which differed when a variant re-simulated calls like for like)."""
    import re

    runner = CliRunner()
    text = runner.invoke(cli, ["compare", str(ROOT / "scenarios"), "--no-cache"]).stdout
    page = runner.invoke(cli, ["compare", str(ROOT / "scenarios"), "--format", "html"]).stdout
    said = re.findall(r"^Saves most: ([\w.-]+),", text, flags=re.M)
    shown = re.findall(r"Saves most: ([\w.-]+) at ", html.unescape(page))
    assert len(said) == 5 and shown == said + said  # the index of the page, then each section
