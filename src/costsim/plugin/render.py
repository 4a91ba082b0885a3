"""The plugin's terminal summary and report files (JSON or Markdown, by extension).

The terminal table leads with what each test cost and fits the terminal; ``-v`` adds the
token split, and the report files carry every figure.
"""

from __future__ import annotations

import json
import textwrap
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

from costsim.api.testing import TestCost, parse_strategies
from costsim.plugin.session import CostsimSession, DriftEntry
from costsim.render.formats import write_atomic
from costsim.render.report import FORMAT_VERSION
from costsim.render.text import fit_table, money, partial_money, percent

__all__ = ["SummaryOptions", "summary_lines", "write_report"]

SHOWN_DRIFT = 10
"""Drifted calls listed on the terminal without ``-v``."""


@dataclass(frozen=True, slots=True)
class SummaryOptions:
    top: int | None = None
    strategies: str | None = None
    width: int = 100
    verbose: bool = False
    markdown: bool = False


_COLUMNS: tuple[tuple[str, bool], ...] = (
    ("calls", False), ("prompt", False), ("uncached", True), ("cache read", True),
    ("cache write", True), ("output", False), ("hit rate", False), ("cost", False),
)  # fmt: skip
"""(header, shown only with -v or in reports)."""


def _sorted(costs: dict[str, TestCost]) -> list[tuple[str, TestCost]]:
    """Costliest first by priced cost, then by prompt tokens (an unpriced test never leads)."""
    return sorted(
        costs.items(), key=lambda kv: (-kv[1].priced_cost_usd, -kv[1].prompt_tokens, kv[0])
    )


def cost_text(cost: TestCost) -> str:
    return partial_money(cost.priced_cost_usd, cost.unpriced_calls)


def _calls(cost: TestCost) -> str:
    """Calls, with how many were estimated (no usage) or drifted (a changed request)."""
    flags = [
        f"{count} {label}"
        for count, label in ((cost.unrecorded_calls, "est."), (cost.drifted_calls, "drifted"))
        if count
    ]
    return f"{cost.calls} ({', '.join(flags)})" if flags else str(cost.calls)


def _cells(cost: TestCost) -> dict[str, str]:
    return {
        "calls": _calls(cost),
        "prompt": f"{cost.prompt_tokens:,}",
        "uncached": f"{cost.uncached_input_tokens:,}",
        "cache read": f"{cost.cache_read_tokens:,}",
        "cache write": f"{cost.cache_write_tokens:,}",
        "output": f"{cost.output_tokens:,}",
        "hit rate": percent(cost.cache_hit_rate),
        "cost": cost_text(cost),
    }


def _what_if_cell(costs: dict[str, str | None], column: str) -> str:
    if column not in costs:
        return "-"
    value = costs[column]
    return "unpriced" if value is None else money(Decimal(value))


def _what_if_total(state: CostsimSession, costs: dict[str, TestCost], column: str) -> str:
    values = [item.get(column, "missing") for item in state.what_if_costs.values()]
    if "missing" in values or len(state.what_if_costs) < len(costs):
        return "-"
    if None in values:
        return "unpriced"
    return money(sum((Decimal(v) for v in values if v is not None), Decimal(0)))


def total(costs: dict[str, TestCost]) -> TestCost:
    whole = TestCost()
    for cost in costs.values():
        whole.merge(cost)
    return whole


def _table(state: CostsimSession, options: SummaryOptions) -> list[str]:
    costs = state.costs()
    ranked = _sorted(costs)
    shown = ranked[: options.top] if options.top is not None else ranked
    wide = options.verbose or options.markdown
    columns = [name for name, detail in _COLUMNS if wide or not detail]
    what_if = [v.name for v in parse_strategies(options.strategies)] if options.strategies else []
    headers = ["test", *columns, *(f"cost with {name}" for name in what_if)]
    label = (lambda name: name.replace("|", "\\|")) if options.markdown else str
    rows = []
    for name, cost in shown:
        cells = _cells(cost)
        extra = [_what_if_cell(state.what_if_costs.get(name, {}), column) for column in what_if]
        rows.append([label(name), *(cells[c] for c in columns), *extra])
    cells = _cells(total(costs))
    extra = [_what_if_total(state, costs, column) for column in what_if]
    rows.append(["TOTAL", *(cells[c] for c in columns), *extra])
    if options.markdown:
        return fit_table(headers, rows, width=10**6, tablefmt="github")
    lines = fit_table(headers, rows, width=options.width)
    if options.top is not None and len(ranked) > options.top:
        lines.append(f"({len(ranked) - options.top} cheaper tests not shown; --costsim-top)")
    return lines


