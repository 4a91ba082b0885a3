"""A comparison's answer: the variant that saves most against the recording, what it saves in
dollars and percent, and how sure that is (its band); and the cost and change cells of its table,
in one precision per column."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from costsim.analysis.comparison import Comparison, VariantSummary
from costsim.pricing.ledger import Totals
from costsim.render.band_text import band_cell, delta_range
from costsim.render.text import decimals_for, money_cells, plural

__all__ = [
    "BestSaving",
    "Money",
    "answer_line",
    "best_saving",
    "cost_cell",
    "money_of",
    "nothing_to_save",
]


def _saving(summary: VariantSummary) -> Decimal | None:
    """What the variant saves against the recording (negative: it costs more)."""
    return None if summary.delta.value is None else -summary.delta.value


@dataclass(frozen=True, slots=True)
class Money:
    """The cost and change cells of a comparison, each column with one precision."""

    cost: list[str]
    """Baseline first, then one per variant."""
    delta: list[str]
    """One per variant."""
    decimals: int


def money_of(comparison: Comparison) -> Money:
    runs = [comparison.baseline, *(v.totals for v in comparison.variants)]
    deltas = [v.delta.value for v in comparison.variants]
    # an unpriced run's cell is its priced part (a lower bound), at the same precision
    costs = [t.cost_usd if t.cost_usd is not None else t.priced_cost or None for t in runs]
    decimals = decimals_for([*costs, *deltas])
    return Money(
        [cost_cell(totals, decimals) for totals in runs],
        money_cells(deltas, signed=True, missing="-", decimals=decimals),
        decimals,
    )


def cost_cell(totals: Totals, decimals: int) -> str:
    """The run's cost; with unpriced calls, the priced part as a lower bound (``≥$0.0107*``,
    the star explained under the table), or ``unknown`` when nothing could be priced."""
    if totals.cost_usd is not None:
        return money_cells([totals.cost_usd], decimals=decimals)[0]
    if not totals.priced_cost:
        return "unknown"
    return f"≥{money_cells([totals.priced_cost], decimals=decimals)[0]}*"


@dataclass(frozen=True, slots=True)
class BestSaving:
    """The variant that saves most against the recording, and what it saves."""

    index: int
    summary: VariantSummary
    saving: Decimal
    """The recorded cost minus the variant's (negative: it costs more)."""
    saving_pct: float | None
    """Of the recorded cost; None when that is unknown (calls without a price that the
    variant bills alike: its saving is known, not its share)."""


def best_saving(comparison: Comparison, *, oracles: bool = False) -> BestSaving | None:
    """The variant whose saving is known that saves most (the first listed on a tie), of
    those a client can deploy when one of them saves (``oracles``: of every variant; an
    oracle knows the trace's future, a bound); None when no saving is known, or the
    recording costs $0."""
    priced = [
        (saving, index, summary)
        for index, summary in enumerate(comparison.variants)
        if (saving := _saving(summary)) is not None and summary.baseline.cost_usd != 0
    ]
    if not priced or comparison.baseline.cost_usd == 0:
        return None
    deployable = [item for item in priced if not item[2].variant.knows_the_future]
    if not oracles and any(item[0] > 0 for item in deployable):
        priced = deployable
    saving, index, summary = max(priced, key=lambda item: (item[0], -item[1]))
    base = summary.baseline.cost_usd
    return BestSaving(index, summary, saving, float(saving / base * 100) if base else None)


def nothing_to_save(comparison: Comparison) -> str | None:
    """The answer when the recording costs $0 (no LLM calls, or none billed): no variant can
    save on it, and no call is unpriced. None when the recording costs something, or is
    unpriced."""
    baseline = comparison.baseline
    if baseline.cost_usd is None or baseline.cost_usd:
        return None
    if not baseline.llm_calls:
        return "Nothing to save: there are no LLM calls to simulate."
    errored = f", {baseline.errored_calls:,} errored" if baseline.errored_calls else ""
    calls = plural(baseline.llm_calls, "LLM call")
    return f"Nothing to save: the recording costs $0 ({calls}{errored})."


