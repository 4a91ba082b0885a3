"""The pytest plugin's terminal summary and report files (JSON or Markdown, by extension)."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

from tabulate import tabulate

from costsim.baseline import TestCost
from costsim.engine.registry import Variant, parse_step
from costsim.plugin_session import CostsimSession
from costsim.render import FORMAT_VERSION, money, percent, write_atomic

__all__ = ["parse_strategies", "summary_lines", "what_if_costs", "write_report"]

_HEADERS = [
    "test",
    "calls",
    "prompt",
    "uncached",
    "cache read",
    "cache write",
    "output",
    "hit rate",
    "cost",
]


def _sorted(costs: dict[str, TestCost]) -> list[tuple[str, TestCost]]:
    """Costliest first; tests whose cost is unknown come before all priced ones."""
    return sorted(
        costs.items(),
        key=lambda kv: (kv[1].cost_usd is not None, -(kv[1].cost_usd or Decimal(0)), kv[0]),
    )


def _cost(cost: TestCost) -> str:
    return "unpriced" if cost.cost_usd is None else money(cost.cost_usd)


def _calls(cost: TestCost) -> str:
    """Calls, with how many were estimated (no usage) or drifted (a changed request)."""
    flags = [
        f"{count} {label}"
        for count, label in ((_unrecorded(cost), "est."), (cost.drifted_calls, "drifted"))
        if count
    ]
    return f"{cost.calls} ({', '.join(flags)})" if flags else str(cost.calls)


def _unrecorded(cost: TestCost) -> int:
    """Calls estimated because their recording has no usage (drifted ones are estimated too)."""
    return cost.estimated_calls - cost.drifted_calls


def _row(name: str, cost: TestCost) -> list[str]:
    return [
        name, _calls(cost), f"{cost.prompt_tokens:,}", f"{cost.uncached_input_tokens:,}",
        f"{cost.cache_read_tokens:,}", f"{cost.cache_write_tokens:,}", f"{cost.output_tokens:,}",
        percent(cost.cache_hit_rate), _cost(cost),
    ]  # fmt: skip


def _what_if_cell(costs: dict[str, str | None], column: str) -> str:
    if column not in costs:
        return "-"
    value = costs[column]
    return "unpriced" if value is None else money(Decimal(value))


def _what_if_total(state: CostsimSession, column: str) -> str:
    values = [costs.get(column, "missing") for costs in state.what_if.values()]
    if "missing" in values or len(state.what_if) < len(state.costs()):
        return "-"
    if None in values:
        return "unpriced"
    return money(sum((Decimal(v) for v in values if v is not None), Decimal(0)))


def _total(costs: dict[str, TestCost]) -> TestCost:
    total = TestCost()
    for cost in costs.values():
        total.merge(cost)
    return total


def parse_strategies(text: str) -> list[Variant]:
    """``caching:ttl=1h,truncation&caching`` -> one what-if variant per comma-separated entry.

    A ``key=value`` part with no strategy name continues the previous entry's options, and
    ``a&b`` stacks strategies in one column. Unknown names and bad options raise ConfigError.
    """
    entries: list[str] = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        if "=" in part and ":" not in part and entries:
            entries[-1] += "," + part
        else:
            entries.append(part)
    return [
        Variant(entry, tuple(parse_step(step.strip()) for step in entry.split("&")))
        for entry in entries
    ]


def what_if_costs(state: CostsimSession, strategies: str) -> dict[str, dict[str, str | None]]:
    """Per test, each what-if variant's simulated cost (a Decimal string; None if unpriced).

    Each test's calls form one trace, in the order the test made them, with the requests as
    the code sent them.
    """
    from costsim.engine import Engine

    tests = {state.trace(test).path: test for test in state.observed}
    engine = Engine([state.trace(test) for test in tests.values()], meter=state.meter)
    requests = {path: state.sent(test) for path, test in tests.items()}
    costs: dict[str, dict[str, str | None]] = {test: {} for test in tests.values()}
    for variant in parse_strategies(strategies):
        for path, totals in engine.run(variant, requests=requests).totals_by_trace().items():
            cost = totals.cost_usd
            costs[tests[path]][variant.name] = None if cost is None else str(cost)
    return costs


def _table(
    state: CostsimSession, *, top: int | None, strategies: str | None, fmt: str
) -> list[str]:
    """The per-test table (costliest first, TOTAL last, what-if columns), then its notes."""
    costs = state.costs()
    ranked = _sorted(costs)
    shown = ranked[:top] if top is not None else ranked
    columns = [variant.name for variant in parse_strategies(strategies)] if strategies else []
    headers = [*_HEADERS, *(f"cost with {name}" for name in columns)]
    label = (lambda name: name.replace("|", "\\|")) if fmt == "github" else str
    rows = [
        _row(label(name), cost)
        + [_what_if_cell(state.what_if.get(name, {}), column) for column in columns]
        for name, cost in shown
    ]
    total = _total(costs)
    rows.append(_row("TOTAL", total) + [_what_if_total(state, column) for column in columns])
    lines = tabulate(rows, headers=headers, tablefmt=fmt, disable_numparse=True).splitlines()
    if top is not None and len(ranked) > top:
        lines.append(f"({len(ranked) - top} cheaper tests not shown; --costsim-top)")
    if _unrecorded(total):
        lines.append(
            f"est.: {_unrecorded(total)} calls were recorded without usage; their tokens are "
            "costsim's calibrated estimate (see costsim calibrate for its error)"
        )
    if total.drifted_calls:
        lines.append(
            f"drifted: {total.drifted_calls} calls sent a request that differs from the recorded "
            "one; each is metered as its recorded prompt + the calibrated difference, through "
            "the cache simulator (--costsim-as-recorded meters the recordings instead)"
        )
    lines += [f"unpriced: {entry}" for entry in total.unpriced]
    lines += [f"warning: {error}" for error in state.errors]
    lines += state.notes
    return lines


def summary_lines(state: CostsimSession, *, top: int | None, strategies: str | None) -> list[str]:
    if not state.costs():
        return ["no LLM calls were replayed or recorded through vcrpy"]
    return _table(state, top=top, strategies=strategies, fmt="simple")


def _document(state: CostsimSession, failures: list[str]) -> dict[str, Any]:
    costs = state.costs()
    return {
        "format_version": FORMAT_VERSION,
        "kind": "costsim.pytest",
        "total": _total(costs).to_json(),
        "tests": {
            name: {
                **cost.to_json(),
                **({"what_if": state.what_if[name]} if name in state.what_if else {}),
            }
            for name, cost in _sorted(costs)
        },
        "failures": failures,
        "notes": state.notes,
        "warnings": state.errors,
    }


def write_report(
    path: Path, state: CostsimSession, failures: list[str], *, strategies: str | None = None
) -> None:
    """JSON (the default) or Markdown (``.md``), written atomically."""
    if path.suffix.lower() in (".md", ".markdown"):
        table = _table(state, top=None, strategies=strategies, fmt="github")
        body = [line for line in table if line.startswith("|")]
        notes = [f"- {line}" for line in table if not line.startswith("|")]
        notes += [f"- :x: {failure}" for failure in failures]
        lines = [
            "## costsim: LLM calls in the test run",
            "",
            *body,
            *(["", *notes] if notes else []),
        ]
        write_atomic(path, "\n".join(lines) + "\n")
    else:
        write_atomic(path, json.dumps(_document(state, failures), indent=2) + "\n")
