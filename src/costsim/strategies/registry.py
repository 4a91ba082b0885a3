"""Strategies and variants.

A strategy is one registry entry: a name, a pydantic model of its parameters, and a pure
``apply(trace, params, context) -> (trace, events)``. It never prices, prints or reads files.
A variant is an ordered list of (strategy, parameters) steps.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, ValidationError

from costsim.cache.rules import CacheRules
from costsim.errors import ConfigError
from costsim.metering.meter import Meter
from costsim.strategies.trace import Event, SimTrace

__all__ = [
    "STRATEGIES",
    "AgentSpec",
    "Context",
    "Params",
    "Step",
    "Strategy",
    "Variant",
    "get_strategy",
    "make_step",
    "parse_step",
    "register",
]


class Params(BaseModel):
    """Base of every strategy's parameters: unknown keys are errors."""

    model_config = ConfigDict(extra="forbid", frozen=True)


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


class Strategy(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def summary(self) -> str: ...

    @property
    def params(self) -> type[Params]: ...

    def apply(
        self, trace: SimTrace, params: Any, context: Context
    ) -> tuple[SimTrace, list[Event]]: ...


STRATEGIES: dict[str, Strategy] = {}


def register(strategy: Strategy) -> Strategy:
    STRATEGIES[strategy.name] = strategy
    return strategy


def _load_builtins() -> None:
    import costsim.strategies  # noqa: F401  (registers the built-in strategies)


def get_strategy(name: str) -> Strategy:
    _load_builtins()
    strategy = STRATEGIES.get(name)
    if strategy is None:
        valid = sorted(STRATEGIES)
        close = difflib.get_close_matches(name, valid, n=1)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        raise ConfigError(f"{name!r} is not a strategy.{hint} Valid: {', '.join(valid)}")
    return strategy


def _text(value: Any) -> str:
    """A parameter value the way ``parse_step`` reads it back (lists as ``a+b``)."""
    if isinstance(value, list | tuple):
        return "+".join(_text(item) for item in value)
    if isinstance(value, dict):
        return "{" + ",".join(f"{k}={_text(v)}" for k, v in sorted(value.items())) + "}"
    return str(value)


@dataclass(frozen=True, slots=True)
class Step:
    strategy: str
    params: Params

    def describe(self) -> str:
        values = self.params.model_dump(exclude_defaults=True)
        if not values:
            return self.strategy
        return f"{self.strategy}:" + ",".join(f"{k}={_text(v)}" for k, v in sorted(values.items()))


@dataclass(frozen=True, slots=True)
class Variant:
    name: str
    steps: tuple[Step, ...] = ()

    @property
    def identity(self) -> bool:
        return not self.steps

    def describe(self) -> str:
        return " -> ".join(step.describe() for step in self.steps) or "(as recorded)"

    def without(self, index: int) -> Variant:
        return Variant(
            f"{self.name} - {self.steps[index].strategy}",
            self.steps[:index] + self.steps[index + 1 :],
        )


def make_step(name: str, params: Mapping[str, Any] | None = None, *, where: str = "") -> Step:
    """Validate a strategy's parameters; errors name the strategy, key and value."""
    strategy = get_strategy(name)
    try:
        return Step(name, strategy.params.model_validate(dict(params or {})))
    except ValidationError as exc:
        problems = []
        for error in exc.errors():
            key = ".".join(str(part) for part in error["loc"]) or "(parameters)"
            value = error.get("input")
            problems.append(f"{key}={value!r}: {error['msg']}")
        known = ", ".join(strategy.params.model_fields)
        prefix = f"{where}: " if where else ""
        raise ConfigError(
            f"{prefix}invalid parameters for strategy {name!r}: {'; '.join(problems)} "
            f"(parameters: {known})"
        ) from None


def _scalar(text: str) -> Any:
    lowered = text.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    if "+" in text:
        return [_scalar(part) for part in text.split("+") if part]
    return text


def parse_step(text: str) -> Step:
    """``name[:key=value,...]`` from the command line; ``a+b`` is a list, ``a.b=v`` a nested
    key."""
    name, _, rest = text.partition(":")
    params: dict[str, Any] = {}
    for pair in filter(None, rest.split(",")):
        key, sep, value = pair.partition("=")
        if not sep:
            raise ConfigError(f"strategy option {pair!r} in {text!r} is not key=value")
        *parents, leaf = key.strip().split(".")  # tiers.light=... sets a nested key
        target = params
        for parent in parents:
            target = target.setdefault(parent, {})
        target[leaf] = _scalar(value.strip())
    return make_step(name.strip(), params, where=f"--strategy {text}")
