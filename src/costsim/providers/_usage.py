"""Read recorded usage strictly: a value that cannot be a token count is a problem, never 0.

A usage block is what was billed, so costsim trusts it only when every count is a
non-negative integer (an integral float is accepted), below :data:`~costsim.limits.MAX_TOKENS`,
and the counts agree with each other (cached tokens within the prompt, reasoning within the
output, ``total_tokens`` the sum). Anything else is reported as a problem naming the field and
its value; the caller then estimates the call and flags it instead of reading the number.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from costsim.io.limits import MAX_FEE_UNITS, MAX_TOKENS
from costsim.model import Usage
from costsim.providers._json import obj

__all__ = [
    "SERVER_TOOL_FEES",
    "UsageRead",
    "UsageReader",
    "anthropic_usage",
    "gateway_cost",
    "openai_usage",
]


@dataclass(frozen=True, slots=True)
class UsageRead:
    """Usage as read, or the problems that make it unusable."""

    usage: Usage | None
    problems: tuple[str, ...] = ()
    unpriced_fees: tuple[str, ...] = ()
    """Per-use server tool counts with no known price (not in the cost)."""
    unsplit_writes: bool = False
    """Cache writes recorded without Anthropic's ``cache_creation`` split into 5-minute and
    1-hour writes (a gateway's or an older API's usage): read as 5-minute writes until the
    request's markers say otherwise (:mod:`costsim.providers.write_ttl`)."""


SERVER_TOOL_FEES: dict[str, str | None] = {
    "web_search_requests": "web_searches",
    "web_fetch_requests": None,
}
"""Anthropic ``usage.server_tool_use`` counts: the genai-prices unit each is billed in, or None
for tools with no per-use fee (web fetch costs only its tokens, per Anthropic's web fetch
tool documentation). A count not listed here is reported as a fee costsim cannot price."""


def _show(value: Any) -> str:
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, str):
        text = repr(value)
        return f"{text[:30]}…'" if len(text) > 32 else text
    if isinstance(value, int) and not isinstance(value, bool):
        digits = str(value) if value.bit_length() < 200 else f"a {value.bit_length()}-bit integer"
        return digits if len(digits) <= 30 else digits[:27] + "…"
    kinds = {list: "a list", dict: "an object", bool: "a boolean", type(None): "null"}
    return kinds.get(type(value), type(value).__name__)


class UsageReader:
    """Reads the counts of one usage object, collecting problems instead of guessing."""

    def __init__(self, raw: Mapping[str, Any]) -> None:
        self.raw = raw
        self.problems: list[str] = []

    def count(
        self,
        key: str,
        *,
        within: str | None = None,
        required: bool = False,
        limit: int = MAX_TOKENS,
    ) -> int:
        """The count at ``raw[within][key]`` (0 when absent and not required)."""
        source = self.raw if within is None else obj(self.raw.get(within))
        label = f"{within}.{key}" if within else key
        if key not in source:
            if required:
                self.problems.append(f"{label} is missing")
            return 0
        value = self.checked(label, source[key], limit)
        return 0 if value is None else value

    def optional(self, key: str, *, within: str | None = None) -> int | None:
        """A count that may be absent (None), but is a problem when present and invalid."""
        source = self.raw if within is None else obj(self.raw.get(within))
        if key not in source:
            return None
        return self.checked(f"{within}.{key}" if within else key, source[key], MAX_TOKENS)

    def checked(self, label: str, value: Any, limit: int) -> int | None:
        number: int | None = None
        if isinstance(value, int) and not isinstance(value, bool):
            number = value
        elif isinstance(value, float) and math.isfinite(value) and value.is_integer():
            number = int(value) if abs(value) <= limit else limit + 1
        if number is None:
            kind = "not a whole number" if isinstance(value, float) else "not a count"
            self.problems.append(f"{label} is {_show(value)} ({kind})")
        elif number < 0:
            self.problems.append(f"{label} is {_show(value)} (negative)")
        elif number > limit:
            self.problems.append(
                f"{label} is {_show(value)} (beyond any model's context window)"
                if limit == MAX_TOKENS
                else f"{label} is {_show(value)} (implausibly many)"
            )
        else:
            return number
        return None

    def require(self, condition: bool, problem: str) -> None:
        if not condition:
            self.problems.append(problem)

    def result(self, usage: Usage) -> UsageRead:
        if not self.problems and usage.prompt_total + usage.output > MAX_TOKENS:
            self.problems.append(
                f"{usage.prompt_total + usage.output:,} tokens in one call "
                "(beyond any model's context window)"
            )
        if self.problems:
            return UsageRead(None, tuple(self.problems))
        return UsageRead(usage)


