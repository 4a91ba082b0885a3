"""``routing``: choose the model per call by agent role, cost tier and task complexity.

Resolution per call: a per-agent override (model or tier) > the agent's cost tier (from the
scenario's ``agents``, recognised by system-prompt pattern) > the recorded model (``models``)
> the complexity heuristic on the latest user text (when enabled) > ``default`` (a tier or
model; unset keeps the recorded model).
Routed calls are repriced at the new model; their prompt is re-estimated with the new model's
calibration family, and the model change breaks the prompt cache, which the cache simulation
shows. Outputs are replayed as recorded (the report says so).

Divergence: a call moved to a cheaper model whose recorded response used tools or long
reasoning — the cheaper model may not have done the same.
"""

from __future__ import annotations

import dataclasses
import re
from datetime import datetime
from typing import Literal

from pydantic import Field, field_validator

from costsim.metering.models import encoding_for, provider_of
from costsim.model import Call, Platform, TextBlock, ToolResultBlock, ToolUseBlock
from costsim.model.quoting import quoted, short_name
from costsim.model.reasoning import reasons
from costsim.pricing.input_price import input_price
from costsim.pricing.names import close_model
from costsim.pricing.platform_ids import model_name, on_platform, price_list
from costsim.pricing.prices import today
from costsim.pricing.tiers import listed_from
from costsim.strategies.base import Context, Params
from costsim.strategies.routing_idle import COMPLEXITY_REASONS, idle_rules
from costsim.strategies.routing_notes import RoutedPairs
from costsim.strategies.trace import Event, SimCall, SimTrace

__all__ = ["Routing", "RoutingParams"]

Tier = Literal["light", "standard", "heavy"]

_LIGHT = r"^\s*(hi|hello|hey|thanks|thank you|ok|yes|no)\b|^\W*\w+(\W+\w+){0,7}\W*\?\s*$"
_HEAVY = r"\b(analy[sz]e|refactor|architect\w*|design|multi-step|step by step|plan|migrate|debug)\b"


class RoutingParams(Params):
    tiers: dict[Tier, str] = Field(default_factory=dict)
    """Model per tier, e.g. {light: claude-haiku-4-5, standard: claude-sonnet-4-5}."""
    agents: dict[str, str] = Field(default_factory=dict)
    """Per-agent override: agent name -> tier or model."""
    agent_patterns: dict[str, str] = Field(default_factory=dict)
    """Agent name -> regex on the system prompt (added to the scenario's ``agents``)."""
    agent_tiers: dict[str, Tier] = Field(default_factory=dict)
    """Agent name -> cost tier (added to the tiers the scenario's ``agents`` declare)."""
    models: dict[str, str] = Field(default_factory=dict)
    """Recorded model -> tier or model: every call of that model, e.g. {gpt-4o: gpt-4o-mini}
    (the name or its dated snapshots, ``gpt-4o-2024-08-06``; not ``gpt-4o-mini``), on every
    platform (a key may be Bedrock's or Vertex AI's id of the model)."""
    complexity: bool = False
    """Route by the latest user text: greetings and short questions light, analysis heavy."""
    default: str | None = None
    """Tier or model for calls no rule routes; unset keeps the recorded model."""
    long_reasoning_tokens: int = Field(default=1000, ge=0)
    """A downgraded call that reasoned longer than this is a divergence."""

    @field_validator("agent_patterns")
    @classmethod
    def _compiles(cls, value: dict[str, str]) -> dict[str, str]:
        for name, pattern in value.items():
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(
                    f"agent_patterns.{name}: {pattern!r} is not a regular expression: {exc}"
                ) from None
        return value


def _system_text(call: Call) -> str:
    blocks = call.system or next(
        (m.content for m in call.messages if m.role in ("system", "developer")), ()
    )
    return "".join(b.text for b in blocks if isinstance(b, TextBlock))


def _latest_user_text(call: Call) -> str:
    for message in reversed(call.messages):
        if message.role != "user":
            continue
        if any(isinstance(b, ToolResultBlock) for b in message.content):
            return ""
        return " ".join(b.text for b in message.content if isinstance(b, TextBlock))
    return ""


