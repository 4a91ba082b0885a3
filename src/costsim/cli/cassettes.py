"""``costsim cassettes list|check``: what a folder of recordings holds, and what is wrong in it."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import click
from tabulate import tabulate

from costsim.cassette import iter_cassette_paths, load_cassette
from costsim.checks import Finding, check_cassette, validate_rules
from costsim.cli._common import Findings, handle_errors, paths_argument
from costsim.config import secrets_ignore, tool_config
from costsim.errors import CostsimError
from costsim.normalise import normalise
from costsim.render import display_path
from costsim.secret_rules import Severity


@click.group()
def cassettes() -> None:
    """Inspect cassette files."""


@dataclass(frozen=True, slots=True)
class _Listing:
    path: Path
    first: datetime | None
    last: datetime | None
    calls: int
    providers: str
    models: str
    size: int
    error: str | None = None


def _listing(path: Path) -> _Listing:
    try:
        trace = normalise(load_cassette(path))
    except CostsimError as exc:
        return _Listing(path, None, None, 0, "", "", path.stat().st_size, error=exc.args[0])
    dates = [c.recorded_at for c in trace.calls if c.recorded_at is not None]
    return _Listing(
        path=path,
        first=min(dates, default=None),
        last=max(dates, default=None),
        calls=len(trace.calls),
        providers=",".join(sorted({c.provider for c in trace.calls})),
        models=",".join(sorted({c.priced_model for c in trace.calls if c.priced_model})),
        size=trace.size_bytes,
    )


_SORT_KEYS: dict[str, Callable[[_Listing], tuple[object, ...]]] = {
    "name": lambda item: (str(item.path),),
    "date": lambda item: (
        item.first is None,
        item.first.isoformat() if item.first else "",
        str(item.path),
    ),
    "calls": lambda item: (-item.calls, str(item.path)),
    "size": lambda item: (-item.size, str(item.path)),
}


def _date_range(item: _Listing) -> str:
    if item.first is None or item.last is None:
        return "-"
    first, last = item.first.date().isoformat(), item.last.date().isoformat()
    return first if first == last else f"{first}..{last}"


@cassettes.command("list")
@paths_argument
@click.option("--sort", type=click.Choice(list(_SORT_KEYS)), default="name", show_default=True)
@handle_errors
def list_cassettes(paths: tuple[Path, ...], sort: str) -> None:
    """One line per cassette: recorded dates, LLM calls, providers, models, size."""
    items = sorted((_listing(p) for p in iter_cassette_paths(list(paths))), key=_SORT_KEYS[sort])
    rows = [
        [
            display_path(item.path),
            _date_range(item),
            item.calls if item.error is None else "unreadable",
            item.providers,
            item.models,
            f"{item.size:,}",
        ]
        for item in items
    ]
    headers = ["cassette", "recorded", "llm calls", "providers", "models", "bytes"]
    click.echo(tabulate(rows, headers=headers, tablefmt="simple"))


def _check_format(findings: list[Finding], checked: int, hidden: dict[str, int]) -> str:
    document = {
        "format_version": 1,
        "kind": "costsim.cassettes-check",
        "checked": checked,
        "findings": [
            {
                "path": display_path(f.path),
                "interaction": f.interaction,
                "rule": f.rule,
                "severity": f.severity.value,
                "message": f.message,
            }
            for f in findings
        ],
        "hidden": hidden,
    }
    return json.dumps(document, indent=2) + "\n"


@cassettes.command("check")
@paths_argument
@click.option(
    "--ignore",
    "ignored",
    multiple=True,
    metavar="RULE",
    help="Do not report this rule (repeatable); also [tool.costsim] secrets.ignore.",
)
@click.option("--show-info", is_flag=True, help="Also list informational findings (cookies).")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="Output format.",
)
@handle_errors
def check_cassettes(
    paths: tuple[Path, ...], ignored: tuple[str, ...], show_info: bool, fmt: str
) -> None:
    """Report unreadable cassettes, calls without (valid) usage, LLM calls costsim cannot meter
    and credentials left in recordings, one line per finding with its rule and severity.

    Exit status 1 when an error or warning is found; informational findings (bot-management
    cookies) are hidden unless --show-info, and never fail the check."""
    config_path, _ = tool_config()
    skip = validate_rules(ignored, "--ignore") | validate_rules(
        secrets_ignore(), f"{config_path} [tool.costsim] secrets.ignore"
    )
    shown: list[Finding] = []
    hidden = {"info": 0, "ignored": 0}
    checked = 0
    for path in iter_cassette_paths(list(paths)):
        checked += 1
        for finding in check_cassette(path):
            if finding.rule in skip:
                hidden["ignored"] += 1
            elif finding.severity is Severity.INFO and not show_info:
                hidden["info"] += 1
            else:
                shown.append(finding)
    failing = sum(f.severity is not Severity.INFO for f in shown)
    if fmt == "json":
        click.echo(_check_format(shown, checked, hidden), nl=False)
    else:
        for finding in shown:
            click.echo(f"{display_path(finding.path)}: {finding.line()}")
    if failing:
        raise Findings(f"{failing} finding(s) in {checked} cassette(s){_hidden_text(hidden)}")
    if fmt != "json":
        click.echo(f"{checked} cassette(s) checked, nothing found{_hidden_text(hidden)}")


def _hidden_text(hidden: dict[str, int]) -> str:
    parts = []
    if hidden["info"]:
        parts.append(f"{hidden['info']} informational hidden (--show-info)")
    if hidden["ignored"]:
        parts.append(f"{hidden['ignored']} ignored")
    return f" ({'; '.join(parts)})" if parts else ""
