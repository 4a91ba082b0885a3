"""``costsim advise caching`` as a table and JSON: the recommended placement, its saving with
its band, every placement tried, and the money left on the table."""

from __future__ import annotations

from typing import Any

from tabulate import tabulate

from costsim.analysis.advice import CachingAdvice
from costsim.analysis.comparison import VariantSummary
from costsim.pricing.money import money
from costsim.render.comparison import band_json, band_text, economics_lines
from costsim.render.report import FORMAT_VERSION, totals_json

__all__ = ["advice_document", "advice_table"]


def _option(summary: VariantSummary) -> dict[str, Any]:
    return {
        "name": summary.variant.name,
        "strategy": summary.variant.describe(),
        "totals": totals_json(summary.totals),
        "cost_band": band_json(summary.cost),
        "delta": band_json(summary.delta),
        "resimulated_calls": summary.resimulated_calls,
        "breakpoints": [
            {
                "position": row.position,
                "tokens_written_5m": row.tokens_written_5m,
                "tokens_written_1h": row.tokens_written_1h,
                "tokens_read": row.tokens_read,
                "net_usd": None if row.net_usd is None else str(row.net_usd),
            }
            for row in summary.breakpoints
        ],
    }


def advice_document(advice: CachingAdvice) -> dict[str, Any]:
    best = advice.best
    return {
        "format_version": FORMAT_VERSION,
        "kind": "costsim.advice",
        "topic": "caching",
        "as_of": advice.as_of.isoformat() if advice.as_of else None,
        "baseline": totals_json(advice.baseline),
        "recommended": None if best is None else best.variant.name,
        "recommended_strategy": None if best is None else best.variant.describe(),
        "options": [_option(option) for option in advice.options],
        "left_on_the_table": [
            {
                "reason": leak.reason,
                "calls": leak.calls,
                "tokens": leak.tokens,
                "usd": str(leak.usd),
                "examples": leak.examples,
            }
            for leak in advice.leaks
        ],
        "never_resent_calls": advice.never_resent_calls,
    }


def advice_table(advice: CachingAdvice, verbose: bool = False) -> str:
    best, oracle = advice.best, advice.oracle
    cost = advice.baseline.cost_usd
    lines = [f"Caching advice on {advice.baseline.llm_calls:,} recorded calls ({money(cost)})."]
    if best is not None:
        lines.append(
            f"Recommended: -s {best.variant.describe()}: Δ cost {band_text(best.delta)} "
            f"against the recording"
        )
    else:
        lines.append(
            "Recommended: keep the caching as recorded; no placement a client can implement "
            "costs less on these traces."
        )
    if oracle is not None:
        lines.append(f"Best possible (oracle, knows the future): Δ cost {band_text(oracle.delta)}")
    rows = [
        [
            option.variant.name,
            money(option.totals.cost_usd),
            band_text(option.delta),
            f"{option.resimulated_calls:,}",
        ]
        for option in advice.options
    ]
    lines += [
        "",
        tabulate(rows, headers=["placement", "cost", "Δ cost (p90)", "calls re-simulated"]),
    ]
    if advice.leaks:
        lines += ["", "Left on the table (re-sent prompt tokens no placement reads back):"]
        for leak in advice.leaks:
            lines.append(
                f"  {leak.reason}: {leak.calls:,} call(s), {leak.tokens:,} tokens, "
                f"{money(leak.usd)} at cache-read price"
            )
            lines += [f"    e.g. {example}" for example in leak.examples[: 3 if verbose else 1]]
    if advice.never_resent_calls:
        lines.append(
            f"  {advice.never_resent_calls:,} call(s) share no prefix with any later call: "
            "nothing to cache there."
        )
    if verbose:
        for option in advice.options:
            economics = economics_lines(option)
            if economics:
                lines += ["", *economics]
    return "\n".join(lines) + "\n"
