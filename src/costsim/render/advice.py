"""``costsim advise caching`` as a table and JSON: the recommended placement, its saving with
its band, every placement tried, and the money left on the table."""

from __future__ import annotations

from typing import Any

from costsim.analysis.advice import KEEP_TTLS, CachingAdvice
from costsim.analysis.comparison import VariantSummary
from costsim.pricing.money import amount_text
from costsim.render.band_text import band_text
from costsim.render.comparison import band_json
from costsim.render.comparison_answer import cost_cell
from costsim.render.comparison_text import FIRST_RUN
from costsim.render.economics_text import economics_lines
from costsim.render.report import FORMAT_VERSION, snapshot_notes, totals_json
from costsim.render.text import (
    Column,
    decimals_for,
    markdown_table,
    money,
    money_cells,
    plural,
    shorten_left,
    table,
    wrap,
)

__all__ = ["advice_document", "advice_markdown", "advice_table"]


def _option(summary: VariantSummary) -> dict[str, Any]:
    return {
        "name": summary.variant.name,
        "strategy": summary.variant.describe(),
        "totals": totals_json(summary.totals),
        "cost_band": band_json(summary.cost),
        "delta": band_json(summary.delta),
        "like_for_like_cost_usd": amount_text(summary.baseline.cost_usd),
        "resimulated_calls": summary.resimulated_calls,
        "breakpoints": [
            {
                "position": row.position,
                "tokens_written_5m": row.tokens_written_5m,
                "tokens_written_1h": row.tokens_written_1h,
                "tokens_read": row.tokens_read,
                "net_usd": amount_text(row.net_usd),
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
        "warm_starts": advice.warm_starts,
        "baseline": totals_json(advice.baseline),
        "recommended": None if best is None else best.variant.name,
        "recommended_strategy": None if best is None else best.variant.describe(),
        "options": [_option(option) for option in advice.options],
        "left_on_the_table": [
            {
                "reason": leak.reason,
                "calls": leak.calls,
                "tokens": leak.tokens,
                "usd": amount_text(leak.usd),
                "examples": leak.examples,
            }
            for leak in advice.leaks
        ],
        "never_resent_calls": advice.never_resent_calls,
    }


def _lines(advice: CachingAdvice, width: int, verbose: bool) -> tuple[list[str], list[str]]:
    """(the answer and the money left on the table, the per-placement table's rows)."""
    best, oracle = advice.best, advice.oracle
    lines = [
        f"Caching advice on {advice.baseline.llm_calls:,} recorded calls "
        f"({cost_cell(advice.baseline, 6 if advice.baseline.priced_cost < 1 else 4)})."
    ]
    if best is not None:
        lines.append(
            f"Recommended: -s {best.variant.describe()}: Δ cost "
            f"{band_text(best.delta, _places(advice))} "
            "against the recording"
        )
    else:
        lines.append(
            "Recommended: keep the caching as recorded; no placement a client can implement "
            "costs less on these traces."
        )
    if oracle is not None:
        change = band_text(oracle.delta, _places(advice))
        lines.append(f"Best possible (oracle, knows the future): Δ cost {change}")
    leaks: list[str] = []
    if advice.leaks:
        leaks.append(
            "Left on the table (re-sent prompt tokens the recorded requests could not read "
            "from cache):"
        )
        for leak in advice.leaks:
            unknown = (
                f" ({leak.unpriced} of them at no known price)"
                if 0 < leak.unpriced < leak.calls
                else ""
            )
            billed = (
                "at no known price"
                if leak.unpriced == leak.calls
                else f"billed {money(leak.usd)} more than reading them from cache{unknown}"
            )
            leaks.append(
                f"  {leak.reason}: {plural(leak.calls, 'call')}, {leak.tokens:,} tokens, {billed}"
            )
            leaks += [
                f"    e.g. {_example(example)}" for example in leak.examples[: 3 if verbose else 1]
            ]
    if advice.never_resent_calls:
        leaks.append(
            f"  {plural(advice.never_resent_calls, 'call')} "
            f"{'shares' if advice.never_resent_calls == 1 else 'share'} no prefix with any "
            "later call: "
            "nothing to cache there."
        )
    return lines, leaks


def _notes(advice: CachingAdvice) -> list[str]:
    """What the table's last column means, and why a placement costs more than the
    recording, in the cache tokens it writes and reads against the recording's."""
    base = advice.baseline
    notes = ["re-simulated: the calls a placement sends differently; the rest bill as recorded."]
    if advice.warm_starts == "first":
        notes.append(FIRST_RUN)
    if any(option.variant.name == KEEP_TTLS[0] for option in advice.options):
        notes.append(
            f"{KEEP_TTLS[0]}: 5m breakpoints placed beside the recorded 1h ones, which static 5m "
            "lowers to 5m and static 1h keeps."
        )
    if base.unpriced_calls:
        them = "it" if base.unpriced_calls == 1 else "them"
        notes.append(
            f"* the priced part, a lower bound: {plural(base.unpriced_calls, 'call')} "
            f"without a price (a placement that bills {them} as recorded has a known Δ)."
        )
    if base.left_out_calls:
        missed = plural(base.left_out_calls, "LLM-looking interaction")
        notes.append(
            f"* the priced part, a lower bound: {missed} costsim cannot meter, left out of "
            "every sum (costsim report lists them)."
        )
    if advice.as_of:  # as report says it: models priced before their snapshot
        runs = (base, *(option.totals for option in advice.options))
        notes += snapshot_notes(*(totals.early_snapshots for totals in runs), source="--as-of")
    for option in advice.options:
        if option.delta.value is None or option.delta.value <= 0:
            continue
        totals = option.totals
        writes = totals.cache_write_5m_tokens + totals.cache_write_1h_tokens
        written = base.cache_write_5m_tokens + base.cache_write_1h_tokens
        hours = " (1h writes at twice the input price)" if totals.cache_write_1h_tokens else ""
        notes.append(
            f"{option.variant.name} costs more than the recording: it writes {writes:,} "
            f"tokens to cache{hours} where the recording wrote {written:,}, and reads "
            f"{totals.cache_read_tokens:,} where the recording read {base.cache_read_tokens:,}."
        )
    return notes


def _example(text: str) -> str:
    """``file#interaction: what``, the file cut from the left so the line wraps between
    words, not inside a file name."""
    where, colon, what = text.partition(": ")
    return f"{shorten_left(where, 44)}{colon}{what}" if colon else text


_COLUMNS = [
    Column("placement", align="left", cut="right", min_width=12),
    Column("cost"),
    Column("Δ cost"),
    Column("p90 range", drop=1),
    Column("re-simulated", drop=2),
]
"""No figure is ever cut: narrow, the re-simulated count and then the band are left out
whole (the table says which; ``--wide`` and the JSON keep them)."""


def _places(advice: CachingAdvice) -> int:
    """One precision for every cost of the table, as in every other table, and for the
    answer's figures above it."""
    return decimals_for(
        amount
        for option in advice.options
        for amount in (
            option.totals.priced_cost,
            option.delta.value,
            option.delta.low,
            option.delta.high,
        )
    )


def _rows(advice: CachingAdvice) -> list[list[str]]:
    places = _places(advice)
    costs = [cost_cell(option.totals, places) for option in advice.options]
    return [
        [
            option.variant.name,
            cost,
            *_delta_cells(option, places),
            f"{option.resimulated_calls:,}",
        ]
        for option, cost in zip(advice.options, costs, strict=True)
    ]


def _delta_cells(option: VariantSummary, places: int) -> list[str]:
    """The change in cost and its p90 range (``exact`` when nothing behind it was
    estimated), each in the column's precision."""
    band = option.delta
    if band.value is None or band.low is None or band.high is None:
        return ["unknown", "-"]
    change, low, high = money_cells([band.value, band.low, band.high], signed=True, decimals=places)
    return [change, "exact" if band.exact else f"{low} to {high}"]


def advice_table(advice: CachingAdvice, *, width: int = 100, verbose: bool = False) -> str:
    if not advice.baseline.llm_calls:  # not a recommendation drawn from nothing
        return "No LLM calls: nothing to advise on.\n"
    answer, leaks = _lines(advice, width, verbose)
    lines = [out for line in answer for out in wrap(line, width, subsequent="    ")]
    lines += ["", *table(_COLUMNS, _rows(advice), width=width)]
    lines += ["", *(out for line in _notes(advice) for out in wrap(line, width, subsequent="  "))]
    if leaks:
        lines += ["", *(out for line in leaks for out in wrap(line, width, subsequent="      "))]
    if verbose:
        for option in advice.options:
            economics = economics_lines(option, width)
            if economics:
                lines += ["", f"{option.variant.name}:", *economics]
    return "\n".join(lines) + "\n"


def advice_markdown(advice: CachingAdvice, *, verbose: bool = False) -> str:
    answer, leaks = _lines(advice, 10**6, verbose)
    lines = ["## costsim advise caching", "", *(f"**{line}**" for line in answer[1:2])]
    lines += ["", *(f"- {line}" for line in [answer[0], *answer[2:]])]
    lines += ["", *markdown_table(_COLUMNS, _rows(advice))]
    lines += ["", *(f"- {line}" for line in _notes(advice))]
    if leaks:
        lines += ["", *(f"- {line.strip()}" for line in leaks)]
    return "\n".join(lines) + "\n"
