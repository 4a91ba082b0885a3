"""``costsim compare``: every scenario's variants against the recorded baseline."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from costsim.cli._common import (
    Findings,
    emit,
    format_option,
    handle_errors,
    lenient_option,
    output_option,
    warn_skipped,
)

BREAKDOWNS = ("model", "agent", "tool")


@contextmanager
def _progress(total: int, label: str) -> Iterator[Callable[[Any], None]]:
    """A progress bar on stderr when it is a terminal; silent otherwise."""
    if not sys.stderr.isatty():
        yield lambda _variant: None
        return
    with click.progressbar(length=total, label=label, file=sys.stderr) as bar:
        yield lambda _variant: bar.update(1)


@click.command()
@click.argument("scenarios", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--variant", "only", multiple=True, metavar="NAME", help="Only these variants (repeatable)."
)
@click.option(
    "--by", type=click.Choice(BREAKDOWNS), help="Add a breakdown per agent, tool or model."
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
    from costsim import api
    from costsim.errors import ConfigError
    from costsim.render.report import FORMAT_VERSION

    files = api.find_scenarios(list(scenarios))
    names = {path: api.scenario_variants(path) for path in files}
    known = sorted({name for found in names.values() for name in found})
    missing = [name for name in only if name not in known]
    if missing:
        raise ConfigError(f"no variant named {missing[0]!r}; variants: {', '.join(known)}")
    parts: list[str] = []
    results: list[api.Comparison] = []
    documents: list[dict[str, Any]] = []
    failures: list[str] = []
    for path in files:
        chosen = [name for name in names[path] if name in only] if only else None
        with _progress(len(names[path] if chosen is None else chosen), path.stem) as tick:
            result = api.compare(path, variants=chosen, lenient=lenient, on_variant=tick)
        warn_skipped(result, f"{path}: ")
        found = result.gate(fail_over=fail_over)
        failures.extend(f"{result.name}: {failure}" for failure in found)
        if fmt == "json":
            documents.append({**result.to_json(), "gate_failures": found})
        elif fmt == "html":
            results.append(result)
        else:
            parts.append(result.render(fmt))
            if by is not None:
                parts.append(result.breakdown(by).render("table"))
    if fmt == "json":
        document = {
            "format_version": FORMAT_VERSION,
            "kind": "costsim.compare",
            "scenarios": documents,
            "gate_failures": failures,
        }
        text = json.dumps(document, indent=2) + "\n"
    elif fmt == "html":
        text = api.Comparisons.of(results).render("html")
    else:
        text = "\n".join(parts)
    emit(text, output)
    if failures:
        raise Findings("\n".join(failures))
