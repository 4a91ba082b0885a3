"""The HTML page of a ``pytest --costsim`` run: the costliest tests, where their tokens went,
what each what-if variant would cost, and every drifted call and note.

The plugin hands over a :class:`TestRun` (plain figures, no plugin types), so this page needs
nothing from the plugin and the plugin nothing from here but the model and ``test_run_page``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal

from costsim.analysis.baseline import TestCost
from costsim.pricing.money import money_places, partial_money
from costsim.render.embeddings_text import ONLY_EMBEDDINGS
from costsim.render.html.bars import Bar, stacked_bars
from costsim.render.html.costs import TOKEN_CLASSES
from costsim.render.html.figures import TOP, Finding, findings_table, tokens_cell
from costsim.render.html.markup import Node, el
from costsim.render.html.page import Figure, document
from costsim.render.html.svg import short_money, short_tokens
from costsim.render.html.tables import Cell, Table, cell, num
from costsim.render.rows import ranked as rows_ranked
from costsim.render.text import percent, plural, tests_text

__all__ = ["DriftRow", "TestRun", "WhatIf", "test_run_page"]


@dataclass(frozen=True, slots=True)
class WhatIf:
    """A test's simulated cost under one what-if variant (priced part, unpriced calls)."""

    priced: Decimal
    unpriced_calls: int = 0


@dataclass(frozen=True, slots=True)
class DriftRow:
    """A replayed call whose request, as the code sent it, differs from the recording."""

    test: str
    cassette: str
    interaction: int
    kind: str
    detail: str
    prompt_delta: int | None


@dataclass(frozen=True, slots=True)
class TestRun:
    """What a test run's LLM calls cost, per test (the plugin's figures)."""

    __test__ = False  # not a pytest test class

    tests: Mapping[str, TestCost]
    what_if: Mapping[str, Mapping[str, WhatIf]] = field(default_factory=dict)
    """Per test, per variant name."""
    variants: Sequence[str] = ()
    drift: Sequence[DriftRow] = ()
    notes: Sequence[str] = ()
    failures: Sequence[str] = ()
    calls: Mapping[str, str] = field(default_factory=dict)
    """Per test, its calls as the terminal writes them (``2 (2 est.)``); else the count."""
    beside: str = ""
    """Said beside the answer, in no figure of the page (``; embeddings $0.000020 more``)."""


def _cost(cost: TestCost, decimals: int | None = None) -> Cell:
    return num(
        partial_money(cost.priced_cost_usd, cost.unpriced_calls, decimals),
        float(cost.priced_cost_usd),
    )


def _ranked(run: TestRun) -> list[tuple[str, TestCost]]:
    return rows_ranked(run.tests.items(), lambda cost: (cost.priced_cost_usd, cost.prompt_tokens))


def _what_if_cell(value: WhatIf | None, decimals: int | None = None) -> Cell:
    if value is None:
        return num("-", None)
    return num(partial_money(value.priced, value.unpriced_calls, decimals), float(value.priced))


def _places(values: Sequence[WhatIf | TestCost | None]) -> int:
    """A money column's decimals, one for all its rows (a row with nothing priced sets none)."""
    amounts = []
    for value in values:
        if isinstance(value, TestCost):
            amounts.append((value.priced_cost_usd, value.unpriced_calls))
        elif value is not None:
            amounts.append((value.priced, value.unpriced_calls))
    return money_places(priced for priced, unknown in amounts if priced or not unknown)


def _tests_figure(run: TestRun) -> Figure:
    ranked = _ranked(run)
    title = "Costliest tests"
    bars = [
        Bar(name, (("c-total", float(cost.priced_cost_usd)),), _cost(cost).text)
        for name, cost in ranked[:TOP]
    ]
    chart = stacked_bars(title, bars, [("c-total", "cost")], short_money)
    headers = (
        "test", "calls", "prompt", "uncached", "cache read", "cache write", "output",
        "hit rate", "cost", *(f"cost with {name}" for name in run.variants),
    )  # fmt: skip
    places = _places([cost for _, cost in ranked])
    variant_places = {
        v: _places([run.what_if.get(name, {}).get(v) for name, _ in ranked]) for v in run.variants
    }
    rows = [
        (
            cell(name),
            num(run.calls[name], cost.calls) if name in run.calls else tokens_cell(cost.calls),
            tokens_cell(cost.prompt_tokens),
            tokens_cell(cost.uncached_input_tokens),
            tokens_cell(cost.cache_read_tokens),
            tokens_cell(cost.cache_write_tokens),
            tokens_cell(cost.output_tokens),
            num(percent(cost.cache_hit_rate), cost.cache_hit_rate),
            _cost(cost, places),
            *(
                _what_if_cell(run.what_if.get(name, {}).get(v), variant_places[v])
                for v in run.variants
            ),
        )
        for name, cost in ranked
    ]
    drawn = f"The {TOP} costliest of {tests_text(list(run.tests))} are drawn."
    notes = [drawn] * (len(ranked) > TOP)
    return Figure("tests", title, chart, Table(title, headers, rows), notes)


