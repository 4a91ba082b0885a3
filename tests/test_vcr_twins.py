"""Requests vcrpy served another interaction's response: matched to their own recording by
body, each interaction once; a request sent twice where it was recorded once is drift."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from vcr import matchers
from vcr.cassette import Cassette
from vcr.request import Request

from costsim.plugin.vcr_patch import VcrPatch

URL = "https://api.anthropic.com/v1/messages"


@pytest.fixture
def seen() -> Iterator[list[tuple[int, str, bool]]]:
    """(interaction metered, its response, whether the request was the stored one)."""
    found: list[tuple[int, str, bool]] = []

    def observe(path: str, index: int, request: Any, response: Any, stored: Any) -> None:
        found.append((index, response["body"], request is stored))

    patch = VcrPatch(observe)
    patch.install()
    try:
        yield found
    finally:
        patch.uninstall()


def _cassette(tmp_path: Path, bodies: list[str]) -> Cassette:
    cassette = Cassette(str(tmp_path / "c.yaml"), match_on=(matchers.method, matchers.uri))
    for index, body in enumerate(bodies):
        reply = {"status": {"code": 200, "message": "OK"}, "headers": {}, "body": f"R{index}"}
        cassette.data.append((Request("POST", URL, body, {}), reply))
        cassette.play_counts[index] = 0
    return cassette


def _body(text: str) -> str:
    return json.dumps({"messages": text})


def test_concurrent_requests_are_each_metered_as_their_own_interaction(
    tmp_path: Path, seen: list[tuple[int, str, bool]]
) -> None:
    a, b = _body("doc 1"), _body("doc 2")
    cassette = _cassette(tmp_path, [a, a, b, b])
    for body in (b, b, a, a):  # arrived in another order than recorded
        cassette.play_response(Request("POST", URL, body, {}))
    assert seen == [(2, "R2", True), (3, "R3", True), (0, "R0", True), (1, "R1", True)]


def test_a_request_sent_twice_where_it_was_recorded_once_is_drift(
    tmp_path: Path, seen: list[tuple[int, str, bool]]
) -> None:
    a, b = _body("doc 1"), _body("doc 2")
    cassette = _cassette(tmp_path, [a, b])
    for body in (a, a):  # the code now summarises doc 1 twice: a real change
        cassette.play_response(Request("POST", URL, body, {}))
    assert seen == [(0, "R0", True), (1, "R1", False)]


def test_two_calls_played_at_once_from_threads_are_each_their_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A CI-gate trial's test summarised and classified at once from a thread pool: now and
    then both calls were metered as the classify interaction. Which interaction served a
    request was read from the play count that moved, and the other thread's count moved too.
    Here the second call is played while the first is inside vcrpy's play, every time."""
    import threading

    summary, label = _body("summarise the report"), _body("classify the ticket")
    cassette = _cassette(tmp_path, [summary, label])
    original = Cassette.play_response
    inside: list[threading.Thread] = []

    def slow_play(self: Cassette, request: Request) -> Any:
        if not inside:  # the first call lets the other thread in, as a loaded machine does
            other = threading.Thread(
                target=self.play_response, args=(Request("POST", URL, label, {}),)
            )
            inside.append(other)
            other.start()
            other.join(timeout=0.3)  # it waits for this play to end, as it must
        return original(self, request)

    monkeypatch.setattr(Cassette, "play_response", slow_play)
    found: list[tuple[int, str]] = []
    lock = threading.Lock()

    def observe(path: str, index: int, request: Any, response: Any, stored: Any) -> None:
        with lock:
            found.append((index, response["body"]))

    patch = VcrPatch(observe)
    patch.install()
    try:
        cassette.play_response(Request("POST", URL, summary, {}))
        inside[0].join(timeout=5)
    finally:
        patch.uninstall()
    assert sorted(found) == [(0, "R0"), (1, "R1")]