@dataclasses.dataclass(frozen=True, slots=True)
class _Router:
    params: RoutingParams
    patterns: tuple[tuple[str, re.Pattern[str]], ...]
    tiers: dict[str, str]
    """Agent name -> tier."""
    models: dict[str, str]
    """Tier -> model."""

    def agent(self, call: Call) -> str | None:
        text = _system_text(call)
        return next((name for name, pattern in self.patterns if pattern.search(text)), None)

    def model_for(self, choice: str) -> str:
        return self.models.get(choice, choice)

    @property
    def can_route(self) -> bool:
        """Whether any rule can route a call: an agent rule, tiers by complexity, a default."""
        agents = bool(self.patterns) and bool(self.params.agents or self.tiers)
        tiers = self.params.complexity and bool({"light", "heavy"} & set(self.models))
        return agents or tiers or bool(self.params.models) or self.params.default is not None

    def route(self, call: Call) -> tuple[str | None, str]:
        """(model or None to keep, why)."""
        agent = self.agent(call)
        if agent is not None and agent in self.params.agents:
            return self.model_for(self.params.agents[agent]), f"agent {agent} override"
        if agent is not None and agent in self.tiers:
            tier = self.tiers[agent]
            if tier in self.models:
                return self.models[tier], f"agent {agent} is {tier} tier"
        recorded = _recorded_model(self.params.models, call)
        if recorded is not None:
            return self.model_for(self.params.models[recorded]), f"{recorded} calls"
        if self.params.complexity:
            text = _latest_user_text(call)
            if text and re.search(_HEAVY, text, re.IGNORECASE) and "heavy" in self.models:
                return self.models["heavy"], "complex task"
            if text and re.search(_LIGHT, text, re.IGNORECASE) and "light" in self.models:
                return self.models["light"], "short or simple message"
        if self.params.default is not None:
            return self.model_for(self.params.default), "default"
        return None, ""


def _recorded_model(models: dict[str, str], call: Call) -> str | None:
    """The first key of ``models`` that names ``call``'s model (see :func:`_names`)."""
    return next((key for key in models if _names(key, call)), None)


def _names(key: str, call: Call) -> bool:
    """Whether ``key`` (of ``models``) names ``call``'s model: the name itself or a dated
    snapshot of it (``gpt-4o-2024-08-06``, ``claude-sonnet-4-5-20250929``), never a longer
    model's name (``gpt-4o`` is not ``gpt-4o-mini``). Both are compared as the models they name,
    platform decorations aside: ``claude-sonnet-4-5``, its dated name and Bedrock's or Vertex
    AI's id of it each name that model's calls wherever they were served."""
    dated = re.compile(re.escape(model_name(key)) + r"(-\d{4}-?\d{2}-?\d{2})?")
    recorded = (call.model, call.priced_model, call.response_model)
    return any(dated.fullmatch(model_name(name)) for name in recorded if name)


def _unmatched(models: dict[str, str], trace: SimTrace) -> list[Event]:
    """A note per key of ``models`` that names no call of ``trace``, said of the run: shown
    when it names no call of any trace (a key that routes nothing used to pass without a
    word, and a platform's id it could not read then saved nothing)."""
    if not trace.calls:
        return []
    return [
        Event(
            "routing",
            "note",
            f"models.{key} routes nothing: no call of the run is of that model (by its name, a "
            f"dated snapshot or a platform's id of it){_meant(key)}",
            trace.calls[0].call.provenance,
            of_run=True,
        )
        for key in models
        if not any(_names(key, item.call) for item in trace.calls)
    ]


def _meant(key: str) -> str:
    """``; did you mean gpt-4o?`` for a key no model genai-prices knows is named (``gpt4o``)."""
    close = close_model(key, provider_of(key))
    return f"; did you mean {close}?" if close is not None else ""


def _priced(routed: Call, price: float | None, when: datetime) -> bool:
    """A routed call has a price: at the list that bills it (``price``), or at its own
    provider's, which bills a model a platform's list lacks (a Bedrock route off its list)."""
    own = provider_of(routed.model)
    return price is not None or (
        own is not None and input_price(routed.model, own, when)[0] is not None
    )


