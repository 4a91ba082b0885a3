"""A comparison (``compare``, ``simulate``) as JSON; its text is in
:mod:`costsim.render.comparison_text`."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

from costsim.analysis.bands import Band
from costsim.analysis.comparison import Comparison, VariantSummary, delta_pct
from costsim.pricing.ledger import Totals
from costsim.pricing.money import amount_text
from costsim.render.comparison_text import best_saving
from costsim.render.json_stream import Deferred
from costsim.render.report import FORMAT_VERSION, totals_json, unpriced_json
from costsim.render.text import display_path, plural

__all__ = ["comparison_json"]


def band_json(band: Band, name: str = "cost_usd") -> dict[str, Any]:
    """``cost_usd`` with ``cost_usd_low`` / ``cost_usd_high``: its p90 band in dollars."""
    return {
        name: amount_text(band.value),
        f"{name}_low": amount_text(band.low),
        f"{name}_high": amount_text(band.high),
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
    return (
        f"recorded; the variant bills {plural(summary.resimulated_calls, 'recorded call')} "
        "differently "
        "(those it keeps, as recorded plus the simulated change)"
    )


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


def _variant_json(summary: VariantSummary, comparison: Comparison) -> dict[str, Any]:
    kinds = Counter(event.kind for event in summary.events)
    return {
        "name": summary.variant.name,
        "label": summary.variant.describe(),
        "strategies": [step.describe() for step in summary.variant.steps],
        "totals": totals_json(summary.totals),
        "cost_band": band_json(summary.cost),
        "baseline_basis": _basis(summary),
        "like_for_like_baseline": totals_json(summary.baseline),
        "delta": _delta_json(summary.totals, summary.baseline, summary.delta),
        "divergences": summary.divergences,
        "events_by_kind": dict(sorted(kinds.items())),
        "unpriced": unpriced_json(summary.totals),
        "attribution": {k: amount_text(v) for k, v in summary.attribution.items()},
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
                "saved_usd": amount_text(row.saved_usd),
                "premium_usd": amount_text(row.premium_usd),
                "net_usd": amount_text(row.net_usd),
            }
            for row in summary.breakpoints
        ],
        "attribution_interaction": amount_text(summary.interaction),
        "attribution_interaction_band": (
            None
            if summary.interaction_band is None
            else band_json(summary.interaction_band, "saving_usd")
        ),
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
        "cassettes": Deferred(lambda: _cassettes_json(summary, comparison)),
    }


def _cassettes_json(summary: VariantSummary, comparison: Comparison) -> Iterator[dict[str, Any]]:
    """The variant's entry for each cassette, made as it is written: over many cassettes
    these are most of the document (see :mod:`costsim.render.json_stream`)."""
    for path, totals in summary.per_cassette.items():
        yield {
            "path": display_path(path),
            "baseline": totals_json(summary.baseline_per_cassette.get(path, Totals())),
            "recorded": totals_json(comparison.baseline_per_cassette.get(path, Totals())),
            "variant": totals_json(totals),
            "delta": band_json(summary.cassette_delta(path)),
        }


def _cheapest_json(comparison: Comparison) -> dict[str, Any] | None:
    best = best_saving(comparison)
    if best is None:
        return None
    return {
        "variant": best.summary.variant.name,
        "saving_usd": amount_text(best.saving),
        "saving_pct": _round(best.saving_pct),
    }


def comparison_json(comparison: Comparison, *, single: bool = False) -> dict[str, Any]:
    document: dict[str, Any] = {
        "format_version": FORMAT_VERSION,
        "kind": "costsim.simulation" if single else "costsim.comparison",
        "title": comparison.title,
        "as_of": comparison.as_of.isoformat() if comparison.as_of else None,
        "warm_starts": comparison.warm_starts,
        "baseline": totals_json(comparison.baseline),
        "baseline_unpriced": unpriced_json(comparison.baseline),
        "cheapest": _cheapest_json(comparison),
    }
    variants = [_variant_json(v, comparison) for v in comparison.variants]
    if single and variants:
        document["variant"] = variants[0]["totals"]
        document.update({k: v for k, v in variants[0].items() if k != "totals"})
    else:
        document["variants"] = variants
    return document