def _drift_line(entry: DriftEntry, width: int) -> str:
    """``  test (cassette #i) prompt +N tok: what differs``, cut at ``width``."""
    effect = "" if entry.prompt_delta is None else f" prompt {entry.prompt_delta:+,} tok"
    details = "; ".join(str(d) for d in entry.differences)
    line = f"  {entry.test} ({entry.cassette} #{entry.index}){effect}: {details}"
    return line if len(line) <= width else line[: width - 3] + "..."


def drift_lines(state: CostsimSession, options: SummaryOptions) -> list[str]:
    entries = state.drifted()
    if not entries:
        return []
    shown = entries if options.verbose or options.markdown else entries[:SHOWN_DRIFT]
    lines = [
        f"drifted: {len(entries)} call(s) sent a request that differs from the recording; "
        "metered as sent (--costsim-drift=ignore meters the recordings)"
    ]
    lines += [_drift_line(entry, options.width) for entry in shown]
    if len(shown) < len(entries):
        lines.append(f"  and {len(entries) - len(shown)} more (-v, or --costsim-report)")
    return lines


def _notes(state: CostsimSession, options: SummaryOptions) -> list[str]:
    whole = total(state.costs())
    lines = []
    if whole.unrecorded_calls:
        lines.append(
            f"est.: {whole.unrecorded_calls} calls were recorded without usage; their tokens are "
            "costsim's calibrated estimate (see costsim calibrate for its error)"
        )
    lines += drift_lines(state, options)
    lines += [f"unpriced: {entry}" for entry in whole.unpriced]
    lines += [f"warning: {error}" for error in state.errors]
    lines += state.notes
    return lines


def _wrap(line: str, width: int) -> list[str]:
    if len(line) <= width or line.startswith("  "):
        return [line]
    return textwrap.wrap(
        line, width, subsequent_indent="  ", break_long_words=False, break_on_hyphens=False
    )


def _vcrpy_hint() -> list[str]:
    """Why no call may have been seen: SDKs on httpx2 need vcrpy 8.2 or newer to be replayed."""
    from importlib.metadata import PackageNotFoundError, version
    from importlib.util import find_spec

    try:
        major, minor = (int(part) for part in version("vcrpy").split(".")[:2])
    except (PackageNotFoundError, ValueError):
        return []
    if (major, minor) >= (8, 2) or find_spec("httpx2") is None:
        return []
    return [
        f"  vcrpy {major}.{minor} does not intercept httpx2, which the anthropic (1.0+) and "
        "openai SDKs now use: upgrade to vcrpy 8.2 or newer"
    ]


def summary_lines(state: CostsimSession, options: SummaryOptions) -> list[str]:
    if not state.costs():
        return ["no LLM calls were replayed or recorded through vcrpy", *_vcrpy_hint()]
    notes = [wrapped for line in _notes(state, options) for wrapped in _wrap(line, options.width)]
    return [*_table(state, options), *notes]


def _document(state: CostsimSession, failures: list[str]) -> dict[str, Any]:
    costs = state.costs()
    return {
        "format_version": FORMAT_VERSION,
        "kind": "costsim.pytest",
        "total": total(costs).to_json(),
        "tests": {
            name: {
                **cost.to_json(),
                **({"what_if": state.what_if_costs[name]} if name in state.what_if_costs else {}),
            }
            for name, cost in _sorted(costs)
        },
        "drift": [entry.to_json() for entry in state.drifted()],
        "failures": failures,
        "notes": state.notes,
        "warnings": state.errors,
        "internal_errors": state.internal_errors,
    }


def write_report(
    path: Path, state: CostsimSession, failures: list[str], *, strategies: str | None = None
) -> None:
    """JSON (the default) or Markdown (``.md``), written atomically."""
    if path.suffix.lower() in (".md", ".markdown"):
        options = SummaryOptions(strategies=strategies, markdown=True)
        notes = [f"- {line.strip()}" for line in _notes(state, options)]
        notes += [f"- :x: {failure}" for failure in failures]
        lines = [
            "## costsim: LLM calls in the test run",
            "",
            *_table(state, options),
            *(["", *notes] if notes else []),
        ]
        write_atomic(path, "\n".join(lines) + "\n")
    else:
        write_atomic(path, json.dumps(_document(state, failures), indent=2) + "\n")