def _unpriced_answer(comparison: Comparison, cells: Money) -> str:
    """No saving is known: every variant has calls without a price. The one with fewest,
    how many of its calls they are, and the cost of the rest (a lower bound)."""
    summary = min(comparison.variants, key=lambda variant: variant.totals.unpriced_calls)
    totals = summary.totals
    if not totals.unpriced_calls:  # priced, but against a baseline that is not
        return "No answer: no variant's saving could be priced (see the unpriced calls below)."
    floor = money_cells([totals.priced_cost], decimals=cells.decimals)[0]
    return (
        f"No answer: {summary.variant.name} leaves {totals.unpriced_calls:,} of "
        f"{totals.llm_calls:,} calls unpriced (see below), so its cost is only known to be at "
        f"least {floor} against {cells.cost[0]} recorded."
    )


def _share(best: BestSaving, sign: str = "") -> str:
    """`` (5.9%)`` of the recorded cost; nothing when that is unknown (calls without a
    price, which the variant bills as the recording does: see :func:`_alike`)."""
    return "" if best.saving_pct is None else f" ({sign}{abs(best.saving_pct):.1f}%)"


def _alike(best: BestSaving) -> str:
    """Why a saving is known though the recorded cost is not."""
    if best.saving_pct is not None:
        return ""
    totals = best.summary.totals
    said = []
    if totals.unpriced_calls:
        said.append(
            f"its {plural(totals.unpriced_calls, 'call')} without a price billed as recorded"
        )
    if totals.left_out_calls:
        missed = plural(totals.left_out_calls, "LLM-looking interaction")
        said.append(f"{missed} costsim cannot meter left out of both")
    return f" ({'; '.join(said)})" if said else ""


def answer_line(comparison: Comparison, cells: Money | None = None) -> str:
    """One sentence: the variant that saves most, its saving in $ and %, its band, its risks."""
    cells = cells or money_of(comparison)
    if comparison.baseline.cost_usd is None and best_saving(comparison) is None:
        return "No answer: the recording itself has unpriced calls (see below)."
    free = nothing_to_save(comparison)
    if free is not None:
        return free
    best = best_saving(comparison)
    if best is None:
        return _unpriced_answer(comparison, cells)
    change = cells.delta[best.index].lstrip("+-")
    summary = best.summary
    risks = f"; {plural(summary.divergences, 'divergence')}" if summary.divergences else ""
    name = summary.variant.name
    if best.saving <= 0:
        verb = (
            "costs the same as the recording"
            if best.saving == 0
            else f"adds {change}{_share(best, sign='+')}{_alike(best)}"
        )
        if not summary.delta.exact:
            verb += f", p90 Δ {delta_range(summary, cells.decimals)}"
        if len(comparison.variants) == 1:
            return f"{name} saves nothing: it {verb}{risks}."
        return f"No variant saves: the one that adds least is {name}, which {verb}{risks}."
    basis = cells.cost[0]
    if summary.hidden_output:  # the saving's band reaches past it: say why
        basis = f"at least {basis} (an output the recording holds only in part)"
    oracle = (
        " an oracle (it knows the trace's future: a bound, not a plan),"
        if summary.variant.knows_the_future
        else ""
    )
    if len(comparison.variants) == 1:  # "X, an oracle (...), saves $..." (not "saves an oracle")
        lead = f"{name},{oracle} saves" if oracle else f"{name} saves"
    else:
        lead = f"Saves most: {name},{oracle}"
    bound = best_saving(comparison, oracles=True)
    beyond = ""
    if bound is not None and bound.summary is not summary and bound.saving > best.saving:
        saved = cells.delta[bound.index].lstrip("+-")
        beyond = f"; the oracle {bound.summary.variant.name}, which knows the future, saves {saved}"
    return (
        f"{lead} {change}{_share(best)} of {basis}{_alike(best)}, "
        f"p90 band {band_cell(summary, cells.decimals, saving=True)}{risks}{beyond}."
    )