def _tokens_figure(run: TestRun) -> Figure:
    by_tokens = rows_ranked(run.tests.items(), lambda cost: cost.prompt_tokens)
    title = "Tests by tokens, by class"
    bars: list[Bar] = []
    rows: list[tuple[Cell, ...]] = []
    for name, cost in by_tokens:
        values = (
            cost.uncached_input_tokens,
            cost.cache_read_tokens,
            cost.cache_write_tokens,
            cost.output_tokens,
        )
        segments = tuple((cls, float(v)) for (cls, _), v in zip(TOKEN_CLASSES, values, strict=True))
        if len(bars) < TOP:
            bars.append(Bar(name, segments, f"{sum(values):,} tok"))
        rows.append((cell(name), *(tokens_cell(v) for v in values), tokens_cell(sum(values))))
    chart = stacked_bars(title, bars, TOKEN_CLASSES, short_tokens)
    headers = ("test", *(label for _, label in TOKEN_CLASSES), "tokens")
    return Figure("tokens", title, chart, Table(title, headers, rows))


def _variants_figure(run: TestRun) -> Figure | None:
    if not run.variants:
        return None
    recorded = sum((c.priced_cost_usd for c in run.tests.values()), Decimal(0))
    unknown = sum(c.unpriced_calls for c in run.tests.values())
    rows: list[tuple[Cell, ...]] = [
        (cell("as run"), num(partial_money(recorded, unknown), float(recorded)), cell(""))
    ]
    bars = [Bar("as run", (("c-total", float(recorded)),), rows[0][1].text)]
    for name in run.variants:
        found = [item[name] for item in run.what_if.values() if name in item]
        priced = sum((w.priced for w in found), Decimal(0))
        missing = sum(w.unpriced_calls for w in found)
        text = partial_money(priced, missing)
        share = f"{(priced - recorded) / recorded:+.1%}" if recorded and not missing else ""
        rows.append((cell(name), num(text, float(priced)), cell(share)))
        bars.append(Bar(name, (("c-total", float(priced)),), text))
    title = "What-if variants: the run's cost"
    chart = stacked_bars(title, bars, [("c-total", "cost")], short_money)
    table = Table(title, ("variant", "cost", "change"), rows)
    return Figure("what-if", title, chart, table)


def _drift(run: TestRun) -> Node:
    found = [
        Finding(
            row.test,
            row.kind,
            "drift",
            row.cassette,
            row.interaction,
            row.detail
            + ("" if row.prompt_delta is None else f" (prompt {row.prompt_delta:+,} tokens)"),
        )
        for row in run.drift
    ]
    empty = "None: every replayed request matched its recording."
    return findings_table("drift", "Drifted calls", found, empty)


def test_run_page(run: TestRun) -> str:
    whole = TestCost()
    for cost in run.tests.values():
        whole.merge(cost)
    if run.tests:
        spent = partial_money(whole.priced_cost_usd, whole.unpriced_calls)
        # as the terminal counts them: ``28 tests and 1 fixture scope``, ``1 LLM call``
        answer = (
            f"{spent} for {plural(whole.calls, 'LLM call')} in {tests_text(list(run.tests))}"
            f"{run.beside}."
        )
        figures: list[Node | None] = [
            _tests_figure(run).node(),
            _tokens_figure(run).node(),
            None if (f := _variants_figure(run)) is None else f.node(),
        ]
    elif run.beside:  # embeddings requests and no LLM call: vcrpy saw the run
        answer, figures = f"{ONLY_EMBEDDINGS} through vcrpy.", []
    else:
        answer, figures = "No LLM calls were replayed or recorded through vcrpy.", []
    extra: list[Node] = [_drift(run)]
    if run.notes or run.failures:
        items = [el("li", text, class_="flag") for text in run.failures]
        items += [el("li", text) for text in run.notes]
        extra.append(el("section", el("h3", "Notes"), el("ul", *items), id="notes"))
    body = [node for node in [*figures, *extra] if node is not None]
    return document("costsim: LLM calls in the test run", [answer], body)
