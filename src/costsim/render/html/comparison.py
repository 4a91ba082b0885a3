"""HTML pages of comparisons: ``costsim simulate`` (one variant), a scenario, and several
scenarios on one page (``costsim compare DIR``).

Each comparison leads with its answer (the variant that saves most against the recording, as the
text answer picks it; its saving and range), then:
cost per variant stacked by class with its error band; running tokens per turn of the
largest trace; a waterfall per stacked variant; the costliest cassettes, agents, models and
tools; divergence flags and notes with their call.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

from costsim.analysis.bands import Band
from costsim.analysis.breakdown import AgentMatcher, by_tool, comparison_tables
from costsim.analysis.comparison import Comparison, VariantSummary
from costsim.analysis.spread import Spread
from costsim.pricing.ledger import Totals
from costsim.pricing.money import money
from costsim.render.band_text import half_text, spread_text
from costsim.render.comparison_text import (
    best_saving,
    nothing_to_save,
    snapshot_lines,
    warm_line,
)
from costsim.render.html import findings
from costsim.render.html.costs import (
    BAND_NOTE,
    Spend,
    dollar_band,
    grouped,
)
from costsim.render.html.figures import (
    Row,
    cost_figure,
    findings_table,
    ranked_figure,
    spend_label,
    turns_figure,
    waterfall_figure,
)
from costsim.render.html.markup import Node, el
from costsim.render.html.page import document, section
from costsim.render.html.tables import Cell, Table, cell, num
from costsim.render.html.tools import tools_figure
from costsim.render.text import decimals_for, display_path, finer, money_cells, plural
from costsim.scenario.result import ScenarioComparison

__all__ = ["scenario_page", "scenarios_page", "simulation_page"]


@dataclass(frozen=True, slots=True)
class Column:
    """The baseline or one variant: its cost split by class, and its band."""

    label: str
    spend: Spend
    summary: VariantSummary | None = None
    band: Band | None = None


def _columns(comparison: Comparison, *, describe: bool = False) -> list[Column]:
    columns = [Column("baseline (recorded)", Spend.of_totals(comparison.baseline))]
    for summary in comparison.variants:
        label = summary.variant.describe() if describe else summary.variant.name
        columns.append(
            Column(label, Spend.of_totals(summary.totals), summary, dollar_band(summary))
        )
    return columns


@dataclass(frozen=True, slots=True)
class Outcome:
    """The answer a comparison gives: its line, and the best variant's saving."""

    line: str
    best: str | None = None
    saving: Decimal | None = None
    said: str = ""
    """The saving and how sure it is, in one precision: ``$2.220 (p90 $2.077 to $2.355)``."""


def outcome(comparison: Comparison, columns: Sequence[Column]) -> Outcome:
    """The one line a reader wants: the variant that saves most against the recording (like
    for like; the one the text's answer names), what it saves, and its p90 range."""
    if comparison.baseline.cost_usd is None:
        return _partly_priced(comparison, columns)
    free = nothing_to_save(comparison)
    if free is not None:
        return Outcome(free)
    priced = [
        (cost, column, column.summary)
        for column in columns[1:]
        if column.summary is not None and (cost := column.summary.totals.cost_usd) is not None
    ]
    if not priced:
        return Outcome(
            f"Recorded cost {money(comparison.baseline.cost_usd)}; no variant has a known cost."
        )
    chosen = best_saving(comparison)
    if chosen is not None:
        cost, best, summary = next(found for found in priced if found[2] is chosen.summary)
        lead = f"Saves most: {best.label}"
        if summary.variant.knows_the_future:
            lead += " (an oracle: it knows the trace's future, a bound, not a plan)"
    else:  # no saving is known: the lowest cost, said as such
        cost, best, summary = min(priced, key=lambda found: found[0])
        lead = f"Lowest cost: {best.label}"
    lead = best.label if len(priced) == 1 else lead
    delta, base = summary.delta, summary.baseline.cost_usd
    if delta.value is None or delta.low is None or delta.high is None or base is None:
        return Outcome(f"{lead} at {money(cost)}; its saving is unknown.", best.label)
    saving = -delta.value
    verb = "saves" if saving >= 0 else "adds"
    share = f" ({abs(saving) / base:.1%})" if base else ""
    low, high = (-delta.high, -delta.low) if saving >= 0 else (delta.low, delta.high)
    if saving >= 0:  # a cost is never below zero: nothing saves more than the baseline
        high = min(high, base)
    # one precision for the sentence, as the text's answer has (a range whose ends read alike
    # said as the band column says it: not "p90 $0.200 to $0.200")
    places = finer(decimals_for([cost, base, saving, low, high]), [saving])
    at, base_text, saved = money_cells([cost, base, abs(saving)], decimals=places)
    low_text, high_text = money_cells([low, high], decimals=places)
    sure = "" if delta.exact else f", p90 {_range(low_text, high_text, delta, places)}"
    risks = f"; {plural(summary.divergences, 'divergence')}" if summary.divergences else ""
    line = f"{lead} at {at} against {base_text} recorded: {verb} {saved}{share}{sure}{risks}."
    said = f"{saved} ({sure.removeprefix(', ') or 'exact'})"
    return Outcome(line, best.label, saving, said)


