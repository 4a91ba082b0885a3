"""``--costsim-strategies``: each test's cost under a what-if variant, simulated by the engine."""

from __future__ import annotations

from costsim.plugin.session import CostsimSession
from costsim.strategies.registry import Variant, parse_step

__all__ = ["parse_strategies", "what_if_costs"]


def parse_strategies(text: str) -> list[Variant]:
    """``caching:ttl=1h,truncation&caching`` -> one what-if variant per comma-separated entry.

    A ``key=value`` part with no strategy name continues the previous entry's options, and
    ``a&b`` stacks strategies in one column. Unknown names and bad options raise ConfigError.
    """
    entries: list[str] = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        if "=" in part and ":" not in part and entries:
            entries[-1] += "," + part
        else:
            entries.append(part)
    return [
        Variant(entry, tuple(parse_step(step.strip()) for step in entry.split("&")))
        for entry in entries
    ]


def what_if_costs(state: CostsimSession, strategies: str) -> dict[str, dict[str, str | None]]:
    """Per test, each what-if variant's simulated cost (a Decimal string; None if unpriced).

    Each test's calls form one trace, in the order the test made them, with the requests as
    the code sent them.
    """
    from costsim.engine import Engine

    tests = {state.trace(test).path: test for test in state.observed}
    engine = Engine([state.trace(test) for test in tests.values()], meter=state.meter)
    requests = {path: state.sent(test) for path, test in tests.items()}
    costs: dict[str, dict[str, str | None]] = {test: {} for test in tests.values()}
    for variant in parse_strategies(strategies):
        for path, totals in engine.run(variant, requests=requests).totals_by_trace().items():
            cost = totals.cost_usd
            costs[tests[path]][variant.name] = None if cost is None else str(cost)
    return costs
