"""A third-party costsim strategy, as a team would ship it in its own package.

Installed through the ``costsim.strategies`` entry-point group (see the dist-info folder beside
it, which is what ``pip install`` writes for the ``[project.entry-points."costsim.strategies"]``
table of a pyproject.toml).
"""

from __future__ import annotations

import dataclasses

from costsim.model import TextBlock
from costsim.strategies.base import Context, Params
from costsim.strategies.trace import Event, SimTrace


class TrimSystemParams(Params):
    keep_chars: int = 40
    """Characters of each system text block to keep."""


class TrimSystem:
    name = "trim_system"
    summary = "keep only the first characters of each system prompt block"
    params = TrimSystemParams

    def apply(
        self, trace: SimTrace, params: TrimSystemParams, context: Context
    ) -> tuple[SimTrace, list[Event]]:
        calls = []
        events = []
        for item in trace.calls:
            system = tuple(
                dataclasses.replace(block, text=block.text[: params.keep_chars])
                if isinstance(block, TextBlock) and len(block.text) > params.keep_chars
                else block
                for block in item.call.system
            )
            if system == item.call.system:
                calls.append(item)
                continue
            events.append(Event(self.name, "change", "system prompt trimmed", item.call.provenance))
            calls.append(
                dataclasses.replace(item, call=dataclasses.replace(item.call, system=system))
            )
        return SimTrace(trace.path, tuple(calls)), events