def _same_model(call: Call, model: str, when: datetime) -> bool:
    """``model`` is the call's own, by a name it was recorded or priced under, or by another
    name of the same model (an undated alias of a dated Claude name: one price, one cache)."""
    if model in (call.model, call.priced_model):
        return True
    return input_price(*price_list(call), when)[1] == input_price(*price_list(call, model), when)[1]


def _not_routable(call: Call, model: str, when: datetime) -> str | None:
    """Why ``call`` cannot go to ``model`` (None: it can): another provider's model (requests
    are not translated), or, for a call another provider's host served (Azure OpenAI,
    Mistral, ...), a model that host's price list does not carry."""
    target = provider_of(model)
    if target is not None and target != call.provider:
        return (
            f"{call.provider} calls not routed to {model}: requests are not translated "
            "between providers"
        )
    if call.served_by is not None and input_price(model, call.served_by, when)[0] is None:
        return f"{call.served_by} calls not routed to {model}: {call.served_by} does not list it"
    return None


def _without_reasoning(item: SimCall) -> tuple[SimCall, list[Event]]:
    """A call routed from a model that reasoned, as reported, to one that does not
    (gpt-4o-mini, say): the answer as recorded without its reasoning tokens, which it used to
    keep billed on the new model; and the change, said. Any other call as it is."""
    origin, routed = item.origin, item.call
    usage = origin.usage if origin is not None else None
    output = item.output if item.output is not None else (usage.output if usage else None)
    reasoning = item.reasoning if item.output is not None else (usage.reasoning if usage else None)
    if output is None or not reasoning or reasons(dataclasses.replace(routed, thinking=None)):
        return item, []
    said = (
        f"{routed.model} does not reason: its {reasoning:,} recorded reasoning tokens are not "
        "billed (the answer is kept as recorded)"
    )
    shed = dataclasses.replace(item, output=max(output - reasoning, 0), reasoning=0)
    return shed, [Event("routing", "change", said, routed.provenance)]


def _risky(item: SimCall, params: RoutingParams) -> str | None:
    origin = item.origin
    if origin is None:
        return None
    if any(isinstance(b, ToolUseBlock) for b in origin.response):
        return "its recorded response called tools"
    reasoning = origin.usage.reasoning if origin.usage is not None else None
    if reasoning is not None and reasoning > params.long_reasoning_tokens:
        return f"its recorded response reasoned for {reasoning:,} tokens"
    return None


_NO_RULE = (
    "no rule routes any call: tiers apply with complexity=true or to agents, else give "
    "agents, models or a default (costsim strategies routing)"
)


def _target(router: _Router, call: Call) -> tuple[str | None, str]:
    """Where the router sends ``call`` (None: it stays), and why; on the call's own platform
    (a Bedrock call to Bedrock's id of the model, in its region class, priced at Bedrock's
    price; a platform's id written for another platform's call as the model it names)."""
    model, why = router.route(call)
    if model is not None:
        model = on_platform(model, call.platform, call.model)
    return model, why


def _off_list(calls: list[SimCall]) -> list[Event]:
    """A note per model a Bedrock call was routed to that genai-prices lists no Bedrock model
    for: it is priced at the provider's own list (Bedrock's regional endpoints bill about 10%
    more for recent models), so the saving may read high; said once per trace and model."""
    first: dict[str, SimCall] = {}
    for item in calls:
        call, origin = item.call, item.origin
        routed = origin is not None and call.model != origin.model
        plain = "anthropic." not in call.model.lower()  # not a Bedrock id: off its list
        if routed and plain and call.platform is Platform.BEDROCK:
            first.setdefault(call.model, item)
    return [
        Event(
            "routing",
            "note",
            f"genai-prices lists no single Bedrock model {quoted(model)}: priced at its provider's "
            "own list price, which Bedrock's regional endpoints exceed (about 10% for recent "
            "models)",
            item.call.provenance,
        )
        for model, item in first.items()
    ]


