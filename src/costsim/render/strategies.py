"""``costsim strategies [NAME]``: every registered strategy, its parameters, types, defaults
and meanings, as text and JSON."""

from __future__ import annotations

import json
from typing import Any

from costsim.render.text import Column, markdown_table, shorten_right, wrap
from costsim.strategies.catalog import ParamInfo, StrategyInfo

__all__ = ["strategies_document", "strategies_markdown", "strategies_table"]

FORMAT_VERSION = 1

_USAGE = (
    "Use one with -s NAME:key=value,... (simulate), --costsim-strategies (pytest) or a scenario "
    "file; stack them with ' & '. Details: costsim strategies NAME."
)


def _default(param: ParamInfo) -> str:
    if param.required:
        return "(required)"
    return json.dumps(param.default, separators=(",", ":"))


def _overview(infos: list[StrategyInfo], width: int) -> list[str]:
    """One block per strategy: its name and what it does, then its parameters."""
    pad = max(len(info.name) for info in infos) + 2
    lines = [f"{len(infos)} strategies:", ""]
    for info in infos:
        lines += wrap(info.name.ljust(pad) + info.summary, width, subsequent=" " * pad)
        names = ", ".join(p.name for p in info.params) or "(no parameters)"
        lines += wrap(names, width, indent=" " * pad, subsequent=" " * pad)
    return [*lines, "", *wrap(_USAGE, width, subsequent="")]


def _detail(info: StrategyInfo, width: int) -> list[str]:
    lines = wrap(f"{info.name}: {info.summary}", width)
    if not info.params:
        return [*lines, "  (no parameters)"]
    for param in info.params:
        default = shorten_right(_default(param), max(width - 8, 20))
        lines += wrap(
            f"{param.name} ({param.type}) = {default}", width, indent="  ", subsequent="      "
        )
        if param.meaning:
            lines += wrap(param.meaning, width, indent="      ")
    return lines


def strategies_table(infos: list[StrategyInfo], *, width: int) -> str:
    if len(infos) == 1:
        usage = (
            f"Use: costsim simulate PATH -s '{infos[0].name}:key=value,...' (nested keys as "
            "tiers.light=VALUE, lists as a+b, text holding , & + = : in double quotes)."
        )
        lines = [*_detail(infos[0], width), "", *wrap(usage, width, subsequent="")]
    else:
        lines = _overview(infos, width)
    return "\n".join(lines) + "\n"


def strategies_markdown(infos: list[StrategyInfo]) -> str:
    lines = ["## costsim strategies"]
    columns = [
        Column("parameter", align="left"),
        Column("type", align="left"),
        Column("default", align="left"),
        Column("meaning", align="left"),
    ]
    for info in infos:
        lines += ["", f"### `{info.name}`", "", info.summary, ""]
        rows = [[f"`{p.name}`", p.type, f"`{_default(p)}`", p.meaning] for p in info.params]
        lines += markdown_table(columns, rows) if rows else ["(no parameters)"]
    return "\n".join(lines) + "\n"


def strategies_document(infos: list[StrategyInfo]) -> dict[str, Any]:
    return {
        "format_version": FORMAT_VERSION,
        "kind": "costsim.strategies",
        "strategies": [
            {
                "name": info.name,
                "summary": info.summary,
                "parameters": [
                    {
                        "name": p.name,
                        "type": p.type,
                        "default": p.default,
                        "required": p.required,
                        "meaning": p.meaning,
                    }
                    for p in info.params
                ],
                "schema": info.schema,
            }
            for info in infos
        ],
    }
