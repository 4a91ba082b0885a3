"""The plugin's terminal summary and report files (JSON or Markdown, by extension).

The terminal table leads with what each test cost and fits the terminal (long test ids are
shortened from the left; hit rate, output, calls and prompt are left out in that order when
it is too narrow, and a note says so); ``-vv`` adds the token split, ``-v`` lists every
drifted call; the report files carry every figure.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from decimal import Decimal
from importlib.metadata import PackageNotFoundError, requires, version

from costsim.api.testing import EmbeddingTotals, TestCost, WhatIfCost, parse_strategies
from costsim.plugin.cells import cells, cost_text, what_if_cell, what_if_change
from costsim.plugin.drift_text import drift_lines
from costsim.plugin.ids import cut_test_ids
from costsim.plugin.ranking import (
    Listing,
    answer_line,
    listing,
    others_how,
    tests_text,
    unknown_text,
    whole,
)
from costsim.plugin.run import SummaryOptions, wrap
from costsim.plugin.session import CostsimSession
from costsim.render.band_text import spread_text
from costsim.render.embeddings_text import ONLY_EMBEDDINGS, embeddings_note, unpriced_embeddings
from costsim.render.events_text import alike
from costsim.render.rows import merged, others_label, others_note
from costsim.render.text import (
    ELLIPSIS,
    Column,
    extra_bytes,
    fit_table,
    markdown_table,
    money_places,
    plural,
)
from costsim.render.visible import visible

__all__ = [
    "Costs",
    "SummaryOptions",
    "cost_text",
    "embeddings_lines",
    "note_lines",
    "said_notes",
    "summary_lines",
    "table_lines",
    "what_if_columns",
    "what_if_legend",
    "what_if_sum",
    "wrap",
]

TEST_COLUMN_MIN = 30
"""Characters of a test id kept before the table drops a column."""


_COLUMNS: tuple[tuple[str, bool], ...] = (
    ("calls", False), ("prompt", False), ("uncached", True), ("cache read", True),
    ("cache write", True), ("output", False), ("hit rate", False), ("cost", False),
)  # fmt: skip
"""(header, shown only with -vv or in reports)."""


def what_if_sum(state: CostsimSession, column: str, tests: list[str]) -> WhatIfCost | None:
    """A what-if variant's cost over ``tests``; None unless each of them has it."""
    values = [state.what_if_costs.get(name, {}).get(column) for name in tests]
    if None in values:
        return None
    return sum((v for v in values if v is not None), WhatIfCost(Decimal(0), delta=Decimal(0)))


def _what_if_band(whole: WhatIfCost | None) -> str:
    """``; TOTAL p90 ±$0.0004``: how far the simulated total may be off (nothing when it is
    exact, or unknown); never below $0 (a trial's ±$0.571 on a $0.193 total)."""
    if whole is None or whole.cost_usd is None or not whole.spread:
        return ""
    spread = replace(whole.spread, below=min(whole.spread.below, whole.cost_usd))
    return f"; TOTAL p90 {spread_text(spread.rounded())}"


def what_if_legend(state: CostsimSession, column: str, costs: Costs) -> str:
    """What a what-if column changes in the tests' total cost, with the band of that change,
    then how far its own total may be off."""
    summed = what_if_sum(state, column, list(costs))
    return f"{what_if_change(summed, whole(costs))}{_what_if_band(summed)}"


def what_if_columns(state: CostsimSession) -> list[str]:
    """The what-if variants of the run, in the order the tests list them."""
    return list(dict.fromkeys(name for costs in state.what_if_costs.values() for name in costs))


Costs = dict[str, TestCost]
"""Each test's figures, as :meth:`CostsimSession.costs` makes them: once per summary or
report (making them meters every call again)."""


def _rows(
    state: CostsimSession,
    costs: Costs,
    shown: Listing,
    columns: list[str],
    what_if: list[str],
    markdown: bool,
) -> list[list[str]]:
    named = [(visible(name), costs[name], [name]) for name in shown.listed]
    if shown.listed and shown.others:  # the cheaper tests in one row: the TOTAL stays whole
        summed = merged((costs[name] for name in shown.others), TestCost())
        named.append((others_label(len(shown.others)), summed, shown.others))
    named.append(("TOTAL", whole(costs), list(costs)))
    sums = [[what_if_sum(state, column, tests) for column in what_if] for _, _, tests in named]
    # one number of decimals per money column, as every table of costsim's has
    # (a row with nothing priced reads "unpriced": its $0 sets no decimals)
    decimals = money_places(
        cost.priced_cost_usd
        for _, cost, _ in named
        if cost.priced_cost_usd or not cost.unpriced_calls
    )
    extra_places = [
        money_places(
            value.priced
            for row in sums
            if (value := row[i]) is not None and (value.priced or not value.unpriced_calls)
        )
        for i in range(len(what_if))
    ]
    rows = []
    for (name, cost, _), values in zip(named, sums, strict=True):
        row_cells = cells(cost, decimals, flags=markdown or name != "TOTAL")
        extra = [what_if_cell(v, d) for v, d in zip(values, extra_places, strict=True)]
        rows.append([name, *(row_cells[c] for c in columns), *extra])
    return rows


