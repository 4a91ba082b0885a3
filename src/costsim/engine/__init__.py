"""The simulation engine: variants of recorded traces, metered and cache-simulated."""

from __future__ import annotations

from costsim.engine.simulate import Engine, SimulatedCall, TraceResult, VariantResult
from costsim.strategies.registry import (
    STRATEGIES,
    Context,
    Step,
    Variant,
    get_strategy,
    make_step,
)
from costsim.strategies.syntax import parse_step, parse_variant, parse_variants
from costsim.strategies.trace import Event, SimCall, SimTrace

__all__ = [
    "STRATEGIES",
    "Context",
    "Engine",
    "Event",
    "SimCall",
    "SimTrace",
    "SimulatedCall",
    "Step",
    "TraceResult",
    "Variant",
    "VariantResult",
    "get_strategy",
    "make_step",
    "parse_step",
    "parse_variant",
    "parse_variants",
]
