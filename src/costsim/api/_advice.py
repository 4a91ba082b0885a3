"""``costsim.advise``: the caching placement and TTL that minimise cost on a set of traces."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from costsim.analysis.advice import advise_caching
from costsim.api._traffic import TracesLike, estimator, traces_of, utc
from costsim.api.execution import current
from costsim.api.results import Advice
from costsim.cache.rules import default_rules
from costsim.engine import Engine
from costsim.errors import ConfigError
from costsim.io.walk import Progress

__all__ = ["ADVICE_TOPICS", "advise"]

ADVICE_TOPICS = ("caching",)
"""What :func:`advise` can advise on."""


def advise(
    traces: TracesLike,
    topic: str = "caching",
    *,
    as_of: datetime | None = None,
    gap: float | None = None,
    lenient: bool = False,
    warm: str | None = None,
    include: Iterable[str] = (),
    exclude: Iterable[str] = (),
    progress: Progress | None = None,
) -> Advice:
    """The ``caching`` placement and TTL that minimise cost on ``traces``, each placement's
    saving with its p90 band in dollars, and why money is left on the table (prompts never
    re-sent, below the minimum, re-sent after the TTL, dynamic content early in the prompt).
    ``warm``: ``steady`` or ``first`` (default: the project's, else ``steady``), as
    :func:`compare` takes it."""
    if topic not in ADVICE_TOPICS:
        raise ConfigError(f"no advice on {topic!r}; topics: {', '.join(ADVICE_TOPICS)}")
    loaded = traces_of(traces, lenient=lenient, include=include, exclude=exclude, progress=progress)
    rules = default_rules().with_gap(gap).with_warm(warm if warm is not None else current().warm)
    engine = Engine(loaded, rules=rules, meter=estimator())
    data = advise_caching(engine, as_of=utc(as_of))
    return Advice(data, skipped=loaded.skipped, warnings=loaded.warnings)
