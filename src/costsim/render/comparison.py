"""A comparison (``compare``, ``simulate``) as JSON; its text is in
:mod:`costsim.render.comparison_text`."""

from __future__ import annotations

from collections import Counter
from typing import Any

from costsim.analysis.comparison import Comparison, VariantSummary, delta_pct
from costsim.pricing.ledger import Totals
from costsim.render.comparison_text import cheapest
from costsim.render.report import FORMAT_VERSION, totals_json, unpriced_json
from costsim.render.text import display_path

__all__ = ["comparison_json"]


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
        "label": summary.variant.describe(),
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
        "unpriced": unpriced_json(summary.totals),
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


def _cheapest_json(comparison: Comparison) -> dict[str, Any] | None:
    best = cheapest(comparison)
    if best is None:
        return None
    return {
        "variant": best.summary.variant.name,
        "saving_usd": str(best.saving),
        "saving_pct": _round(best.saving_pct),
    }


def comparison_json(comparison: Comparison, *, single: bool = False) -> dict[str, Any]:
    document: dict[str, Any] = {
        "format_version": FORMAT_VERSION,
        "kind": "costsim.simulation" if single else "costsim.comparison",
        "title": comparison.title,
        "as_of": comparison.as_of.isoformat() if comparison.as_of else None,
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
