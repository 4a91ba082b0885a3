"""The built-in strategies; importing this package registers them."""

from __future__ import annotations

from costsim.strategies import (
    batching,
    caching,
    compaction,
    expectations,
    lean_context,
    routing,
    selective_tools,
    thinking_budget,
    truncation,
)

__all__ = [
    "batching",
    "caching",
    "compaction",
    "expectations",
    "lean_context",
    "routing",
    "selective_tools",
    "thinking_budget",
    "truncation",
]
