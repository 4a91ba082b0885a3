"""The report files ``--costsim-report`` writes: JSON (the default), Markdown (``.md``) or
HTML (``.html``), each written atomically, each with the terminal summary's figures and
notes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from costsim.api.testing import parse_strategies, write_atomic
from costsim.plugin.cells import cells
from costsim.plugin.ranking import answer_line, ranked_tests, whole
from costsim.plugin.render import (
    Costs,
    SummaryOptions,
    note_lines,
    said_notes,
    table_lines,
    what_if_columns,
    what_if_legend,
    what_if_sum,
)
from costsim.plugin.session import CostsimSession, DriftEntry
from costsim.render.embeddings_text import (
    ONLY_EMBEDDINGS,
    embeddings_beside,
    unpriced_embeddings_json,
)
from costsim.render.report import FORMAT_VERSION
from costsim.render.visible import markdown_lines, visible

__all__ = ["write_report"]


def _total_json(state: CostsimSession, costs: Costs) -> dict[str, Any]:
    """The run's total; with what-if variants, each one's cost over every test (null when a
    test has no figure for it)."""
    document = whole(costs).to_json()
    columns = what_if_columns(state)
    if columns:
        tests = list(costs)
        sums = {name: what_if_sum(state, name, tests) for name in columns}
        document["what_if"] = {
            name: None if summed is None else summed.to_json() for name, summed in sums.items()
        }
    return document


def _document(
    state: CostsimSession, failures: list[str], unserved: tuple[str, ...]
) -> dict[str, Any]:
    costs = state.costs()
    return {
        "format_version": FORMAT_VERSION,
        "kind": "costsim.pytest",
        "total": _total_json(state, costs),
        "tests": {
            name: {
                **cost.to_json(),
                **(
                    {
                        "what_if": {
                            variant: value.to_json()
                            for variant, value in state.what_if_costs[name].items()
                        }
                    }
                    if name in state.what_if_costs
                    else {}
                ),
            }
            for name, cost in ranked_tests(costs)
        },
        "drift": [entry.to_json() for entry in state.drifted()],
        "failures": failures,
        "notes": [
            *state.notes,
            *(
                f"cost with {name}: {note}"
                for name in state.what_if_notes
                for note in said_notes(state, name)
            ),
        ],
        "embeddings": {  # each unpriced one once, with how often it was replayed
            **state.embeddings.to_json(),
            "unpriced": unpriced_embeddings_json(state.embeddings, replays=True),
        },
        "warnings": state.errors,
        "not_replayed": list(unserved),
        "internal_errors": state.internal_errors,
    }


def write_report(
    path: Path,
    state: CostsimSession,
    failures: list[str],
    *,
    strategies: str | None = None,
    unserved: tuple[str, ...] = (),
) -> None:
    """JSON (the default), Markdown (``.md``) or HTML (``.html``), written atomically;
    ``unserved``: the tests vcrpy could not serve (JSON lists them; the notes say so)."""
    if path.suffix.lower() in (".html", ".htm"):
        write_atomic(path, _html(state, failures, strategies))
    elif path.suffix.lower() in (".md", ".markdown"):
        options = SummaryOptions(strategies=strategies, markdown=True)
        costs = state.costs()
        body = table_lines(state, costs, options) if costs else [_nothing_said(state)]
        variants = parse_strategies(strategies) if strategies and costs else []
        said = {v.name: what_if_legend(state, v.name, costs) for v in variants}
        notes = [f"- cost with {name}{legend}" for name, legend in said.items() if legend]
        notes += [
            f"- cost with {v.name}: note: {note}"
            for v in variants
            for note in said_notes(state, v.name)
        ]
        # a note's own leading * (the partial cost's) is a character, not a nested list
        notes += [f"- {_literal_star(line.strip())}" for line in note_lines(state, costs, options)]
        notes += [f"- :x: {failure}" for failure in failures]
        notes = [visible(note) for note in notes]  # a test id's line feed: one note a line
        answer = [answer_line(costs, state.embeddings), ""] if costs else []
        lines = ["## costsim: LLM calls in the test run", "", *answer, *body]
        lines += ["", *notes] if notes else []
        write_atomic(path, markdown_lines("\n".join(lines)) + "\n")  # <, >, & as entities
    else:
        write_atomic(path, json.dumps(_document(state, failures, unserved), indent=2) + "\n")


def _html(state: CostsimSession, failures: list[str], strategies: str | None) -> str:
    from costsim.render.html.testrun import DriftRow, TestRun, WhatIf, test_run_page

    costs = state.costs()
    options = SummaryOptions(strategies=strategies, markdown=True)
    variants = [v.name for v in parse_strategies(strategies)] if strategies else []
    legends = [(name, what_if_legend(state, name, costs)) for name in variants if costs]
    run = TestRun(
        tests=costs,
        what_if={
            test: {name: WhatIf(v.priced, v.unpriced_calls) for name, v in columns.items()}
            for test, columns in state.what_if_costs.items()
        },
        variants=variants,
        drift=[
            DriftRow(e.test, e.cassette, e.index, e.kind, _details(e), e.prompt_delta)
            for e in state.drifted()
        ],
        notes=[
            *(f"cost with {name}{legend}" for name, legend in legends if legend),
            *(f"cost with {v}: note: {note}" for v in variants for note in said_notes(state, v)),
            *_htmlnote_lines(note_lines(state, costs, options, drift=False)),
        ],
        failures=failures,
        calls={test: cells(cost)["calls"] for test, cost in costs.items()},
        beside=embeddings_beside(state.embeddings),
    )
    return test_run_page(run)


def _nothing_said(state: CostsimSession) -> str:
    """What a report file says in place of a table when no LLM call was replayed."""
    if state.embeddings.calls:  # vcrpy saw the run's requests: not a setup problem
        return f"{ONLY_EMBEDDINGS.replace('replayed or recorded', 'replayed')}."
    return "No LLM calls were replayed."


def _htmlnote_lines(lines: list[str]) -> list[str]:
    """The terminal's notes as list items: a line indented under another (a cassette the
    note names) joins it, as a sentence of its own after one that ends (``... price).
    Unpriced: ...; unpriced: ...``), else after a semicolon."""
    items: list[str] = []
    for line in lines:
        said = line.strip()
        if line.startswith("  ") and items and items[-1].endswith("."):
            items[-1] += f" {said[:1].upper()}{said[1:]}"
        elif line.startswith("  ") and items:
            items[-1] += f"; {said}"
        else:
            items.append(said)
    return items


def _details(entry: DriftEntry) -> str:
    return "; ".join(str(d) for d in entry.differences)


def _literal_star(line: str) -> str:
    return "\\" + line if line.startswith("*") else line
