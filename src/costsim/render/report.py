"""A report as JSON (its text is in :mod:`costsim.render.report_text`).

The JSON shape is a stable contract (``schemas/report.schema.json``); bump ``FORMAT_VERSION``
when it changes incompatibly.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from costsim.analysis.report import CassetteReport, Report
from costsim.metering.meter import ErrorBand
from costsim.pricing.ledger import Totals
from costsim.pricing.money import amount_text
from costsim.pricing.reads import ReadPricing
from costsim.pricing.snapshots import EarlyPricing, EarlySnapshot
from costsim.render.embeddings_text import unpriced_embeddings_json
from costsim.render.json_stream import Deferred
from costsim.render.text import display_path, plural

__all__ = [
    "ESTIMATED",
    "FORMAT_VERSION",
    "UNMETERED",
    "band_text",
    "read_pricing_notes",
    "report_json",
    "snapshot_notes",
    "totals_json",
    "unpriced_json",
]

FORMAT_VERSION = 1

ESTIMATED = (
    "recorded no usage (or usage that does not add up): their tokens are estimated "
    "(calibrated offline count; cache reads as the provider's caching rules give them)"
)
"""What N calls whose recorded usage could not be used are (every renderer says it alike)."""
UNMETERED = "recorded no usage and are not in the token totals; the total cost is unknown"
"""What N calls without usage that could not be estimated either are."""
UNREPORTED_THINKING = (
    "thought without reporting how much (billed inside output: a Claude call does not count "
    "thinking apart, and a call whose usage was not recorded, such as a cut stream, counts "
    "none): the thinking figures count only what was reported, at least (≥) what was thought"
)
"""What N calls whose thinking is billed but not counted apart did."""


def thinking_cell(totals: Totals) -> str:
    """The thinking tokens reported; marked a lower bound (``≥``) when some calls thought
    without reporting how much (never a bare 0 for thinking that was billed)."""
    reported = f"{totals.reasoning_tokens:,}"
    return f"≥{reported}" if totals.unreported_thinking_calls else reported


_READ_PRICING = {
    ReadPricing.BASE_MODEL: (
        "of fine-tuned models ({models}) read from the cache: genai-prices has no cached-input "
        "price for them, so their reads are priced at the base model's discount, as OpenAI "
        "prices fine-tuned models."
    ),
    ReadPricing.INPUT: (
        "on models genai-prices has no cached-input price for ({models}) read from the cache: "
        "their reads are priced at the input rate, the most they can cost."
    ),
}


def read_pricing_notes(
    read_pricing: Mapping[ReadPricing, Mapping[str, int]], *, counted: bool = True
) -> list[str]:
    """How cache reads without a price of their own were priced (:attr:`Totals.read_pricing`
    of one run), one sentence per way; ``counted=False`` for several runs: without counts."""
    notes = []
    for how, text in _READ_PRICING.items():
        counts = read_pricing.get(how, {})
        if counts:
            subject = plural(sum(counts.values()), "call") if counted else "Calls"
            notes.append(f"{subject} {text.format(models=', '.join(sorted(counts)))}")
    return notes


_EARLY: dict[EarlyPricing, str] = {
    EarlyPricing.ONE_PRICE: "priced at its one known price (genai-prices gives it for every date)",
    EarlyPricing.EARLIEST: (
        "priced at its earliest known price (the one genai-prices gives it until {start})"
    ),
    EarlyPricing.DATED: "priced at the price genai-prices gives it from {start}",
    EarlyPricing.BY_MOMENT: "priced at the price genai-prices gives it at each call's moment",
}
"""How genai-prices priced a model at a date before its snapshot (it has no release dates)."""


def snapshot_note(early: EarlySnapshot, *, source: str = "") -> str:
    """That ``early.model`` was priced at a date before the snapshot its id names, and at
    what; ``source`` names what set that date (``--as-of``)."""
    how = _EARLY[early.pricing].format(start=early.price_start)
    after = f"{early.priced_on.isoformat()}{f' ({source})' if source else ''}"
    return f"{early.model} is a snapshot of {early.snapshot.isoformat()}, after {after}: {how}."


def snapshot_notes(*runs: Mapping[str, EarlySnapshot], source: str = "") -> list[str]:
    """One :func:`snapshot_note` per model (:attr:`Totals.early_snapshots` of one run or
    more: a model several name is said of once, as the first names it), by name."""
    early: dict[str, EarlySnapshot] = {}
    for run in runs:
        for model, item in run.items():
            early.setdefault(model, item)
    return [snapshot_note(early[model], source=source) for model in sorted(early)]


def _early_json(totals: Totals) -> list[dict[str, Any]]:
    return [
        {
            "model": model,
            "snapshot_date": early.snapshot.isoformat(),
            "priced_on": early.priced_on.isoformat(),
            "priced_as": early.pricing.value,
            "price_start": early.price_start.isoformat() if early.price_start else None,
            "note": snapshot_note(early),
        }
        for model, early in sorted(totals.early_snapshots.items())
    ]


def _read_pricing_json(totals: Totals) -> list[dict[str, Any]]:
    return [
        {"model": model, "priced_as": how.value, "calls": count}
        for how, counts in sorted(totals.read_pricing.items())
        for model, count in sorted(counts.items())
    ]


def totals_json(totals: Totals) -> dict[str, Any]:
    cost = totals.cost_usd
    return {
        "llm_calls": totals.llm_calls,
        "calls_with_usage": totals.calls_with_usage,
        "estimated_calls": totals.estimated_calls,
        "errored_calls": totals.errored_calls,
        "unmetered_calls": totals.unmetered_calls,
        "left_out_calls": totals.left_out_calls,
        "prompt_tokens": totals.prompt_tokens,
        "uncached_input_tokens": totals.uncached_input_tokens,
        "cache_read_tokens": totals.cache_read_tokens,
        "cache_write_tokens": totals.cache_write_tokens,
        "cache_write_5m_tokens": totals.cache_write_5m_tokens,
        "cache_write_1h_tokens": totals.cache_write_1h_tokens,
        "output_tokens": totals.output_tokens,
        "reasoning_tokens": totals.reasoning_tokens,
        "unreported_thinking_calls": totals.unreported_thinking_calls,
        "cache_hit_rate": None
        if totals.cache_hit_rate is None
        else round(totals.cache_hit_rate, 6),
        "cost_usd": amount_text(cost),
        "priced_cost_usd": amount_text(totals.priced_cost),
        "unpriced_calls": totals.unpriced_calls,
        "undated_calls": totals.undated_calls,
        "gateway_priced_calls": totals.gateway_priced_calls,
        "web_searches": totals.web_searches,
        "cache_reads_without_price": _read_pricing_json(totals),
        "snapshots_after_price_date": _early_json(totals),
    }


def unpriced_json(totals: Totals) -> list[dict[str, Any]]:
    """Each unpriced call: where it was recorded, its model, and why it has no price."""
    return [
        {
            "path": display_path(u.provenance.path),
            "interaction": u.provenance.index,
            "model": u.model,
            "reason": u.reason,
        }
        for u in totals.unpriced
    ]


def _cassette_json(item: CassetteReport) -> dict[str, Any]:
    return {
        "path": display_path(item.path),
        **totals_json(item.totals),
        "other_interactions": item.other_interactions,
        "foreign_calls": dict(sorted(item.foreign_calls.items())),
        "proxied_calls": dict(sorted(item.proxied_calls.items())),
        "first_recorded": item.first_recorded.isoformat() if item.first_recorded else None,
        "last_recorded": item.last_recorded.isoformat() if item.last_recorded else None,
        "embeddings": item.embeddings.to_json(),
    }


def report_json(report: Report) -> dict[str, Any]:
    document: dict[str, Any] = {
        "format_version": FORMAT_VERSION,
        "kind": "costsim.report",
        "as_of": report.as_of.isoformat() if report.as_of else None,
        "by": report.by,
        "totals": totals_json(report.totals),
        "cassettes": Deferred(lambda: map(_cassette_json, report.cassettes)),  # made as written
        "groups": [{"key": key, **totals_json(t)} for key, t in report.groups.items()],
        "unpriced": unpriced_json(report.totals),
        "skipped": [{"path": display_path(s.path), "error": s.error} for s in report.skipped],
        "estimator": [_band_json(band) for band in report.estimator],
        "notes": [
            {
                "path": display_path(note.provenance.path),
                "interaction": note.provenance.index,
                "kind": note.kind.value,
                "message": note.message,
            }
            for note in report.notes
        ],
        "embeddings": {
            **report.embeddings.to_json(),
            "unpriced": unpriced_embeddings_json(report.embeddings),
        },
    }
    return document


def _band_json(band: ErrorBand) -> dict[str, Any]:
    return {
        "family": band.family,
        "source": band.source,
        "calls": band.calls,
        "median_ape": None if band.median_ape is None else round(band.median_ape, 2),
        "p90_ape": None if band.p90_ape is None else round(band.p90_ape, 2),
    }


def band_text(band: ErrorBand) -> str:
    if band.median_ape is None or band.p90_ape is None:
        return f"{band.family}: {band.source} coefficients, no recorded calls here to measure error"
    where = (
        "costsim's corpus (shipped coefficients)"
        if band.source == "default"
        else "your calibration"
    )
    return (
        f"{band.family}: ±{band.median_ape:.1f}% median, ±{band.p90_ape:.1f}% p90, "
        f"held out on {band.calls} calls of {where}"
    )
