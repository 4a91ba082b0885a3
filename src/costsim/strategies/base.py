"""What a strategy is: a name, a pydantic model of its parameters, and a pure transform.

``apply(trace, params, context) -> (trace, events)`` never prices, prints or reads files. Third
parties implement :class:`Strategy` in their own package and register it through the
``costsim.strategies`` entry-point group (see :mod:`costsim.strategies.registry`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict

from costsim.cache.prefix import Prefix
from costsim.cache.rules import CacheRules
from costsim.metering.meter import Meter
from costsim.strategies.trace import Event, SimCall, SimTrace

__all__ = ["AgentSpec", "Context", "Params", "Strategy"]


class Params(BaseModel):
    """Base of every strategy's parameters: unknown keys are errors."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)
    """A docstring under a field is its meaning (``costsim strategies NAME`` prints it)."""

    @property
    def knows_the_future(self) -> bool:
        """Whether the step reads the trace's future (an oracle): a bound on what a client
        can do, not something it can deploy."""
        return False

    def written(self) -> dict[str, Any]:
        """The parameters a step writes out: those not at their defaults (a parameter whose
        default follows from another, left to follow, is not written either)."""
        return self.model_dump(exclude_defaults=True, mode="json")


@dataclass(frozen=True, slots=True)
class AgentSpec:
    """An agent role from the scenario: how its calls are recognised, its cost tier."""

    pattern: str | None = None
    tier: str | None = None


@dataclass(frozen=True, slots=True)
class Context:
    """Read-only helpers a strategy may use (token estimates, cache rules, agent roles)."""

    meter: Meter
    rules: CacheRules
    tags: Mapping[str, str] = field(default_factory=dict)
    """Agent role per cassette path pattern, from the scenario."""
    agents: Mapping[str, AgentSpec] = field(default_factory=dict)
    evaluate: Callable[[SimTrace], tuple[Decimal, Decimal] | None] | None = None
    """What a variant of a trace costs as the engine bills it (anchored on the recording),
    and the recorded cost; None when it cannot be priced. For strategies that must never make
    a trace dearer."""
    layout: Callable[[SimCall], Prefix] | None = None
    """The engine's cache prefix of a request: block identities and token positions."""
    warm: Callable[[Path], Mapping[int, frozenset[str]]] | None = None
    """Per recorded call of a trace (by ``id``), the cache prefixes its recording
    shows were warm before it: the client had sent them already (DESIGN.md section 4)."""


class Strategy(Protocol):
    """A strategy: its name, one-line summary, parameter model and ``apply``. It may also say
    ``removes_only = True`` when it only takes content away from requests (or changes none):
    the bands then take a request it shrank to be no longer than recorded."""

    @property
    def name(self) -> str: ...

    @property
    def summary(self) -> str: ...

    @property
    def params(self) -> type[Params]: ...

    def apply(
        self, trace: SimTrace, params: Any, context: Context
    ) -> tuple[SimTrace, list[Event]]: ...