def _nameless(names: list[str], call: Call) -> Event:
    more = f" ({len(names) - 1} more alike)" if len(names) > 1 else ""
    return Event(
        "routing",
        "note",
        f"agents.{names[0]} routes an agent with no pattern to recognise its calls by: give "
        f"agent_patterns.{names[0]}=REGEX (on the system prompt) or the scenario's agents{more}",
        call.provenance,
    )


def _caveats(call: Call, routed: Call, when: datetime) -> str:
    """What a routed call's change says besides why: a tier the new model has no price at,
    a prompt counted again (the new model's tokenizer differs: its tokens change too)."""
    said = ""
    tier = call.service_tier
    if tier and listed_from(*price_list(call, routed.model), tier, when) is None:
        said += f"; no {tier} price for {routed.model}: billed at its standard price"
    counted = encoding_for(routed)
    if counted != encoding_for(call):
        said += f"; its prompt counted again in {counted}, the new model's tokenizer"
    return said


class Routing:
    name = "routing"
    summary = "route each call to a model by agent, tier and task complexity"
    params = RoutingParams

    def apply(
        self, trace: SimTrace, params: RoutingParams, context: Context
    ) -> tuple[SimTrace, list[Event]]:
        patterns = {name: rule.pattern for name, rule in context.agents.items() if rule.pattern}
        patterns.update(params.agent_patterns)
        tiers: dict[str, str] = {n: r.tier for n, r in context.agents.items() if r.tier}
        tiers.update(params.agent_tiers)
        router = _Router(
            params,
            tuple((name, re.compile(pattern)) for name, pattern in patterns.items()),
            tiers,
            {str(tier): model for tier, model in params.tiers.items()},
        )
        events = _unmatched(params.models, trace)
        nameless = [name for name in params.agents if name not in patterns]
        if nameless and trace.calls:  # an override no call can be recognised for
            events.append(_nameless(nameless, trace.calls[0].call))
        if not router.can_route and trace.calls:
            no_rule = Event(self.name, "note", _NO_RULE, trace.calls[0].call.provenance)
            return trace, [*events, no_rule]
        calls: list[SimCall] = []
        skipped: set[str] = set()
        pairs = RoutedPairs(self.name)
        by_complexity = 0
        for item in trace.calls:
            call = item.call
            model, why = _target(router, call)
            by_complexity += why in COMPLEXITY_REASONS
            when = call.recorded_at or today()  # priced at today's prices, as anchoring does
            # an errored call (a 429 retried) is unbilled: sent to another model, it still is
            if model is None or call.errored or _same_model(call, model, when):
                calls.append(item)
                continue
            why_not = _not_routable(call, model, when)
            if why_not is not None:
                if model not in skipped:  # said once per trace
                    skipped.add(model)
                    events.append(Event(self.name, "note", why_not, call.provenance))
                calls.append(item)
                continue
            routed = dataclasses.replace(call, model=model, response_model=None)
            why += _caveats(call, routed, when)
            events.append(
                Event(
                    self.name,
                    "change",
                    f"{short_name(call.priced_model)} -> {model} ({why})",
                    call.provenance,
                )
            )
            before, was = input_price(*price_list(call), when)
            after, to = input_price(*price_list(call, model), when)
            dear = before is not None and after is not None and after > before
            if not call.errored:  # an errored request was billed nothing
                pairs.add(item, routed, was, to, dearer=dear, priced=_priced(routed, after, when))
            if before is not None and after is not None and after < before:
                reason = _risky(item, params)
                if reason is not None:
                    events.append(
                        Event(
                            self.name,
                            "divergence",
                            f"downgraded to {model}, but {reason}",
                            call.provenance,
                        )
                    )
            moved, said = _without_reasoning(dataclasses.replace(item, call=routed))
            events += said
            calls.append(moved)
        events += _off_list(calls)
        named = {*tiers.values(), *params.agents.values(), *params.models.values()}
        events += idle_rules(
            router.models,
            named | ({params.default} if params.default else set()),
            complexity=params.complexity,
            by_complexity=by_complexity,
            trace=trace,
        )
        events += pairs.events()  # said once per trace and billed pair
        return SimTrace(trace.path, tuple(calls)), events
