"""Which tests the plugin's summary lists, in which order, and the sentence that opens it.

Tests are ranked costliest first by priced cost, then by prompt tokens (an unpriced test
never leads), then by test id in natural order (``test[2]`` before ``test[10]``). A run of
more than 25 tests lists its 20 costliest and every test whose cost is not fully known (or
that made a call costsim cannot meter), and sums the others in one row
(:mod:`costsim.render.rows`); ``--costsim-top N`` lists N, ``-v`` and the report files every
test.
"""

from __future__ import annotations

from dataclasses import dataclass

from costsim.api.testing import EmbeddingTotals, TestCost
from costsim.plugin.run import SummaryOptions
from costsim.render.embeddings_text import embeddings_beside
from costsim.render.rows import merged, ranked, split_rows
from costsim.render.text import money, plural, tests_text

__all__ = [
    "Listing",
    "answer_line",
    "listing",
    "others_how",
    "ranked_tests",
    "tests_text",
    "unknown_text",
    "whole",
]


def ranked_tests(costs: dict[str, TestCost]) -> list[tuple[str, TestCost]]:
    return ranked(costs.items(), lambda cost: (cost.priced_cost_usd, cost.prompt_tokens))


@dataclass(frozen=True, slots=True)
class Listing:
    """The tests a summary lists, in order, and those it sums in one row."""

    listed: list[str]
    others: list[str]


def listing(costs: dict[str, TestCost], options: SummaryOptions) -> Listing:
    every = options.verbose >= 1 or options.markdown
    names = [name for name, _ in ranked_tests(costs)]
    listed, others = split_rows(
        names,
        every=every,
        limit=options.top,
        keep=lambda name: costs[name].unpriced_calls + costs[name].unrecognised_calls > 0,
    )
    return Listing(listed, others)


def others_how(options: SummaryOptions) -> str:
    """How to see the tests a summary sums in one row."""
    if options.top is not None:
        return "a larger --costsim-top lists more, a --costsim-report file every one"
    return "-v lists every one, --costsim-top N the costliest N, a --costsim-report file all"


def whole(costs: dict[str, TestCost]) -> TestCost:
    """Every test's figures summed (calls that could not be read are unpriced in their
    test's, and so here)."""
    return merged(costs.values(), TestCost())


def answer_line(costs: dict[str, TestCost], embeddings: EmbeddingTotals | None = None) -> str:
    """What the run's LLM calls cost, in one sentence, worded as ``costsim report`` words it:
    the priced part of a partial cost as a lower bound, never $0; what ``embeddings``
    requests cost beside it, in no LLM figure."""
    total = whole(costs)
    if total.cost_usd is not None:
        cost = money(total.priced_cost_usd)
    elif total.priced_cost_usd:
        cost = f"≥{money(total.priced_cost_usd)}"
    else:
        cost = "cost unknown"
    unknown = f" ({unknown_text(total)})" if total.unpriced_calls else ""
    if total.unrecognised_calls:  # not in the figure: said beside it, as report says it
        unknown += f"; {plural(total.unrecognised_calls, 'LLM-looking interaction')} not metered"
    if embeddings is not None:  # billed too, in no LLM figure: beside it, as report says it
        unknown += embeddings_beside(embeddings)
    return f"{plural(total.calls, 'LLM call')} in {tests_text(list(costs))}: {cost}{unknown}."


def unknown_text(total: TestCost) -> str:
    """The calls whose cost is unknown, by why: ``2 calls unpriced, 1 unreadable`` (a call
    that could not be read has no entry of its own among the unpriced; it was called
    unpriced, though its model had a price)."""
    unreadable = max(0, total.unpriced_calls - len(total.unpriced))
    unpriced = total.unpriced_calls - unreadable
    parts = [f"{plural(unpriced, 'call')} unpriced"] if unpriced else []
    if unreadable:
        parts.append(
            f"{unreadable} unreadable" if parts else f"{plural(unreadable, 'call')} unreadable"
        )
    return ", ".join(parts)
