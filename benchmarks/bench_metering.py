"""Metering benchmarks: tokenizer throughput, and metering one conversation of N turns.

    python benchmarks/bench_metering.py

Each conversation is a trace of N calls, call k carrying the whole history so far (as an
agent's requests do). Metering cost should grow with unique content, not with turns squared:
the 80-turn / 40-turn time ratio should stay near 2.
"""

from __future__ import annotations

import random
import statistics
import time
from pathlib import Path

from costsim.metering.meter import Meter
from costsim.metering.tokenizers import encoding
from costsim.model import (
    Call,
    Flavour,
    Message,
    Provenance,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
)

SENTENCE = (
    "the agent reads file src main py and finds a bug in the parser where tokens are counted "
    "twice because the cache key ignores the model name so we fix it by adding"
)
WORDS = tuple(SENTENCE.split(" "))


def _text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words)) + f" #{rng.random():.12f}"


def conversation(turns: int, seed: int) -> list[Call]:
    rng = random.Random(seed)
    history: tuple[Message, ...] = ()
    calls = []
    for turn in range(turns):
        history = (*history, Message("user", (TextBlock(_text(rng, 60)),)))
        calls.append(
            Call(
                flavour=Flavour.ANTHROPIC_MESSAGES,
                model="claude-sonnet-4-5",
                provenance=Provenance(Path("synthetic"), turn),
                system=(TextBlock("You are a coding agent."),),
                messages=history,
            )
        )
        tool_id = f"toolu_{seed}_{turn}"
        history = (
            *history,
            Message("assistant", (ToolUseBlock(tool_id, "read_file", {"path": f"src/{turn}.py"}),)),
            Message("user", (ToolResultBlock(tool_id, (TextBlock(_text(rng, 200)),)),)),
        )
    return calls


def time_metering(turns: int, seed: int) -> float:
    calls = conversation(turns, seed)
    meter = Meter()
    start = time.perf_counter()
    for call in calls:
        meter.estimate_prompt(call)
    return time.perf_counter() - start


def tokenizer_throughput() -> float:
    rng = random.Random(7)
    text = " ".join(_text(rng, 100) for _ in range(2000))
    enc = encoding("o200k_base")
    start = time.perf_counter()
    tokens = len(enc.encode_ordinary(text))
    return tokens / (time.perf_counter() - start)


def main() -> None:
    encoding("cl100k_base")  # load vocabularies outside the timings
    print(f"tokenizer throughput (o200k_base): {tokenizer_throughput():,.0f} tokens/s")
    results = {}
    for turns in (10, 20, 40, 80, 1000):
        results[turns] = statistics.median(
            time_metering(turns, seed=turns * 100 + i) for i in range(7)
        )
        print(f"metering {turns:>5} turns: {results[turns] * 1000:8.1f} ms")
    print(f"ratio 80 / 40 turns: {results[80] / results[40]:.2f} (target <= 2.2)")
    print(f"1,000 turns: {results[1000]:.3f} s (target < 1 s)")


if __name__ == "__main__":
    main()
