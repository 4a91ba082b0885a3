"""``cassettes list`` and ``cassettes check`` as tables and JSON."""

from __future__ import annotations

from typing import Any

from costsim.analysis.cassettes import CassetteCheck, CassetteListing
from costsim.pricing.names import model_label
from costsim.render.text import (
    ELLIPSIS,
    Column,
    display_path,
    extra_bytes,
    markdown_table,
    plural,
    shorten_left,
    table,
    wrap,
)
from costsim.render.visible import visible

__all__ = [
    "check_document",
    "check_markdown",
    "check_table",
    "listing_document",
    "listing_markdown",
    "listing_table",
]

FORMAT_VERSION = 1


def _date_range(item: CassetteListing, wide: bool = True) -> str:
    """The recorded day, or the first and last (``+`` marks more days unless ``wide``)."""
    if item.first is None or item.last is None:
        return "-"
    first, last = item.first.date().isoformat(), item.last.date().isoformat()
    if first == last:
        return first
    return f"{first}..{last}" if wide else f"{first}+"


def _listing_columns(wide: bool) -> list[Column]:
    return [
        Column("cassette", align="left", cut="left", min_width=24),
        Column("recorded", align="left", drop=1),
        Column("calls"),
        *([Column("providers", align="left")] if wide else []),
        Column("models", align="left", cut="right", min_width=18, give=2),
        Column("bytes", drop=2),
    ]


def _listing_rows(items: list[CassetteListing], wide: bool) -> list[list[str]]:
    rows = []
    for item in items:
        row = [
            display_path(item.path),
            _date_range(item, wide),
            f"{item.calls:,}" if item.error is None else "unreadable",
        ]
        if wide:
            row.append(",".join(item.providers))
        rows.append([*row, _models(item), f"{item.size:,}"])
    return rows


def _models(item: CassetteListing) -> str:
    """The cassette's models as its costs name them: without a date stamp that genai-prices
    prices the same (``claude-sonnet-4-5``, not a cut ``claude-sonnet-4…``; JSON keeps each
    name whole)."""
    labels: dict[str, None] = {}
    for model in item.models:
        named = (model_label(model, provider, None) for provider in item.providers)
        labels[next((label for label in named if label != model), model)] = None
    return ",".join(labels)


def _listing_answer(items: list[CassetteListing]) -> str:
    if not items:
        return "No cassettes."
    calls = sum(item.calls for item in items)
    unreadable = sum(item.error is not None for item in items)
    extra = f", {unreadable:,} unreadable" if unreadable else ""
    return f"{plural(len(items), 'cassette')}, {plural(calls, 'LLM call')}{extra}."


def listing_table(items: list[CassetteListing], *, width: int, wide: bool = False) -> str:
    """The answer (how many cassettes and calls), then one row per cassette; ``wide`` adds
    providers and both recorded days."""
    lines = [_listing_answer(items)]
    if items:
        lines += ["", *table(_listing_columns(wide), _listing_rows(items, wide), width=width)]
    broken = [item for item in items if item.error is not None]
    if broken:
        lines.append("")
        for item in broken:  # why, as report and check say it
            lines += wrap(f"unreadable: {item.error}", width, subsequent="  ")
    return "\n".join(lines) + "\n"


def listing_markdown(items: list[CassetteListing]) -> str:
    lines = ["## costsim cassettes", "", _listing_answer(items), ""]
    if items:
        lines += markdown_table(_listing_columns(True), _listing_rows(items, True))
    return "\n".join(lines) + "\n"


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


def _check_answer(check: CassetteCheck) -> str:
    if not check.findings:
        return f"{plural(check.checked, 'cassette')} checked, nothing found{_hidden(check)}"
    files = len({finding.path for finding in check.findings})
    return (
        f"{plural(len(check.findings), 'finding')} in {files} of "
        f"{plural(check.checked, 'cassette')} checked"
        f"{_hidden(check)}"
    )


_PATH_ROOM = 24
"""The fewest characters of a file's path worth a finding's line: below, it has its own."""


def _path_in(path: str, room: int) -> str:
    """``path`` cut from the left to ``room`` columns, and bytes but for an ellipsis's two
    (a wide letter of a file's name takes two columns and three bytes)."""
    size = room
    cut = shorten_left(path, size)
    while size > 1 and len(cut.encode("utf-8", "surrogatepass")) - extra_bytes(ELLIPSIS) > room:
        size -= 1
        cut = shorten_left(path, size)
    return cut


def check_table(check: CassetteCheck, *, width: int) -> str:
    """The answer first (how many findings), then each finding: its file (shortened from the
    left), interaction, severity, rule and message, wrapped to the width."""
    lines = wrap(_check_answer(check), width, subsequent="  ")
    for f in check.findings:
        where = f"interaction {f.interaction}: " if f.interaction is not None else ""
        head = f"{where}[{f.severity}] {f.rule}"
        room = width - len(head) - 5
        if room < _PATH_ROOM:  # a narrow terminal: the file on a line of its own
            path = shorten_left(visible(display_path(f.path)), width - 3)  # "…" is 3 bytes
            lines.append(f"{path}:")
            lines += wrap(f"{head}:", width, indent="  ", subsequent="  ")
            lines += wrap(f.message, width, indent="    ", subsequent="    ")
            continue
        path = _path_in(visible(display_path(f.path)), room)
        line = visible(f"{path}: {head}: {f.message}")
        if len(line) + extra_bytes(line) <= width:
            lines.append(line)
        else:
            lines += [f"{path}: {head}:", *wrap(f.message, width, indent="    ", subsequent="    ")]
    return "\n".join(lines) + "\n"


_FINDINGS = [
    Column("cassette", align="left"),
    Column("interaction"),
    Column("severity", align="left"),
    Column("rule", align="left"),
    Column("message", align="left"),
]


def check_markdown(check: CassetteCheck) -> str:
    lines = ["## costsim cassettes check", "", _check_answer(check)]
    if check.findings:
        rows = [
            [
                display_path(f.path),
                "" if f.interaction is None else str(f.interaction),
                f.severity.value,
                f.rule,
                f.message,
            ]
            for f in check.findings
        ]
        lines += ["", *markdown_table(_FINDINGS, rows)]
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
