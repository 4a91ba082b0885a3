"""Run costsim's commands on one mutant and classify what happened.

Outcomes: ``ok`` (a report, or a clean refusal: exit 2 with one sentence), ``traceback``
(an exception other than a deliberate exit escaped a command, or a refusal was not one line),
``silently-wrong`` (a report whose totals differ from the unmutated file's, from what the
mutant legitimately says (tests/fuzz/oracle.py), with no warning, note, estimate or skip), and,
from the benchmark's supervisor, ``crash`` (the process died) and ``hang`` (over the timeout).
"""

from __future__ import annotations

import json
import traceback
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from costsim.cli import cli
from tests.fuzz.oracle import Expected, expected_totals

__all__ = ["COMMANDS", "Outcome", "check_mutant", "totals_of"]

COMMANDS: dict[str, list[str]] = {
    "report": ["report", "--format", "json"],
    "check": ["cassettes", "check", "--format", "json"],
    "simulate": ["simulate", "-s", "caching", "--format", "json"],
}

_KEYS = ("llm_calls", "calls_with_usage", "prompt_tokens", "output_tokens")
MAX_PLAUSIBLE_COST = Decimal(100_000)


@dataclass
class Outcome:
    status: str
    command: str = ""
    detail: str = ""
    flagged: bool = False
    changed: bool = False
    extra: dict[str, Any] = field(default_factory=dict)


def totals_of(document: dict[str, Any]) -> tuple[int, ...]:
    return tuple(int(document["totals"][key]) for key in _KEYS)


def _flagged(document: dict[str, Any]) -> bool:
    totals = document["totals"]
    return bool(
        document.get("skipped")
        or document.get("notes")
        or totals["estimated_calls"]
        or totals["unmetered_calls"]
    )


def _run(command: str, path: Path) -> tuple[Outcome | None, Any]:
    result = CliRunner().invoke(cli, [*COMMANDS[command], str(path)])
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        info = result.exc_info
        detail = "".join(traceback.format_exception(*info)) if info else repr(result.exception)
        return Outcome("traceback", command, detail[-3000:]), None
    if result.exit_code == 2:
        lines = result.stderr.strip().splitlines()
        if len(lines) != 1 or not lines[0].startswith("Error:") or path.name not in lines[0]:
            return Outcome("traceback", command, f"refusal is not one sentence: {lines!r}"), None
        return None, "refused"
    if result.exit_code not in (0, 1):
        return Outcome("traceback", command, f"exit {result.exit_code}: {result.output}"), None
    try:
        return None, json.loads(result.stdout)
    except ValueError:
        return Outcome("traceback", command, f"not JSON: {result.stdout[:300]!r}"), None


def check_mutant(
    path: Path, baseline: tuple[int, ...] | None, commands: tuple[str, ...] = tuple(COMMANDS)
) -> Outcome:
    """Run ``commands`` on the mutant at ``path``; ``baseline`` is the unmutated totals."""
    outcome = Outcome("ok")
    for command in commands:
        failed, document = _run(command, path)
        if failed is not None:
            return failed
        if command != "report" or document == "refused":
            continue
        got = totals_of(document)
        outcome.flagged = _flagged(document)
        outcome.changed = got != baseline
        cost = document["totals"]["cost_usd"]
        if cost is not None and Decimal(cost) > MAX_PLAUSIBLE_COST and not outcome.flagged:
            return Outcome("silently-wrong", command, f"cost ${cost} with no flag")
        if outcome.changed and not outcome.flagged:
            expected = expected_totals(path)
            if expected is None or got != _as_tuple(expected):
                return Outcome(
                    "silently-wrong",
                    command,
                    f"totals {got}, unmutated {baseline}, the mutant says {expected}",
                )
    return outcome


def _as_tuple(expected: Expected) -> tuple[int, ...]:
    return (
        expected.calls,
        expected.calls_with_usage,
        expected.prompt_tokens,
        expected.output_tokens,
    )


def baseline_totals(path: Path) -> tuple[int, ...]:
    """The unmutated file's report totals."""
    result = CliRunner().invoke(cli, [*COMMANDS["report"], str(path)])
    assert result.exit_code == 0, result.output
    return totals_of(json.loads(result.stdout))
