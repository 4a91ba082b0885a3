"""A model as a platform names it, and the model a platform's id names.

A model named plainly (``claude-haiku-4-5``) as a platform names it, for a call served there:
routing a Bedrock call to Haiku moves it to Bedrock's Haiku, billed at Bedrock's price. And
back: the model a recorded id names whatever served it (:func:`model_name`), so that a rule
naming a model finds its calls on every platform.

Amazon Bedrock names a Claude model ``{geo}.anthropic.{model}-{date}-v1:0``: a cross-region
inference profile (``us.``, ``eu.``, ``apac.``, ...; genai-prices' ``regional`` prices, 10%
above Anthropic's for recent models) or ``global.`` (its ``global`` prices), or no geo at all
(in-region, regional prices). genai-prices' AWS list names each dated model it prices; the
routed call takes the dated id of the plain name, with the geo of the call it replaces.
"""

from __future__ import annotations

import re
from decimal import Decimal
from functools import cache

from genai_prices import Usage, calc_price, data_snapshot

from costsim.model import Call, Platform

__all__ = ["bedrock_id", "model_name", "on_platform", "price_list"]

_BEDROCK = re.compile(r"^(?P<geo>(?:[a-z-]+\.)?)anthropic\.")
_DECORATED = re.compile(r"^(?:.*/)?(?:[a-z-]+\.)?anthropic\.(?P<name>.+?)(?:(?<=\d{8})-v\d+:\d+)?$")
"""Bedrock's id of a Claude model: a geo (or none), the vendor, the model and, after its date,
its version (``anthropic.claude-v2:1`` has no date: its ``-v2`` is its name)."""
_VERTEX_DATE = re.compile(r"@(?=\d{8}$)")


def model_name(model: str) -> str:
    """The model ``model`` (a recorded id, or a rule's name for one) names, without a
    platform's decoration, lower-case: Bedrock's geo, vendor and version
    (``us.anthropic.claude-sonnet-4-5-20250929-v1:0``, ``%3A``-encoded or not), Vertex AI's
    ``@`` before the date (``claude-sonnet-4-5@20250929``), a gateway's ``vendor/`` prefix
    (OpenRouter's): each of these is ``claude-sonnet-4-5-20250929``, as Anthropic names it."""
    name = model.lower().replace("%3a", ":")
    found = _DECORATED.match(name)
    if found is not None:
        name = found["name"]
    name = _VERTEX_DATE.sub("-", name)
    return name.rsplit("/", 1)[-1]


def on_platform(model: str, platform: Platform | None, like: str) -> str:
    """``model`` (where a rule sends a call of ``like`` served on ``platform``) as that
    platform names it: on Bedrock, Bedrock's id with the geo of ``like`` (its region class),
    unless ``model`` is a Bedrock id already (the endpoint the rule chose); a name in another
    platform's form (a Bedrock id off Bedrock, Vertex AI's ``@date`` off Vertex AI) as the model
    it names; else as written."""
    bedrock = _BEDROCK.match(model.lower()) is not None
    vertex = _VERTEX_DATE.search(model) is not None
    if platform is Platform.BEDROCK:
        if bedrock:
            return model
        named = model_name(model) if vertex else model
        return bedrock_id(named, like) or named
    if bedrock or (vertex and platform is not Platform.VERTEX):
        return model_name(model)
    return model


_LISTED = re.compile(r"^(?P<scope>regional|global)\.anthropic\.(?P<name>.+?)-v\d+:\d+$")


def bedrock_id(model: str, like: str) -> str | None:
    """``model`` (a plain Claude name) as Bedrock names it for a call like ``like`` (the
    Bedrock id it replaces); None when ``model`` is named already or genai-prices lists no
    dated Bedrock model for it."""
    found = _BEDROCK.match(like.lower())
    if found is None or _BEDROCK.match(model.lower()):
        return None
    geo = found["geo"]
    scope = "global" if geo == "global." else "regional"
    dated = _dated(model.lower(), scope)
    return None if dated is None else f"{geo}anthropic.{dated}-v1:0"


@cache
def _dated(model: str, scope: str) -> str | None:
    """The one dated model of genai-prices' AWS list (in ``scope``) that ``model`` names
    (``claude-haiku-4-5`` -> ``claude-haiku-4-5-20251001``); None unless exactly one."""
    names = set()
    for provider in data_snapshot.get_snapshot().providers:
        if provider.id != "aws":
            continue
        for listed in provider.models:
            found = _LISTED.match(listed.id)
            if (
                found
                and found["scope"] == scope
                and re.fullmatch(re.escape(model) + r"(?:-\d{8})?", found["name"])
            ):
                names.add(found["name"])
    return names.pop() if len(names) == 1 else None


_LOCATION = re.compile(r"/locations/(?P<location>[^/]+)/")


LONG_PROMPT = 200_000
"""Above this many prompt tokens a long-context rate applies to the models that have one,
which genai-prices' aws regional entries do not carry."""


def price_list(call: Call, model: str | None = None, prompt: int | None = None) -> tuple[str, str]:
    """The model and genai-prices provider whose price bills ``call`` (as ``model``, when a
    strategy sends it to another): its own, but for a Vertex AI regional endpoint of a model
    Anthropic bills 10% over its global price there (Claude Sonnet 4.5 and later, on Vertex AI
    as on Bedrock). genai-prices' google list holds only the global price, its aws list the
    regional one of those very models: such a call is priced from that (a trial's us-east5
    Sonnet 4.5 was billed at the global rate, 10% low, without a word). A prompt over
    :data:`LONG_PROMPT` tokens (``prompt``, when known) keeps the google list, whose
    long-context rate the aws regional entries lack (priced from them, it was 45% low): the
    global long-context rate, 10% below what a regional endpoint bills."""
    name = call.priced_model if model is None else model
    if prompt is None and call.usage is not None:
        prompt = call.usage.prompt_total
    if call.platform is Platform.VERTEX and (prompt is None or prompt <= LONG_PROMPT):
        found = _LOCATION.search(call.endpoint)
        if found is not None and found["location"] != "global":
            listed = _regional(model_name(name))
            if listed is not None:
                return listed, "aws"
    return name, call.price_provider


@cache
def _regional(name: str) -> str | None:
    """The model ``name`` names as genai-prices' AWS list prices it at a regional endpoint
    (its dated name, which that list matches to its regional price), when that price lies
    above the model's global one (the premium); None otherwise (an older model, priced alike
    everywhere, or one the list does not carry in both)."""
    regional, worldwide = _dated(name, "regional"), _dated(name, "global")
    if regional is None or regional != worldwide:
        return None
    above = _input_rate(regional) > _input_rate(f"global.anthropic.{regional}")
    return regional if above else None


def _input_rate(model: str) -> Decimal:
    """What a million uncached input tokens of ``model`` cost on AWS, today."""
    return calc_price(Usage(input_tokens=1_000_000), model, provider_id="aws").total_price
