"""The strategy registry, and variants: ordered lists of (strategy, parameters) steps.

Strategies are found through the ``costsim.strategies`` entry-point group, the way pytest finds
plugins through ``pytest11``: costsim's own built-ins are entries of its package metadata, and a
team's strategy in its own package is one more entry::

    [project.entry-points."costsim.strategies"]
    redact_pii = "my_package.costsim_strategies:RedactPii"

An entry names a :class:`~costsim.strategies.base.Strategy` (an instance, or a class called with
no arguments). Entries are loaded on first use; one that fails to load is reported when its
name is asked for, and never hides the others.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib.metadata import EntryPoint, entry_points
from typing import Any

from pydantic import ValidationError

from costsim.errors import ConfigError
from costsim.strategies.base import AgentSpec, Context, Params, Strategy

__all__ = [
    "GROUP",
    "STRATEGIES",
    "AgentSpec",
    "Context",
    "Params",
    "Step",
    "Strategy",
    "Variant",
    "bound_words",
    "get_strategy",
    "make_step",
    "register",
    "strategies",
]


STRATEGIES: dict[str, Strategy] = {}


GROUP = "costsim.strategies"
_BROKEN: dict[str, str] = {}
"""Entry points that failed to load: name -> why."""


def register(strategy: Strategy) -> Strategy:
    """Add a strategy by hand (entry points are the way for installed packages)."""
    STRATEGIES[strategy.name] = strategy
    return strategy


def _load(entry: EntryPoint) -> Strategy:
    loaded = entry.load()
    strategy: Strategy = loaded() if isinstance(loaded, type) else loaded
    for attribute in ("name", "summary", "params", "apply"):
        if not hasattr(strategy, attribute):
            raise TypeError(f"{entry.value} has no {attribute!r}: not a costsim strategy")
    if strategy.name != entry.name:
        raise TypeError(f"{entry.value} is named {strategy.name!r}, not {entry.name!r}")
    return strategy


def _costsim_first(entry: EntryPoint) -> tuple[bool, str]:
    return not entry.module.startswith("costsim."), entry.name


@cache
def _discover() -> None:
    """Load every ``costsim.strategies`` entry point once; a broken one is kept aside."""
    for entry in sorted(entry_points(group=GROUP), key=_costsim_first):
        if entry.name in STRATEGIES:
            continue  # the first (costsim's own, then by name) wins
        try:
            STRATEGIES[entry.name] = _load(entry)
        except Exception as exc:  # a third party's import error must not hide the rest
            _BROKEN[entry.name] = f"{entry.value}: {type(exc).__name__}: {exc}"


def strategies() -> dict[str, Strategy]:
    """Every registered strategy, by name."""
    _discover()
    return dict(sorted(STRATEGIES.items()))


def get_strategy(name: str) -> Strategy:
    _discover()
    strategy = STRATEGIES.get(name)
    if strategy is not None:
        return strategy
    if name in _BROKEN:
        raise ConfigError(f"strategy {name!r} could not be loaded ({_BROKEN[name]})")
    valid = sorted(STRATEGIES)
    close = difflib.get_close_matches(name, valid, n=1)
    hint = f" Did you mean {close[0]!r}?" if close else ""
    raise ConfigError(f"{name!r} is not a strategy.{hint} Valid: {', '.join(valid)}")


_SPECIAL = set(',&+=:"') | {" "}


def _text(value: Any) -> str:
    """A parameter value the way :mod:`costsim.strategies.syntax` reads it back: lists as
    ``a+b``, ``true``/``false``, ``null``, text holding a separator in double quotes."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple | set | frozenset):
        items = sorted(value) if isinstance(value, set | frozenset) else value
        return "+".join(_text(item) for item in items)
    text = str(value)
    return f'"{text}"' if not text or _SPECIAL & set(text) else text