def _range(low: str, high: str, delta: Band, places: int) -> str:
    """``$2.077 to $2.355``; a range whose ends read alike as the band column says it
    (``±<$0.001``), not ``$0.102 to $0.102``."""
    return spread_text(delta.reach, places) if low == high else f"{low} to {high}"


def _partly_priced(comparison: Comparison, columns: Sequence[Column]) -> Outcome:
    """The answer when some recorded calls have no price: a variant that bills them as the
    recording does has a known saving (their unknown cost is the same on both sides)."""
    chosen = best_saving(comparison)
    if chosen is None:
        return Outcome("The recorded cost is unknown (some calls are unpriced); see the tables.")
    label = columns[chosen.index + 1].label
    delta, base = chosen.summary.delta, comparison.baseline.priced_cost
    saving = chosen.saving
    places = finer(decimals_for([base, saving, delta.low, delta.high]), [saving])
    base_text, saved = money_cells([base, abs(saving)], decimals=places)
    verb = "saves" if saving >= 0 else "adds"
    sure = ""
    if not delta.exact and delta.low is not None and delta.high is not None:
        low, high = (-delta.high, -delta.low) if saving >= 0 else (delta.low, delta.high)
        low_text, high_text = money_cells([low, high], decimals=places)
        sure = f", p90 {_range(low_text, high_text, delta, places)}"
    lead = f"Saves most: {label}" if saving >= 0 else f"Adds least: {label}"
    baseline = comparison.baseline
    why = []
    if baseline.unpriced_calls:
        calls = plural(baseline.unpriced_calls, "call")
        why.append(f"{calls} without a price, which the variant bills as recorded")
    if baseline.left_out_calls:
        missed = plural(baseline.left_out_calls, "LLM-looking interaction")
        why.append(f"{missed} costsim cannot meter, left out of both")
    line = (
        f"{lead}: {verb} {saved}{sure}, against a recording that costs at least {base_text} "
        f"({'; '.join(why)})."
    )
    said = f"{saved} ({sure.removeprefix(', ') or 'exact'})"
    return Outcome(line, label, saving, said)


def _cost(columns: Sequence[Column], prefix: str) -> Node:
    rows = [
        Row(
            column.label,
            column.spend,
            column.band,
            (
                cell(column.summary.variant.describe() if column.summary else "(as recorded)"),
                num(str(column.summary.divergences), column.summary.divergences)
                if column.summary
                else num("", None),
            ),
        )
        for column in columns
    ]
    notes = ["Bars are stacked by what the tokens were billed as.", BAND_NOTE]
    return cost_figure(
        f"{prefix}-cost",
        "Cost per variant by class",
        rows,
        extra_headers=("strategies", "divergences"),
        notes=notes,
        bands=True,
    ).node()


