"""Properties of reading usage: a valid block is read exactly, an impossible one never as 0."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings

from costsim.providers._usage import anthropic_usage as read_anthropic
from costsim.providers.openai_chat import read_openai_usage
from tests.fuzz.strategies import anthropic_usage, chat_usage, with_a_bad_value


@given(anthropic_usage())
def test_valid_anthropic_usage_is_read_exactly(block: dict[str, Any]) -> None:
    read = read_anthropic(block)

    assert read.problems == ()
    assert read.usage is not None
    assert read.usage.prompt_total == (
        block["input_tokens"]
        + block.get("cache_read_input_tokens", 0)
        + block.get("cache_creation_input_tokens", 0)
    )
    assert read.usage.output == block["output_tokens"]
    assert read.usage.web_searches == block.get("server_tool_use", {}).get("web_search_requests", 0)


@given(chat_usage())
def test_valid_chat_usage_is_read_exactly(block: dict[str, Any]) -> None:
    read = read_openai_usage(block)

    assert read.problems == ()
    assert read.usage is not None
    assert read.usage.prompt_total == block["prompt_tokens"]
    assert read.usage.output == block["completion_tokens"]
    assert 0 <= read.usage.uncached_input <= block["prompt_tokens"]


@settings(max_examples=300)
@given(with_a_bad_value(anthropic_usage()))
def test_an_impossible_anthropic_count_is_a_problem(block: dict[str, Any]) -> None:
    read = read_anthropic(block)

    assert read.usage is None
    assert read.problems


@settings(max_examples=300)
@given(with_a_bad_value(chat_usage()))
def test_an_impossible_chat_count_is_a_problem(block: dict[str, Any]) -> None:
    read = read_openai_usage(block)

    assert read.usage is None
    assert read.problems
