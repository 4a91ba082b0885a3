"""``cassettes list`` and ``cassettes check`` as tables and JSON."""

from __future__ import annotations

from typing import Any

from tabulate import tabulate

from costsim.analysis.cassettes import CassetteCheck, CassetteListing
from costsim.render.text import display_path

__all__ = ["check_document", "check_table", "listing_document", "listing_table"]

FORMAT_VERSION = 1


def _date_range(item: CassetteListing) -> str:
    if item.first is None or item.last is None:
        return "-"
    first, last = item.first.date().isoformat(), item.last.date().isoformat()
    return first if first == last else f"{first}..{last}"


def listing_table(items: list[CassetteListing]) -> str:
    rows = [
        [
            display_path(item.path),
            _date_range(item),
            item.calls if item.error is None else "unreadable",
            ",".join(item.providers),
            ",".join(item.models),
            f"{item.size:,}",
        ]
        for item in items
    ]
    headers = ["cassette", "recorded", "llm calls", "providers", "models", "bytes"]
    return tabulate(rows, headers=headers, tablefmt="simple") + "\n"


def listing_document(items: list[CassetteListing]) -> dict[str, Any]:
    return {
        "format_version": FORMAT_VERSION,
        "kind": "costsim.cassettes",
        "cassettes": [
            {
                "path": display_path(item.path),
                "first_recorded": item.first.isoformat() if item.first else None,
                "last_recorded": item.last.isoformat() if item.last else None,
                "llm_calls": item.calls,
                "providers": list(item.providers),
                "models": list(item.models),
                "size_bytes": item.size,
                "error": item.error,
            }
            for item in items
        ],
    }


def _hidden(check: CassetteCheck) -> str:
    parts = []
    if check.hidden_info:
        parts.append(f"{check.hidden_info} informational hidden (--show-info)")
    if check.ignored:
        parts.append(f"{check.ignored} ignored")
    return f" ({'; '.join(parts)})" if parts else ""


def check_table(check: CassetteCheck) -> str:
    """The answer first (how many findings), then one line per finding."""
    if not check.findings:
        return f"{check.checked} cassette(s) checked, nothing found{_hidden(check)}\n"
    lines = [f"{len(check.findings)} finding(s) in {check.checked} cassette(s){_hidden(check)}"]
    lines += [f"{display_path(f.path)}: {f.line()}" for f in check.findings]
    return "\n".join(lines) + "\n"


def check_document(check: CassetteCheck) -> dict[str, Any]:
    return {
        "format_version": FORMAT_VERSION,
        "kind": "costsim.cassettes-check",
        "checked": check.checked,
        "findings": [
            {
                "path": display_path(f.path),
                "interaction": f.interaction,
                "rule": f.rule,
                "severity": f.severity.value,
                "message": f.message,
            }
            for f in check.findings
        ],
        "hidden": {"info": check.hidden_info, "ignored": check.ignored},
    }