def _turns(comparison: Comparison, columns: Sequence[Column], prefix: str) -> Node | None:
    turns = comparison.turns
    if turns is None:
        return None
    data = [(column.label, series) for column, series in zip(columns, turns.series, strict=True)]
    title = f"Running tokens per turn: {display_path(turns.path)}"
    figure = turns_figure(f"{prefix}-turns", title, data)
    note = "The trace with the most recorded prompt tokens; one panel per variant, same scales."
    return el("div", el("p", note, class_="note"), figure.node())


def _waterfalls(columns: Sequence[Column], prefix: str) -> list[Node]:
    """One waterfall per stacked variant whose marginals are all known."""
    nodes = []
    for position, column in enumerate(columns[1:], start=1):
        summary = column.summary
        if summary is None or summary.interaction is None:
            continue
        recorded, cost = summary.baseline.cost_usd, summary.totals.cost_usd
        if recorded is None or cost is None:
            continue
        known = [
            (name, value, summary.attribution_bands.get(name))
            for name, value in summary.attribution.items()
            if value is not None
        ]
        title = f"What each strategy adds to {column.label}"
        nodes.append(
            waterfall_figure(
                f"{prefix}-waterfall-{position}",
                title,
                recorded,
                known,
                (summary.interaction, summary.interaction_band),
                cost,
            ).node()
        )
    return nodes


def _grouped(
    ident: str,
    title: str,
    columns: Sequence[Column],
    tables: Sequence[dict[str, Totals]],
    spreads: Sequence[dict[str, Spread]] | None,
    name_of: Callable[[str], str] = str,
) -> Node:
    """A ranked table of each group's cost per column; a variant's cost with its p90 band
    where something behind it was estimated (``spreads``: per column, per group)."""
    groups = [grouped(table, name_of) for table in tables]
    bands = [_named(table, name_of) for table in spreads or [{} for _ in tables]]
    names = sorted({name for found in groups for name in found})
    rows = [
        Row(
            name,
            groups[0].get(name, Spend()),
            band=_spend_band(groups[0].get(name), bands[0].get(name)),
            extra=tuple(
                _spend_cell(found.get(name), band.get(name))
                for found, band in zip(groups[1:], bands[1:], strict=True)
            ),
        )
        for name in names
    ]
    headers = [f"{column.label} cost" for column in columns[1:]]
    return ranked_figure(ident, title, rows, extra_headers=headers, what="recorded cost").node()


def _named(table: dict[str, Spread], name_of: Callable[[str], str]) -> dict[str, Spread]:
    """Spreads keyed as :func:`grouped` names their groups (names that meet are summed)."""
    named: dict[str, Spread] = {}
    for key, spread in table.items():
        name = name_of(key)
        named[name] = named.get(name, Spread()) + spread
    return named


def _spend_band(spend: Spend | None, spread: Spread | None) -> Band | None:
    """The p90 band of a group's cost (a lower bound's: its priced part's); None: exact."""
    if spend is None or spread is None:
        return None
    totals = spend.totals
    value = totals.cost_usd if totals.cost_usd is not None else totals.priced_cost or None
    return None if value is None else Band(value, spread.rounded(), True, Decimal(0))


def _spend_cell(spend: Spend | None, spread: Spread | None = None) -> Cell:
    if spend is None:
        return num("-", None)
    label = spend_label(spend)
    band = _spend_band(spend, spread)
    if band is not None and band.value is not None:
        label += " " + half_text(band, decimals_for([band.value]))
    return num(label, float(spend.cost.total))


