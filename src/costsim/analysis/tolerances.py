"""Regression tolerances (``cost:5%,prompt_tokens:10%``): what a baseline comparison allows.

Kept apart from the baselines themselves so that reading them (a pytest run's options and
markers) imports nothing heavy.
"""

from __future__ import annotations

import re

from costsim.errors import ConfigError

__all__ = ["METRICS", "TOKEN_METRICS", "parse_tolerances"]

METRICS = ("cost", "prompt_tokens", "output_tokens", "calls")
TOKEN_METRICS = ("prompt_tokens", "output_tokens")
ALIASES = {"cost_usd": "cost"}
"""Other names of a metric: budgets name the cost ``cost_usd``, as the reports do."""


def parse_tolerances(text: str) -> dict[str, float]:
    """``cost:5%,prompt_tokens:10%`` -> {metric: percent}; raises with the bad part quoted."""
    tolerances: dict[str, float] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        match = re.fullmatch(r"(\w+):(-?\d+(?:\.\d+)?)%?", part)
        if match is None:
            raise ConfigError(f"tolerance {part!r} is not METRIC:PCT% (e.g. cost:5%)")
        metric = ALIASES.get(match.group(1), match.group(1))
        if metric not in METRICS:
            valid = ", ".join(METRICS).replace("cost", "cost (or cost_usd)", 1)
            raise ConfigError(f"tolerance {part!r}: unknown metric {metric!r}; valid: {valid}")
        if match.group(2).startswith("-"):
            raise ConfigError(f"tolerance {part!r}: a tolerance is 0% or more")
        tolerances[metric] = float(match.group(2))
    return tolerances
