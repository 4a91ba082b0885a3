"""``costsim compare``: every scenario's variants against the recorded baseline."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click

from costsim.analysis.breakdown import BREAKDOWNS, AgentMatcher, render_breakdown
from costsim.analysis.comparison import Comparison, compare_variants
from costsim.analysis.report import load_traces
from costsim.cache.rules import default_rules
from costsim.cli._common import (
    Findings,
    format_option,
    handle_errors,
    lenient_option,
    output_option,
)
from costsim.engine import Engine
from costsim.errors import ConfigError
from costsim.render.comparison import comparison_json, render_comparison
from costsim.render.report import FORMAT_VERSION, display_path, write_atomic
from costsim.scenario import LoadedScenario, find_scenarios, gate, load_scenario
from costsim.strategies.registry import AgentSpec


@contextmanager
def _progress(total: int, label: str) -> Iterator[Any]:
    """A progress bar on stderr when it is a terminal; silent otherwise."""
    if not sys.stderr.isatty():
        yield lambda _variant: None
        return
    with click.progressbar(length=total, label=label, file=sys.stderr) as bar:
        yield lambda _variant: bar.update(1)


def _agents(loaded: LoadedScenario) -> AgentMatcher:
    rules = loaded.scenario.agents
    return AgentMatcher(
        patterns=tuple(
            (name, re.compile(rule.match)) for name, rule in rules.items() if rule.match
        ),
        files=tuple(
            (name, frozenset(p.resolve() for p in files))
            for name, files in loaded.agent_files().items()
        ),
    )


def _run_scenario(loaded: LoadedScenario, only: tuple[str, ...], lenient: bool) -> Comparison:
    scenario = loaded.scenario
    variants = [v for v in loaded.variants if not only or v.name in only]
    traces, skipped = load_traces(loaded.cassettes, lenient=lenient)
    for item in skipped:
        click.echo(f"warning: {display_path(loaded.path)}: skipped {item.error}", err=True)
    overrides = [(r.rule, r.model, r.value, r.since) for r in scenario.model_rules]
    agents = {name: AgentSpec(rule.match, rule.tier) for name, rule in scenario.agents.items()}
    engine = Engine(traces, rules=default_rules().with_overrides(overrides), agents=agents)
    as_of = (
        datetime(
            scenario.pricing.as_of.year,
            scenario.pricing.as_of.month,
            scenario.pricing.as_of.day,
            tzinfo=UTC,
        )
        if scenario.pricing.as_of
        else None
    )
    with _progress(len(variants), scenario.name) as tick:
        return compare_variants(
            engine,
            variants,
            as_of=as_of,
            title=scenario.name,
            description=scenario.description,
            on_variant=tick,
        )


@click.command()
@click.argument("scenarios", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--variant", "only", multiple=True, metavar="NAME", help="Only these variants (repeatable)."
)
@click.option(
    "--by", type=click.Choice(list(BREAKDOWNS)), help="Add a breakdown per agent, tool or model."
)
@click.option(
    "--fail-over",
    type=float,
    metavar="PCT",
    help="Exit 1 when a variant costs more than PCT% above the recorded baseline.",
)
@format_option
@lenient_option
@output_option
@handle_errors
def compare(
    scenarios: tuple[Path, ...],
    only: tuple[str, ...],
    by: str | None,
    fail_over: float | None,
    fmt: str,
    lenient: bool,
    output: Path | None,
) -> None:
    """Compare the variants of SCENARIOS (files, or folders of scenario files)."""
    loaded = [load_scenario(path) for path in find_scenarios(list(scenarios))]
    if only:
        known = {v.name for item in loaded for v in item.variants}
        missing = [name for name in only if name not in known]
        if missing:
            raise ConfigError(
                f"no variant named {missing[0]!r}; variants: {', '.join(sorted(known))}"
            )
    parts: list[str] = []
    documents: list[dict[str, Any]] = []
    failures: list[str] = []
    for item in loaded:
        comparison = _run_scenario(item, only, lenient)
        found = gate(comparison, item.scenario.budgets, fail_over)
        failures.extend(f"{item.scenario.name}: {failure}" for failure in found)
        if fmt == "json":
            documents.append(
                {
                    "scenario": item.scenario.name,
                    "path": display_path(item.path),
                    **comparison_json(comparison),
                    "gate_failures": found,
                }
            )
        else:
            parts.append(render_comparison(comparison, fmt))
            if by is not None:
                parts.append(render_breakdown(by, comparison, _agents(item)))
    if fmt == "json":
        text = json.dumps(
            {"format_version": FORMAT_VERSION, "kind": "costsim.compare", "scenarios": documents,
             "gate_failures": failures},
            indent=2,
        ) + "\n"  # fmt: skip
    else:
        text = "\n".join(parts)
    if output is not None:
        write_atomic(output, text)
    else:
        click.echo(text, nl=False)
    if failures:
        raise Findings("\n".join(failures))