_DROP_ORDER = ("hit rate", "output", "calls", "prompt")
"""Columns left out, in this order, when the table does not fit the terminal: the cost and
what ``-vv`` asked for (the token split) stay; the report files keep them all."""
_WIDE_DROP_ORDER = ("hit rate", "prompt", "calls", "output")
"""With ``-vv``: the prompt first (the split adds up to it), the output next (where a
reasoning model's cost is)."""
_SPLIT_DROP_ORDER = ("cache write", "uncached", "cache read")
"""With ``-vv``, only when even each id on a line of its own leaves the table too wide (what-if
columns beside the split at 60 columns): the split itself, the reads last (a table 81 wide ran
past an 80-column terminal)."""


def table_lines(state: CostsimSession, costs: Costs, options: SummaryOptions) -> list[str]:
    wide = options.verbose >= 2 or options.markdown
    columns = [name for name, detail in _COLUMNS if wide or not detail]
    what_if = [v.name for v in parse_strategies(options.strategies)] if options.strategies else []
    shown = listing(costs, options)
    if options.markdown:  # figures right-aligned, as every other Markdown table of costsim
        headers = ["test", *columns, *(f"cost with {name}" for name in what_if)]
        rows = _rows(state, costs, shown, columns, what_if, markdown=True)  # escaped below
        layout = [Column(headers[0], align="left"), *(Column(h) for h in headers[1:])]
        return markdown_table(layout, rows)
    # columns go before a test id is cut below TEST_COLUMN_MIN characters; then each id goes
    # on a line of its own; only then, with -vv, does the split it asked for make room
    stages = _stages(columns, _WIDE_DROP_ORDER if wide else _DROP_ORDER)
    tries = [(kept, False) for kept in stages] + [(kept, True) for kept in stages]
    for kept in _stages(stages[-1], _SPLIT_DROP_ORDER if wide else ())[1:]:
        tries += [(kept, False), (kept, True)]
    lines: list[str] = []
    fitted = columns
    for fitted, above in tries:
        # "test" heads the ids' lines (a trial read an untitled block without it)
        headers = ["test", *fitted, *(f"what-if {i}" for i in range(1, len(what_if) + 1))]
        rows = _rows(state, costs, shown, fitted, what_if, markdown=False)
        if above:
            lines = _ids_above(headers, rows, len(shown.listed), options.width)
        else:
            lines = fit_table(
                headers, rows, width=options.width, min_first=TEST_COLUMN_MIN, cut=cut_test_ids
            )
        if _fits(lines, options.width):
            break
    left_out = [c for c in columns if c not in fitted]
    leaves = f"(left out to fit: {', '.join(left_out)}; a --costsim-report file has every column)"
    notes = [leaves] if left_out else []
    for i, name in enumerate(what_if, start=1):
        notes.append(f"what-if {i}: cost with {name}{what_if_legend(state, name, costs)}")
        notes += [f"  note: {note}" for note in said_notes(state, name)]
    if shown.others and shown.listed:
        notes.append(others_note(len(shown.others), "test", others_how(options)))
    elif shown.others:
        notes.append(f"({tests_text(shown.others)} in the TOTAL; {others_how(options)})")
    return lines + [part for note in notes for part in wrap(note, options.width)]


def _stages(columns: list[str], drops: tuple[str, ...]) -> list[list[str]]:
    """``columns``, then with each of ``drops`` left out in turn."""
    stages = [list(columns)]
    for name in drops:
        stages.append([c for c in stages[-1] if c != name])
    return stages


def _fits(lines: list[str], width: int) -> bool:
    """In bytes, as ``wc -c`` and ``awk`` count: a cut id's ellipsis takes three."""
    return max(len(line) + extra_bytes(line) for line in lines) <= width


def _ids_above(headers: list[str], rows: list[list[str]], tests: int, width: int) -> list[str]:
    """The table with each of the first ``tests`` rows' test id on a line of its own above
    its figures (cut to the width only if the id alone is wider), the others as they are."""
    ids = cut_test_ids([row[0] for row in rows[:tests]], width - extra_bytes(ELLIPSIS))
    figures = [["", *row[1:]] for row in rows[:tests]] + rows[tests:]
    table = fit_table(headers, figures, width=width)
    head = len(table) - len(figures)
    lines = table[:head]
    for index, line in enumerate(table[head:]):
        if index < tests:
            lines.append(ids[index])
        lines.append(line)
    return lines


