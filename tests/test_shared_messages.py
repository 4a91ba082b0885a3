"""The equal messages, system blocks and tools of a trace's successive calls are one object
each (parsed or read back from the cache), the values unchanged; what is counted per message
object is counted once, and counts the same as counting afresh."""

from __future__ import annotations

import copy
import itertools
from pathlib import Path

import pytest

from costsim.io.trace_codec import decode_trace, encode_trace
from costsim.metering.serialise import Serialiser
from costsim.model import Call, Flavour, Message, Provenance, TextBlock, ToolDef
from costsim.model.sharing import shared_calls
from costsim.providers.normalise import load_trace

ROOT = Path(__file__).resolve().parents[1]
LONG = ROOT / "scenarios" / "cassettes" / "coding_agent"


def _call(index: int, messages: tuple[Message, ...], tools: tuple[ToolDef, ...] = ()) -> Call:
    return Call(
        flavour=Flavour.ANTHROPIC_MESSAGES,
        model="claude-sonnet-4-5",
        provenance=Provenance(Path("t.yaml"), index),
        system=(TextBlock("You are terse."),),
        messages=copy.deepcopy(messages),  # each request parsed on its own: equal copies
        tools=copy.deepcopy(tools),
    )


def _conversation(turns: int, tag: str) -> list[tuple[Message, ...]]:
    history: list[Message] = []
    out = []
    for turn in range(turns):
        history.append(Message("user", (TextBlock(f"{tag} question {turn}"),)))
        out.append(tuple(history))
        history.append(Message("assistant", (TextBlock(f"{tag} answer {turn}"),)))
    return out


def test_a_conversations_calls_share_their_earlier_messages() -> None:
    tool = ToolDef("grep", "search files", {"type": "object"})
    calls = [_call(i, m, (tool,)) for i, m in enumerate(_conversation(5, "a"))]
    shared = shared_calls(calls)
    assert list(shared) == calls  # the same values
    for earlier, later in itertools.pairwise(shared):
        count = len(earlier.messages)
        assert all(a is b for a, b in zip(earlier.messages, later.messages[:count], strict=True))
        assert later.system is earlier.system and later.tools is earlier.tools
    assert len({id(m) for call in shared for m in call.messages}) == 9  # 5 asked, 4 answered


def test_interleaved_agents_each_share_with_their_own_conversation() -> None:
    first, second = _conversation(4, "planner"), _conversation(4, "coder")
    messages = [m for pair in zip(first, second, strict=True) for m in pair]
    shared = shared_calls([_call(i, m) for i, m in enumerate(messages)])
    planner, coder = shared[0::2], shared[1::2]
    for calls in (planner, coder):
        assert calls[-1].messages[0] is calls[0].messages[0]
    assert planner[-1].messages[0] is not coder[-1].messages[0]


def test_a_changed_message_shares_only_what_came_before_it() -> None:
    history = _conversation(3, "a")[-1]
    edited = (*history[:1], Message("assistant", (TextBlock("another answer"),)), *history[2:])
    shared = shared_calls([_call(0, history), _call(1, edited)])
    assert shared[1].messages[0] is shared[0].messages[0]
    assert shared[1].messages[1] is not shared[0].messages[1]
    assert shared[1].messages[2] is not shared[0].messages[2]  # after the change: its own
    assert shared[1] == _call(1, edited)


@pytest.fixture(scope="module")
def long_trace() -> Path:
    found = sorted(LONG.glob("*.yaml"))
    assert found, LONG
    return found[0]


def test_a_parsed_and_a_cached_trace_share_their_messages(long_trace: Path) -> None:
    trace = load_trace(long_trace)
    back = decode_trace(encode_trace(trace), trace.path)
    assert back == trace
    for loaded in (trace, back):
        assert loaded is not None
        occurrences = sum(len(call.messages) for call in loaded.calls)
        distinct = len({id(m) for call in loaded.calls for m in call.messages})
        assert distinct * 5 < occurrences  # a long session: each message held about once


def test_positions_counted_once_per_message_equal_counting_afresh(long_trace: Path) -> None:
    trace = load_trace(long_trace)
    remembering = Serialiser()
    for call in trace.calls:
        assert remembering.positions(call) == Serialiser().positions(call)
        assert remembering.features(call) == Serialiser().features(call)
