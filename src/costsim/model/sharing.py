"""Equal parts of a trace's requests made one object.

A conversation's calls each resend everything before: call k carries k messages, and each
request body is parsed on its own, so a long session holds k copies of its first message. The
counting memos (token counts, cache-prefix digests, tool tables) remember what they counted
by object, and equality between copies is a deep comparison. Sharing the equal messages,
system blocks and tool lists of successive calls turns both into identity: each message is
counted and digested once per trace, and a trace holds one copy of it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path

from costsim.model.blocks import Block, Message, ToolDef
from costsim.model.call import Call, CassetteTrace

__all__ = ["distinct_path_runs", "shared_calls"]

_RECENT = 8
"""Earlier requests a call is matched against (interleaved agents each have their own)."""


def _shared_prefix(items: tuple[Message, ...], known: tuple[Message, ...]) -> int:
    count = 0
    for mine, theirs in zip(items, known, strict=False):
        if mine is not theirs and mine != theirs:
            break
        count += 1
    return count


def shared_calls(calls: Sequence[Call]) -> tuple[Call, ...]:
    """``calls`` with each call's leading messages, and its system blocks and tools when equal,
    made the objects of the earlier call that has the most of them in common (values are
    unchanged: every call equals the one it replaces)."""
    recent: list[Call] = []
    result: list[Call] = []
    for call in calls:
        best, length = None, 0
        for known in recent:
            n = _shared_prefix(call.messages, known.messages)
            if n > length:
                best, length = known, n
        changes: dict[str, object] = {}
        if best is not None:
            changes["messages"] = (*best.messages[:length], *call.messages[length:])
        for name in ("system", "tools"):
            mine: tuple[Block, ...] | tuple[ToolDef, ...] = getattr(call, name)
            if not mine:
                continue
            same = next((getattr(k, name) for k in recent if getattr(k, name) == mine), None)
            if same is not None:
                changes[name] = same
        shared = dataclasses.replace(call, **changes) if changes else call  # type: ignore[arg-type]
        result.append(shared)
        recent.insert(0, shared)
        del recent[_RECENT:]
    return tuple(result)


def distinct_path_runs(traces: Sequence[CassetteTrace]) -> list[list[CassetteTrace]]:
    """``traces`` in runs whose paths are distinct, in order: one run unless a path comes
    again (the same file named twice), which starts the next."""
    runs: list[list[CassetteTrace]] = [[]]
    seen: set[Path] = set()
    for trace in traces:
        if trace.path in seen:
            runs.append([])
            seen.clear()
        runs[-1].append(trace)
        seen.add(trace.path)
    return runs
