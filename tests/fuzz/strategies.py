"""Hypothesis strategies for usage blocks: valid ones, and ones with a value no bill can hold."""

from __future__ import annotations

import math
from typing import Any

from hypothesis import strategies as st

__all__ = [
    "BAD_COUNTS",
    "anthropic_usage",
    "chat_usage",
    "counts",
    "with_a_bad_value",
]

counts = st.integers(min_value=0, max_value=2_000_000)
"""A plausible token count."""

BAD_COUNTS = st.one_of(
    st.just(math.nan),
    st.sampled_from([math.inf, -math.inf]),
    st.integers(max_value=-1),
    st.integers(min_value=20_000_001, max_value=10**40),
    st.floats(allow_nan=False, allow_infinity=False).filter(lambda f: not f.is_integer()),
    st.floats(min_value=1e8, max_value=1e308),
    st.text(max_size=5),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
    st.none(),
    st.booleans(),
)
"""A value that cannot be a recorded token count."""


@st.composite
def anthropic_usage(draw: st.DrawFn) -> dict[str, Any]:
    usage: dict[str, Any] = {"input_tokens": draw(counts), "output_tokens": draw(counts)}
    if draw(st.booleans()):
        usage["cache_read_input_tokens"] = draw(counts)
        write_5m, write_1h = draw(counts), draw(counts)
        usage["cache_creation_input_tokens"] = write_5m + write_1h
        if draw(st.booleans()):
            usage["cache_creation"] = {
                "ephemeral_5m_input_tokens": write_5m,
                "ephemeral_1h_input_tokens": write_1h,
            }
    if draw(st.booleans()):
        usage["server_tool_use"] = {"web_search_requests": draw(st.integers(0, 50))}
    return usage


@st.composite
def chat_usage(draw: st.DrawFn) -> dict[str, Any]:
    prompt, completion = draw(counts), draw(counts)
    usage: dict[str, Any] = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }
    if draw(st.booleans()):
        usage["prompt_tokens_details"] = {"cached_tokens": draw(st.integers(0, prompt))}
    if draw(st.booleans()):
        usage["completion_tokens_details"] = {"reasoning_tokens": draw(st.integers(0, completion))}
    return usage


def _count_slots(usage: dict[str, Any]) -> list[tuple[dict[str, Any], str]]:
    slots = []
    for key, value in usage.items():
        if isinstance(value, dict):
            slots += [(value, inner) for inner in value]
        else:
            slots.append((usage, key))
    return slots


@st.composite
def with_a_bad_value(draw: st.DrawFn, usage: st.SearchStrategy[dict[str, Any]]) -> dict[str, Any]:
    """A usage block with one of its counts replaced by a value no bill can hold."""
    block = draw(usage)
    parent, key = draw(st.sampled_from(_count_slots(block)))
    parent[key] = draw(BAD_COUNTS)
    return block