def _options(values: Mapping[str, Any], prefix: str = "") -> list[str]:
    """``key=value`` pairs, nested mappings as dotted keys (``tiers.light=...``)."""
    pairs: list[str] = []
    for key, value in sorted(values.items()):
        if isinstance(value, Mapping) and value:
            pairs += _options(value, f"{prefix}{key}.")
        else:
            pairs.append(f"{prefix}{key}={_text(value)}")
    return pairs


@dataclass(frozen=True, slots=True)
class Step:
    strategy: str
    params: Params

    def describe(self) -> str:
        """The step in the strategy syntax: ``caching:ttl=1h`` (parameters left at their
        defaults are not written)."""
        values = self.params.written()
        if not values:
            return self.strategy
        return f"{self.strategy}:" + ",".join(_options(values))


@dataclass(frozen=True, slots=True)
class Variant:
    name: str
    steps: tuple[Step, ...] = ()

    @property
    def identity(self) -> bool:
        return not self.steps

    @property
    def knows_the_future(self) -> bool:
        """A step reads the trace's future (an oracle): the variant is a bound, not a plan."""
        return any(step.params.knows_the_future for step in self.steps)

    def describe(self) -> str:
        """The variant in the strategy syntax (``truncation & caching``), which ``-s`` and
        ``--costsim-strategies`` read back."""
        return " & ".join(step.describe() for step in self.steps) or "(as recorded)"

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
        known = list(strategy.params.model_fields)
        problems = [_param_problem(error, known) for error in exc.errors()]
        prefix = f"{where}: " if where else ""
        raise ConfigError(
            f"{prefix}invalid parameters for strategy {name!r}: {'; '.join(problems)} "
            f"(parameters: {', '.join(known)}; see costsim strategies {name})"
        ) from None


_EXPECTED = {
    "int_parsing": "a whole number",
    "int_type": "a whole number",
    "int_from_float": "a whole number",
    "float_parsing": "a number",
    "float_type": "a number",
    "bool_parsing": "true or false",
    "bool_type": "true or false",
    "string_type": "text",
    "list_type": "a list",
    "tuple_type": "a list",
    "dict_type": "a mapping",
}


def _param_problem(error: Any, known: list[str]) -> str:
    """One parameter problem in plain words, naming the key and the value given."""
    loc = [str(part) for part in error["loc"]]
    value = error.get("input")
    if not loc:  # a rule over several parameters: the rule says which
        return str(error["msg"]).removeprefix("Value error, ")
    if loc[-1] == "[key]":  # a mapping's key, not a value: tiers.lite.[key]
        return f"{'.'.join(loc[:-2])} key {value!r}: {_what(error, known)}"
    given = "(missing)" if error["type"] == "missing" else repr(value)
    return f"{'.'.join(loc)}={given}: {_what(error, known)}"


def _what(error: Any, known: list[str]) -> str:
    """What is wrong with one parameter's value."""
    kind = error["type"]
    if kind == "extra_forbidden":
        close = difflib.get_close_matches(str(error["loc"][-1]), known, n=1)
        return "unknown parameter" + (f" (did you mean {close[0]!r}?)" if close else "")
    if kind == "literal_error":
        return f"expected one of {error['ctx']['expected']}"
    if kind == "missing":
        return "a value is required"
    if kind in _EXPECTED:
        return f"expected {_EXPECTED[kind]}"
    bound = bound_words(kind, error.get("ctx") or {})
    if bound is not None:
        return f"must be {bound}"
    return str(error["msg"]).removeprefix("Value error, ")


_BOUNDS = {
    "greater_than_equal": ("ge", "{} or more"),
    "greater_than": ("gt", "above {}"),
    "less_than_equal": ("le", "{} or less"),
    "less_than": ("lt", "below {}"),
}


def bound_words(kind: str, ctx: Mapping[str, Any]) -> str | None:
    """A pydantic bound error in words (``0 or more``, ``below 4``); None for other kinds.
    Strategy parameters and scenario files say bounds alike."""
    if kind not in _BOUNDS:
        return None
    name, words = _BOUNDS[kind]
    bound = ctx.get(name)
    return words.format(f"{bound:g}" if isinstance(bound, int | float) else bound)