def anthropic_usage(raw: Mapping[str, Any]) -> UsageRead:
    """Normalise an Anthropic ``usage`` object (DESIGN.md section 2), strictly."""
    read = UsageReader(raw)
    uncached = read.count("input_tokens", required=True)
    output = read.count("output_tokens", required=True)
    has_write = "cache_creation_input_tokens" in raw
    cache_read = read.count("cache_read_input_tokens")
    creation = read.count("cache_creation_input_tokens")
    write_1h = write_5m = 0
    if isinstance(raw.get("cache_creation"), Mapping):
        write_5m = read.count("ephemeral_5m_input_tokens", within="cache_creation")
        write_1h = read.count("ephemeral_1h_input_tokens", within="cache_creation")
        read.require(
            write_5m + write_1h == creation or not has_write,
            f"cache_creation splits {write_5m + write_1h:,} tokens but "
            f"cache_creation_input_tokens is {creation:,}",
        )
        creation = max(creation, write_5m + write_1h)
    thinking = read.optional("thinking_tokens", within="output_tokens_details")
    read.require(
        thinking is None or thinking <= output,
        f"thinking tokens ({thinking}) exceed output_tokens ({output})",
    )
    searches = read.count("web_search_requests", within="server_tool_use", limit=MAX_FEE_UNITS)
    unpriced = tuple(
        f"{count} {name.replace('_', ' ')}"
        for name, count in obj(raw.get("server_tool_use")).items()
        if name not in SERVER_TOOL_FEES and isinstance(count, int) and count > 0
    )
    result = read.result(
        Usage(
            uncached_input=uncached,
            cache_read=cache_read,
            cache_write_5m=creation - write_1h,
            cache_write_1h=write_1h,
            output=output,
            reasoning=thinking,
            web_searches=searches,
        )
    )
    unsplit = creation > 0 and not isinstance(raw.get("cache_creation"), Mapping)
    return dataclasses.replace(result, unpriced_fees=unpriced, unsplit_writes=unsplit)


def openai_usage(
    raw: Mapping[str, Any],
    *,
    prompt: str,
    output: str,
    prompt_details: str,
    output_details: str,
    web_searches: int = 0,
) -> UsageRead:
    """Normalise an OpenAI usage object (key names differ between Chat and Responses)."""
    read = UsageReader(raw)
    total = read.count(prompt, required=True)
    completion = read.count(output, required=True)
    cached = read.count("cached_tokens", within=prompt_details)
    written = read.count("cache_write_tokens", within=prompt_details)
    reasoning = read.optional("reasoning_tokens", within=output_details)
    read.require(
        cached + written <= total,
        f"cached tokens ({cached + written:,}) exceed {prompt} ({total:,})",
    )
    read.require(
        reasoning is None or reasoning <= completion,
        f"reasoning tokens ({reasoning}) exceed {output} ({completion})",
    )
    if "total_tokens" in raw:
        stated = read.checked("total_tokens", raw["total_tokens"], 2 * MAX_TOKENS)
        read.require(
            stated is None or stated == total + completion,
            f"total_tokens ({stated}) is not {prompt} + {output} ({total + completion})",
        )
    return read.result(
        Usage(
            uncached_input=max(0, total - cached - written),
            cache_read=cached,
            cache_write_5m=written,
            output=completion,
            reasoning=reasoning,
            web_searches=web_searches,
        )
    )


def gateway_cost(raw: Mapping[str, Any]) -> tuple[Decimal | None, str | None]:
    """The cost a gateway recorded in a usage object (OpenRouter ``usage.cost``, USD).

    Returns (cost, None), (None, None) when there is none, or (None, problem) when the
    recorded value cannot be a cost.
    """
    if "cost" not in raw:
        return None, None
    value = raw["cost"]
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None, f"cost is {_show(value)} (not an amount)"
    try:
        amount = Decimal(str(value))
    except ArithmeticError:
        return None, f"cost is {_show(value)} (not an amount)"
    if not amount.is_finite() or amount < 0 or amount > 1_000_000:
        return None, f"cost is {_show(value)} (not a plausible amount)"
    return amount, None
