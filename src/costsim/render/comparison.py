"""Render a :class:`~costsim.comparison.Comparison` as a table, JSON or Markdown."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from tabulate import tabulate

from costsim.analysis.bands import Band
from costsim.analysis.comparison import Comparison, VariantSummary, delta_pct
from costsim.pricing.ledger import Totals
from costsim.pricing.money import money
from costsim.render.report import FORMAT_VERSION, totals_json
from costsim.render.text import display_path, percent

__all__ = ["COMPARISON_RENDERERS", "comparison_json", "render_comparison"]


def _amount(value: Decimal | None) -> str | None:
    return None if value is None else str(value)


def band_json(band: Band, name: str = "cost_usd") -> dict[str, Any]:
    """``cost_usd`` with ``cost_usd_low`` / ``cost_usd_high``: its p90 band in dollars."""
    return {
        name: _amount(band.value),
        f"{name}_low": _amount(band.low),
        f"{name}_high": _amount(band.high),
        f"{name}_exact": band.exact,
    }


def _delta_json(variant: Totals, baseline: Totals, band: Band) -> dict[str, Any]:
    cost_new, cost_old = variant.cost_usd, baseline.cost_usd
    return {
        "prompt_tokens": variant.prompt_tokens - baseline.prompt_tokens,
        "prompt_tokens_pct": _round(delta_pct(variant.prompt_tokens, baseline.prompt_tokens)),
        "output_tokens": variant.output_tokens - baseline.output_tokens,
        "output_tokens_pct": _round(delta_pct(variant.output_tokens, baseline.output_tokens)),
        **band_json(band),
        "cost_pct": _round(delta_pct(cost_new, cost_old)),
    }


def _basis(summary: VariantSummary) -> str:
    if not summary.resimulated_calls:
        return "recorded"
    return f"recorded, {summary.resimulated_calls} call(s) re-simulated the same way"


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


def _variant_json(summary: VariantSummary, comparison: Comparison) -> dict[str, Any]:
    kinds = Counter(event.kind for event in summary.events)
    return {
        "name": summary.variant.name,
        "strategies": [step.describe() for step in summary.variant.steps],
        "totals": totals_json(summary.totals),
        "cost_band": band_json(summary.cost),
        "baseline_basis": _basis(summary),
        "like_for_like_baseline": totals_json(summary.baseline),
        "delta": _delta_json(summary.totals, summary.baseline, summary.delta),
        "divergences": summary.divergences,
        "events_by_kind": dict(sorted(kinds.items())),
        "attribution": {k: (None if v is None else str(v)) for k, v in summary.attribution.items()},
        "attribution_bands": {
            k: band_json(band, "saving_usd") for k, band in summary.attribution_bands.items()
        },
        "breakpoints": [
            {
                "position": row.position,
                "writes": row.writes,
                "tokens_written": row.tokens_written,
                "tokens_written_5m": row.tokens_written_5m,
                "tokens_written_1h": row.tokens_written_1h,
                "reads": row.reads,
                "tokens_read": row.tokens_read,
                "saved_usd": _amount(row.saved_usd),
                "premium_usd": _amount(row.premium_usd),
                "net_usd": _amount(row.net_usd),
            }
            for row in summary.breakpoints
        ],
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
                "baseline": totals_json(summary.baseline_per_cassette.get(path, Totals())),
                "variant": totals_json(totals),
                "delta": band_json(summary.cassette_delta(path)),
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


def _band_cell(band: Band) -> str:
    return "exact" if band.exact else f"±{money(band.half)}"


def band_text(band: Band) -> str:
    """``-$0.0123 (-$0.0150 to -$0.0096, p90)``, or ``+$0.000000 (exact)``."""
    if band.value is None or band.low is None or band.high is None:
        return "unknown"
    if band.exact:
        return f"{_signed_money(band.value)} (exact)"
    low, high = _signed_money(band.low), _signed_money(band.high)
    return f"{_signed_money(band.value)} ({low} to {high}, p90)"


def _signed_money(value: Decimal) -> str:
    return f"{'+' if value >= 0 else '-'}{money(abs(value))}"


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
        like = summary.baseline
        rows.append(
            [
                summary.variant.name, f"{t.llm_calls:,}", f"{t.prompt_tokens:,}",
                f"{t.uncached_input_tokens:,}", f"{t.cache_read_tokens:,}",
                f"{t.cache_write_tokens:,}", f"{t.output_tokens:,}", percent(t.cache_hit_rate),
                _cost_cell(t),
                _delta_cell(t.prompt_tokens, like.prompt_tokens),
                _cost_delta_cell(t, like),
                str(summary.divergences),
                _band_cell(summary.delta),
            ]
        )  # fmt: skip
    return rows


_HEADERS = [
    "variant", "calls", "prompt", "uncached", "cache read", "cache write", "output",
    "hit rate", "cost", "Δ prompt", "Δ cost", "diverge", "Δ cost p90",
]  # fmt: skip


def _saving(name: str, value: Decimal | None, band: Band | None = None) -> str:
    if value is None:
        return f"{name}: unknown"
    spread = ""
    if band is not None and not band.exact and band.low is not None and band.high is not None:
        low, high = (-band.high, -band.low) if value < 0 else (band.low, band.high)
        spread = f" ({_signed_money(low)} to {_signed_money(high)}, p90)"
    if value < 0:
        return f"{name} adds {money(-value)}{spread}"
    return f"{name} saves {money(value)}{spread}"


def _notes(comparison: Comparison) -> list[str]:
    notes = []
    for summary in comparison.variants:
        notes.append(f"{summary.variant.name}: {summary.variant.describe()}")
        delta = summary.delta
        if delta.value is not None:
            notes.append(f"  Δ cost {band_text(delta)} against {_basis(summary)}")
        simulated, recorded = summary.resimulation_gap
        if summary.resimulated_calls and simulated != recorded:
            notes.append(
                f"  like for like: re-simulated as recorded, those {summary.resimulated_calls} "
                f"call(s) cost {money(simulated)} where the recording billed {money(recorded)}; "
                "that gap is the simulator's, not the strategy's"
            )
        if summary.attribution:
            parts = [
                _saving(name, value, summary.attribution_bands.get(name))
                for name, value in summary.attribution.items()
            ]
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
    if comparison.as_of:
        notes.append(f"Prices as of {comparison.as_of.date().isoformat()}.")
    return notes


def economics_lines(summary: VariantSummary) -> list[str]:
    """Per-breakpoint economics of a variant (shown with ``-v``)."""
    if not summary.breakpoints:
        return []
    rows = [
        [
            row.position,
            f"{row.writes:,}",
            f"{row.tokens_written_5m:,}",
            f"{row.tokens_written_1h:,}",
            f"{row.reads:,}",
            f"{row.tokens_read:,}",
            money(row.net_usd)
            if row.net_usd is None or row.net_usd >= 0
            else f"-{money(-row.net_usd)}",
        ]
        for row in summary.breakpoints
    ]
    headers = ["breakpoint", "writes", "written 5m", "written 1h", "reads", "read", "net"]
    table = tabulate(rows, headers=headers, disable_numparse=True)
    return [f"{summary.variant.name}: per-breakpoint economics (simulated calls)", table]


def render_table(comparison: Comparison, verbose: bool = False) -> str:
    table = tabulate(_rows(comparison), headers=_HEADERS, tablefmt="simple", disable_numparse=True)
    head = [f"== {comparison.title} ==", comparison.description] if comparison.title else []
    extra = [line for v in comparison.variants for line in economics_lines(v)] if verbose else []
    return "\n".join([*filter(None, head), table, *_notes(comparison), *extra]) + "\n"


def render_markdown(comparison: Comparison, verbose: bool = False) -> str:
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


def render_comparison(comparison: Comparison, fmt: str, *, verbose: bool = False) -> str:
    if fmt == "table":
        return render_table(comparison, verbose)
    return COMPARISON_RENDERERS[fmt](comparison)
