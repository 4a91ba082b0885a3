"""Strategies: pure transforms of a recorded trace (:mod:`costsim.strategies.base`), found
through the ``costsim.strategies`` entry-point group (:mod:`costsim.strategies.registry`).

The built-in ones, one module each: batching, caching, compaction, expectations, lean_context,
routing, selective_tools, thinking_budget, truncation.
"""