def _vcrpy_hint() -> list[str]:
    """Why no call may have been seen: an SDK on httpx2 needs vcrpy 8.2 or newer."""
    try:
        major, minor = (int(part) for part in version("vcrpy").split(".")[:2])
    except (PackageNotFoundError, ValueError):
        return []
    if (major, minor) >= (8, 2):
        return []
    on_httpx2 = []
    for sdk in ("anthropic", "openai"):
        try:
            needs = requires(sdk) or []
        except PackageNotFoundError:
            continue
        if any(requirement.startswith("httpx2") for requirement in needs):
            on_httpx2.append(sdk)
    if not on_httpx2:
        return []
    verb = "sends" if len(on_httpx2) == 1 else "send"
    return [
        f"vcrpy {major}.{minor} does not intercept httpx2, which {' and '.join(on_httpx2)} "
        f"{verb} requests through: upgrade to vcrpy 8.2 or newer"
    ]


UNRECORDED_SHOWN = 3
"""Calls recorded without usable usage named in the summary without -v."""


def note_lines(
    state: CostsimSession, costs: Costs, options: SummaryOptions, *, drift: bool = True
) -> list[str]:
    """The notes under the table (``drift``: with the drifted requests; the HTML report
    shows those in a table of its own)."""
    total = whole(costs)
    lines = []
    if total.unpriced_calls:
        lines.append(
            f"* partial cost: {unknown_text(total)} (listed below): the figure is the priced part"
        )
    if total.unrecorded_calls:
        lines.append(
            f"est.: {plural(total.unrecorded_calls, 'call')} recorded no usable usage; "
            f"{'its' if total.unrecorded_calls == 1 else 'their'} tokens are costsim's "
            "calibrated estimate (see costsim calibrate for its error)"
        )
        named = list(dict.fromkeys(total.unrecorded))  # a cassette several tests replay: once
        everything = options.verbose > 0 or options.markdown  # a report file has room for all
        shown = named if everything else named[:UNRECORDED_SHOWN]
        lines += [f"  {entry}" for entry in shown]
        if len(named) > len(shown):
            lines.append(f"  and {len(named) - len(shown)} more (-v)")
    if total.errored_calls:
        lines.append(
            f"errored: {plural(total.errored_calls, 'call')} the API answered with an error "
            "(4xx/5xx): unbilled, no tokens counted"
        )
    lines += embeddings_lines(state.embeddings, options, apart=bool(costs))
    lines += drift_lines(state, options) if drift else []
    # a cassette several tests replay: each of its unpriced calls once, with how often
    replays = Counter(total.unpriced)
    lines += [
        f"unpriced: {entry}" + (f" (replayed {n} times)" if n > 1 else "")
        for entry, n in replays.items()
    ]
    lines += [f"unreadable: {error}" for error in state.errors]
    example = min(state.selected, default="tests/test_agent.py::test_refund")
    lines += [
        f"budget pattern {pattern!r} matches no test of this run, so it checks nothing "
        f"(patterns match whole test ids, such as {example!r})"
        for pattern in state.idle_patterns(costs)
    ]
    lines += state.notes
    return lines


def embeddings_lines(
    found: EmbeddingTotals, options: SummaryOptions, *, apart: bool = True
) -> list[str]:
    """The run's embeddings requests in ``costsim report``'s words (``apart``: beside LLM
    figures said above), then each one without a price once (a cassette several tests
    replay), with how often (the first few without -v)."""
    said = embeddings_note(found, apart=apart)
    if said is None:
        return []
    named = unpriced_embeddings(found)  # one order, however xdist split the run
    everything = options.verbose > 0 or options.markdown  # a report file has room for all
    shown = named if everything else named[:UNRECORDED_SHOWN]
    lines = [said]
    lines += [
        f"  unpriced: {entry}" + (f" (replayed {n} times)" if n > 1 else "") for entry, n in shown
    ]
    if len(named) > len(shown):
        lines.append(f"  and {len(named) - len(shown)} more (-v)")
    return lines


def summary_lines(state: CostsimSession, options: SummaryOptions) -> list[str]:
    """The table (or a line saying no call was seen), then every note, fitted to the width."""
    costs = state.costs()
    if costs:
        answer = answer_line(costs, state.embeddings)
        head = [*wrap(answer, options.width), "", *table_lines(state, costs, options)]
    elif state.embeddings.calls:  # vcrpy saw the run's requests: not a setup problem
        head = [f"{ONLY_EMBEDDINGS[:1].lower()}{ONLY_EMBEDDINGS[1:]} through vcrpy"]
    else:
        head = ["no LLM calls were replayed or recorded through vcrpy", *_vcrpy_hint()]
    notes = [out for line in note_lines(state, costs, options) for out in wrap(line, options.width)]
    return [visible(line) for line in [*head, *notes]]  # whatever way a recorded name came


def said_notes(state: CostsimSession, variant: str) -> list[str]:
    """The variant's notes, those alike but for their token counts once (one per test would
    repeat a placement's note with each test's own prompt length)."""
    return [note for note, _ in alike(state.what_if_notes.get(variant, []))]
