"""A model named plainly (``claude-haiku-4-5``) as a platform names it, for a call served
there: routing a Bedrock call to Haiku moves it to Bedrock's Haiku, billed at Bedrock's price.

Amazon Bedrock names a Claude model ``{geo}.anthropic.{model}-{date}-v1:0``: a cross-region
inference profile (``us.``, ``eu.``, ``apac.``, ...; genai-prices' ``regional`` prices, 10%
above Anthropic's for recent models) or ``global.`` (its ``global`` prices), or no geo at all
(in-region, regional prices). genai-prices' AWS list names each dated model it prices; the
routed call takes the dated id of the plain name, with the geo of the call it replaces.
"""

from __future__ import annotations

import re
from functools import cache

from genai_prices import data_snapshot

__all__ = ["bedrock_id"]

_BEDROCK = re.compile(r"^(?P<geo>(?:[a-z-]+\.)?)anthropic\.")
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