def comparison_sections(
    comparison: Comparison,
    prefix: str,
    *,
    agents: AgentMatcher | None = None,
    describe: bool = False,
) -> tuple[Outcome, list[Node]]:
    """(the answer, the comparison's figures and lists)."""
    columns = _columns(comparison, describe=describe)
    nodes: list[Node | None] = [_cost(columns, prefix), _turns(comparison, columns, prefix)]
    nodes += _waterfalls(columns, prefix)
    tables = comparison_tables(comparison, agents)
    nodes.append(
        _grouped(
            f"{prefix}-cassettes",
            "Costliest cassettes",
            columns,
            tables["cassette"],
            comparison.spreads.get("cassette"),
            lambda key: display_path(Path(key)),
        )
    )
    if agents is not None and (agents.patterns or agents.files):
        agent = comparison.spreads.get("agent")
        nodes.append(
            _grouped(f"{prefix}-agents", "Costliest agents", columns, tables["agent"], agent)
        )
    if len({name for table in tables["model"] for name in table}) > 1:
        model = comparison.spreads.get("model")
        nodes.append(
            _grouped(f"{prefix}-models", "Cost per model", columns, tables["model"], model)
        )
    tools = by_tool(comparison, agents or AgentMatcher())
    if tools.rows:
        nodes.append(tools_figure(f"{prefix}-tools", tools, [c.label for c in columns]).node())
    flags = findings.comparison_findings(comparison, [c.label for c in columns])
    empty = "None: no divergence flag, note or unpriced call."
    nodes.append(findings_table(f"{prefix}-findings", "Divergence flags and notes", flags, empty))
    return outcome(comparison, columns), [node for node in nodes if node is not None]


def simulation_page(comparison: Comparison) -> str:
    found, nodes = comparison_sections(comparison, "sim", describe=True)
    return document("costsim simulate", [found.line], nodes, _meta(comparison))


def _meta(comparison: Comparison) -> list[str]:
    meta = []
    if comparison.as_of is not None:
        meta.append(f"Priced as of {comparison.as_of:%Y-%m-%d}.")
        meta += snapshot_lines(comparison)
    else:
        meta.append("Each call priced at its recorded date.")
    if said := warm_line(comparison):
        meta.append(said)
    return meta


def _scenario_nodes(result: ScenarioComparison, prefix: str) -> tuple[Outcome, list[Node]]:
    """(the answer, the description, gates broken and figures of one scenario)."""
    found, nodes = comparison_sections(result.comparison, prefix, agents=result.agent_matcher())
    head: list[Node] = []
    if result.loaded.scenario.description:
        head.append(el("p", result.loaded.scenario.description))
    if result.gate_failures:
        items = (el("li", failure, class_="flag") for failure in result.gate_failures)
        head.append(el("ul", *items, class_="gates"))
    return found, [*head, *nodes]


def scenario_page(result: ScenarioComparison) -> str:
    found, nodes = _scenario_nodes(result, "s1")
    title = f"costsim compare: {result.loaded.scenario.name}"
    meta = [display_path(result.loaded.path), *_meta(result.comparison)]
    return document(title, [found.line], nodes, meta)


def scenarios_page(results: Sequence[ScenarioComparison]) -> str:
    """Several scenarios on one page: the biggest saving first, an overview with links, then
    one section per scenario."""
    if len(results) == 1:
        return scenario_page(results[0])
    sections: list[Node] = []
    rows: list[tuple[Cell, ...]] = []
    best: tuple[Decimal, str, str, str] | None = None
    for position, result in enumerate(results, start=1):
        found, nodes = _scenario_nodes(result, f"s{position}")
        name = result.loaded.scenario.name
        answer = el("p", found.line, class_="answer")
        sections.append(section(f"s{position}", name, answer, *nodes))
        rows.append((Cell(name, link=f"#s{position}"), cell(found.line, wrap=True)))
        saving = found.saving
        if saving is not None and saving > 0 and found.best and (best is None or saving > best[0]):
            best = (saving, name, found.best, found.said)
    overview = Table("Scenarios", ("scenario", "answer"), rows)
    head = section("overview", "Scenarios", el("div", overview.node(), class_="scroll"))
    lines = [f"{len(results)} scenarios compared against their recordings."]
    if best is not None:
        lines.insert(0, f"Biggest saving: {best[2]} in {best[1]}, {best[3]}.")
    return document("costsim compare", lines, [head, *sections])
