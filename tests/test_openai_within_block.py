"""OpenAI's automatic caching matches a prompt token by token, not block by block.

A Responses request whose ``input`` string extends the one before (a page, then the page and
a question) reads the page from cache: the recording showed 13,952 cached tokens, which the
block-by-block simulation could not explain (it inferred a warm start, and ``advise caching``
said 17 tokens were shared, below the 1,024 minimum).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from costsim.analysis.cache_fidelity import check_cache
from costsim.cache.openai import shared_chars
from costsim.engine import Engine
from costsim.model import Call, CassetteTrace, Flavour, Message, Provenance, TextBlock, Usage

WHEN = datetime(2026, 3, 14, 8, 0, tzinfo=UTC)
PAGE = "".join(f"- result {i}: kettle model {i}, price ${5 + i / 100:.2f}\n" for i in range(1500))


def _call(index: int, text: str, usage: Usage) -> Call:
    return Call(
        flavour=Flavour.OPENAI_RESPONSES,
        model="gpt-5-mini",
        provenance=Provenance(Path("r.yaml"), index),
        system=(TextBlock("Summarise this page for a shopper in 3 bullets."),),
        messages=(Message("user", (TextBlock(text),)),),
        response=(TextBlock("ok"),),
        usage=usage,
        recorded_at=WHEN + timedelta(seconds=30 * index),
    )


def _trace(question: str = "\n\nWhich is the cheapest kettle?") -> CassetteTrace:
    first = Engine([]).meter.estimate_prompt(_call(0, PAGE, Usage(uncached_input=1)))
    tokens = round(first)
    later = _call(1, PAGE + question, Usage(uncached_input=1))
    total = round(Engine([]).meter.estimate_prompt(later))
    cached = tokens // 128 * 128
    calls = (
        _call(0, PAGE, Usage(uncached_input=tokens, output=40)),
        _call(
            1, PAGE + question, Usage(uncached_input=total - cached, cache_read=cached, output=9)
        ),
    )
    return CassetteTrace(Path("r.yaml"), calls, 0, 0)


def test_a_text_that_extends_a_cached_one_reads_it_from_cache() -> None:
    report = check_cache([_trace()])
    assert not report.warm_starts  # the recording's read is explained by the first request
    assert report.calls_matched == report.calls_compared == 1


def test_a_replay_reads_as_far_as_the_texts_open_alike() -> None:
    """The simulated read is the recorded one: the page's tokens, down to 128s."""
    trace = _trace()
    second = Engine([trace]).replayed(trace).calls[1]
    recorded = trace.calls[1].usage
    assert second.cache is not None and recorded is not None
    assert second.cache.read == recorded.cache_read > 1024


def test_texts_that_part_at_once_share_nothing_and_shared_chars_is_exact() -> None:
    assert shared_chars("abcdef", "abcxyz") == 3
    assert shared_chars("abc", "abc and more") == 3
    assert shared_chars("", "abc") == 0 and shared_chars("xyz", "abc") == 0
    other = "".join(reversed(PAGE))
    report = check_cache([CassetteTrace(Path("r.yaml"), (_trace().calls[0], _call(
        1, other, Usage(uncached_input=5000, output=9))), 0, 0)])  # fmt: skip
    assert report.calls_matched == report.calls_compared
