"""Gates: scenario budgets and ``--fail-over``; each failure is one sentence."""

from __future__ import annotations

from decimal import Decimal

from costsim.analysis.comparison import Comparison, VariantSummary, delta_pct
from costsim.pricing.money import money
from costsim.scenario.model import Budget

__all__ = ["gate"]


def _over(name: str, metric: str, actual: str, limit: str) -> str:
    return f"variant {name!r}: {metric} is {actual}, over the limit of {limit}"


def _check(summary: VariantSummary, budget: Budget, baseline_cost: Decimal | None) -> list[str]:
    name, totals = summary.variant.name, summary.totals
    failures = []
    if budget.max_prompt_tokens is not None and totals.prompt_tokens > budget.max_prompt_tokens:
        failures.append(
            _over(
                name, "prompt_tokens", f"{totals.prompt_tokens:,}", f"{budget.max_prompt_tokens:,}"
            )
        )
    if budget.max_output_tokens is not None and totals.output_tokens > budget.max_output_tokens:
        failures.append(
            _over(
                name, "output_tokens", f"{totals.output_tokens:,}", f"{budget.max_output_tokens:,}"
            )
        )
    if budget.max_cost_usd is not None:
        limit = Decimal(str(budget.max_cost_usd))
        if totals.cost_usd is None:
            failures.append(
                f"variant {name!r}: cost_usd is unknown (unpriced calls), limit {money(limit)}"
            )
        elif totals.cost_usd > limit:
            failures.append(_over(name, "cost_usd", money(totals.cost_usd), money(limit)))
    if budget.max_regression_pct is not None:
        failures.extend(_regression(summary, budget.max_regression_pct, baseline_cost))
    return failures


def _regression(summary: VariantSummary, limit: float, baseline_cost: Decimal | None) -> list[str]:
    name, change = summary.variant.name, summary.delta.value
    if change is None:
        return [
            f"variant {name!r}: Δ cost is unknown (it bills calls without a price otherwise "
            f"than the recording does), so the limit of +{limit:g}% cannot be checked"
        ]
    base = summary.baseline.cost_usd if summary.baseline.cost_usd is not None else baseline_cost
    if base == 0 and change > 0:  # no share of $0 is within a limit
        return [
            f"variant {name!r}: Δ cost is +{money(change)} against a recording that cost $0, "
            f"over any limit (+{limit:g}%)"
        ]
    if base is not None:
        percent = delta_pct(summary.totals.cost_usd, base)
        if percent is None or percent <= limit:
            return []
        return [
            f"variant {name!r}: Δ cost is {percent:+.1f}% (the table's Δ %, against "
            f"the recording), over the limit of +{limit:g}%"
        ]
    # calls without a price, billed alike: the saving is known, its share only bounded (the
    # recording costs at least its priced part)
    priced = summary.baseline.priced_cost
    if change <= 0 or (priced and change / priced * 100 <= Decimal(str(limit))):
        return []
    most = f"up to {float(change / priced * 100):+.1f}% of" if priced else "a share of"
    return [
        f"variant {name!r}: Δ cost is +{money(change)}, {most} the recording (at least "
        f"{money(priced)}: {_why_bound(summary)}), over the limit of +{limit:g}%"
    ]


def _why_bound(summary: VariantSummary) -> str:
    """Why the recording's cost is only bounded: calls without a price, interactions costsim
    cannot meter (in no sum), or both."""
    unpriced, left_out = summary.baseline.unpriced_calls, summary.baseline.left_out_calls
    reasons = []
    if unpriced:
        reasons.append(f"{unpriced:,} of its calls {'has' if unpriced == 1 else 'have'} no price")
    if left_out:
        some = f"{left_out:,} LLM-looking interaction{'' if left_out == 1 else 's'}"
        reasons.append(f"{some} costsim cannot meter, in no sum")
    return "; ".join(reasons) or "part of it is unknown"


def gate(comparison: Comparison, budgets: dict[str, Budget], fail_over: float | None) -> list[str]:
    """Every budget or regression limit a comparison breaks."""
    failures: list[str] = []
    baseline_cost = comparison.baseline.cost_usd
    for summary in comparison.variants:
        for key in ("*", summary.variant.name):
            if key in budgets:
                failures.extend(_check(summary, budgets[key], baseline_cost))
        if fail_over is not None:
            failures.extend(_regression(summary, fail_over, baseline_cost))
    # a budget and --fail-over (or '*' and the variant's own) that say the same, said once
    return list(dict.fromkeys(failures))
