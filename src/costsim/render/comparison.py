"""Render a :class:`~costsim.comparison.Comparison` as a table, JSON or Markdown."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from tabulate import tabulate

from costsim.analysis.comparison import Comparison, VariantSummary, delta_pct
from costsim.pricing.ledger import Totals
from costsim.pricing.money import money
from costsim.render.report import FORMAT_VERSION, totals_json
from costsim.render.text import display_path, percent

__all__ = ["COMPARISON_RENDERERS", "comparison_json", "render_comparison"]


def _delta_json(variant: Totals, baseline: Totals) -> dict[str, Any]:
    cost_new, cost_old = variant.cost_usd, baseline.cost_usd
    cost_delta = None if cost_new is None or cost_old is None else cost_new - cost_old
    return {
        "prompt_tokens": variant.prompt_tokens - baseline.prompt_tokens,
        "prompt_tokens_pct": _round(delta_pct(variant.prompt_tokens, baseline.prompt_tokens)),
        "output_tokens": variant.output_tokens - baseline.output_tokens,
        "output_tokens_pct": _round(delta_pct(variant.output_tokens, baseline.output_tokens)),
        "cost_usd": None if cost_delta is None else str(cost_delta),
        "cost_pct": _round(delta_pct(cost_new, cost_old)),
    }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


def _variant_json(summary: VariantSummary, comparison: Comparison) -> dict[str, Any]:
    kinds = Counter(event.kind for event in summary.events)
    return {
        "name": summary.variant.name,
        "strategies": [step.describe() for step in summary.variant.steps],
        "totals": totals_json(summary.totals),
        "delta": _delta_json(summary.totals, comparison.baseline),
        "divergences": summary.divergences,
        "events_by_kind": dict(sorted(kinds.items())),
        "error_band": {
            "estimated_calls": summary.band.estimated_calls,
            "p90_ape": _round(summary.band.p90_ape),
            "prompt_tokens": summary.band.tokens,
        },
        "attribution": {k: (None if v is None else str(v)) for k, v in summary.attribution.items()},
        "attribution_interaction": None
        if summary.interaction is None
        else str(summary.interaction),
        "events": [
            {
                "strategy": e.strategy,
                "kind": e.kind,
                "message": e.message,
                "path": display_path(e.provenance.path) if e.provenance else None,
                "interaction": e.provenance.index if e.provenance else None,
            }
            for e in summary.events
        ],
        "cassettes": [
            {
                "path": display_path(path),
                "baseline": totals_json(comparison.baseline_per_cassette.get(path, Totals())),
                "variant": totals_json(totals),
            }
            for path, totals in summary.per_cassette.items()
        ],
    }


def comparison_json(comparison: Comparison, *, single: bool = False) -> dict[str, Any]:
    document: dict[str, Any] = {
        "format_version": FORMAT_VERSION,
        "kind": "costsim.simulation" if single else "costsim.comparison",
        "title": comparison.title,
        "as_of": comparison.as_of.isoformat() if comparison.as_of else None,
        "baseline": totals_json(comparison.baseline),
    }
    variants = [_variant_json(v, comparison) for v in comparison.variants]
    if single and variants:
        document["variant"] = variants[0]["totals"]
        document.update({k: v for k, v in variants[0].items() if k != "totals"})
    else:
        document["variants"] = variants
    return document


def _cost_cell(totals: Totals) -> str:
    return money(totals.cost_usd) if totals.cost_usd is not None else "unknown"


def _signed(value: int) -> str:
    return f"{value:+,}"


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:+.1f}%"


def _delta_cell(new: int, old: int) -> str:
    return f"{_signed(new - old)} ({_pct(delta_pct(new, old))})"


def _cost_delta_cell(totals: Totals, base: Totals) -> str:
    if totals.cost_usd is None or base.cost_usd is None:
        return "-"
    delta = totals.cost_usd - base.cost_usd
    sign = "+" if delta >= 0 else "-"
    return f"{sign}{money(abs(delta))} ({_pct(delta_pct(totals.cost_usd, base.cost_usd))})"


def _rows(comparison: Comparison) -> list[list[str]]:
    base = comparison.baseline
    rows = [
        [
            "baseline (recorded)", f"{base.llm_calls:,}", f"{base.prompt_tokens:,}",
            f"{base.uncached_input_tokens:,}", f"{base.cache_read_tokens:,}",
            f"{base.cache_write_tokens:,}", f"{base.output_tokens:,}", percent(base.cache_hit_rate),
            _cost_cell(base), "", "", "", "",
        ]
    ]  # fmt: skip
    for summary in comparison.variants:
        t = summary.totals
        band = summary.band
        rows.append(
            [
                summary.variant.name, f"{t.llm_calls:,}", f"{t.prompt_tokens:,}",
                f"{t.uncached_input_tokens:,}", f"{t.cache_read_tokens:,}",
                f"{t.cache_write_tokens:,}", f"{t.output_tokens:,}", percent(t.cache_hit_rate),
                _cost_cell(t),
                _delta_cell(t.prompt_tokens, base.prompt_tokens),
                _cost_delta_cell(t, base),
                str(summary.divergences),
                f"±{band.tokens:,} tok" if band.estimated_calls else "exact",
            ]
        )  # fmt: skip
    return rows


_HEADERS = [
    "variant", "calls", "prompt", "uncached", "cache read", "cache write", "output",
    "hit rate", "cost", "Δ prompt", "Δ cost", "diverge", "error band",
]  # fmt: skip


def _saving(name: str, value: Decimal | None) -> str:
    if value is None:
        return f"{name}: unknown"
    if value < 0:
        return f"{name} adds {money(-value)}"
    return f"{name} saves {money(value)}"


def _notes(comparison: Comparison) -> list[str]:
    notes = []
    for summary in comparison.variants:
        notes.append(f"{summary.variant.name}: {summary.variant.describe()}")
        if summary.attribution:
            parts = [_saving(name, value) for name, value in summary.attribution.items()]
            if summary.interaction is not None:
                parts.append(_saving("interaction", summary.interaction))
            notes.append("  attribution (leave-one-out): " + "; ".join(parts))
        kinds = Counter(event.kind for event in summary.events)
        if kinds:
            notes.append(
                "  events: " + ", ".join(f"{n} {kind}" for kind, n in sorted(kinds.items()))
            )
        for event in [e for e in summary.events if e.kind == "divergence"][:5]:
            where = (
                f"{display_path(event.provenance.path)}#{event.provenance.index}"
                if event.provenance
                else ""
            )
            notes.append(f"  divergence ({event.strategy}) {where}: {event.message}")
        if summary.band.estimated_calls:
            notes.append(
                f"  {summary.band.estimated_calls} changed call(s) metered by calibrated estimate; "
                f"p90 error {summary.band.p90_ape or 0:.1f}% of the change"
            )
    if comparison.as_of:
        notes.append(f"Prices as of {comparison.as_of.date().isoformat()}.")
    return notes


def render_table(comparison: Comparison) -> str:
    table = tabulate(_rows(comparison), headers=_HEADERS, tablefmt="simple", disable_numparse=True)
    head = [f"== {comparison.title} ==", comparison.description] if comparison.title else []
    return "\n".join([*filter(None, head), table, *_notes(comparison)]) + "\n"


def render_markdown(comparison: Comparison) -> str:
    table = tabulate(_rows(comparison), headers=_HEADERS, tablefmt="github", disable_numparse=True)
    title = f"## {comparison.title or 'costsim comparison'}\n\n"
    description = f"{comparison.description}\n\n" if comparison.description else ""
    notes = "\n".join(f"- {note.strip()}" for note in _notes(comparison))
    return title + description + table + "\n\n" + notes + "\n"


def render_json(comparison: Comparison) -> str:
    return json.dumps(comparison_json(comparison), indent=2) + "\n"


COMPARISON_RENDERERS: dict[str, Callable[[Comparison], str]] = {
    "table": render_table,
    "json": render_json,
    "markdown": render_markdown,
}


def render_comparison(comparison: Comparison, fmt: str) -> str:
    return COMPARISON_RENDERERS[fmt](comparison)
