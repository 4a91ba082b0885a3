"""Seeing every call vcrpy replays or records, whatever SDK or HTTP client made it.

vcrpy serves every replayed response through ``Cassette.play_response`` and records new ones
through ``Cassette.append``; both are wrapped for the run (and unwrapped after it). Light on
purpose (vcrpy and the standard library only): it runs in the test process on every call.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

__all__ = ["Observer", "Observing", "VcrPatch", "same_body"]


def _body(request: Any) -> bytes | str | None:
    body = getattr(request, "body", None)
    return body if isinstance(body, bytes | str) else None


def same_body(sent: Any, stored: Any) -> bool:
    """The request sent is the stored one: the same bytes, or the same JSON written another way
    (spacing, escapes: a client serialises differently from the recorder)."""
    a, b = _body(sent), _body(stored)
    if a == b:
        return True
    if a is None or b is None:
        return False
    if len(a) + len(b) > _REMEMBERED:
        return _same_json.__wrapped__(a, b)
    return _same_json(a, b)


_REMEMBERED = 256_000
"""Bodies up to this size together are compared once (the cache then holds at most 32 MB)."""


@lru_cache(maxsize=128)
def _same_json(a: bytes | str, b: bytes | str) -> bool:
    """Remembered: a suite replays the same requests, written the same way, many times."""
    try:
        return bool(json.loads(a) == json.loads(b))
    except (ValueError, RecursionError):
        return False


def _as_recorded(cassette: Any, request: Any) -> Any:
    """``request`` through the cassette's record filters (scrubbed secrets, ignored hosts), so
    it compares with the stored request like for like; None when a filter drops it."""
    try:
        return cassette._before_record_request(request)
    except Exception:  # a user's filter failing here must not fail the test
        return request


def _canonical(body: bytes | str | None) -> bytes | str | None:
    """A body as :func:`same_body` compares it: its JSON written one way, else as it is."""
    if body is None:
        return None
    try:
        return json.dumps(json.loads(body), sort_keys=True, separators=(",", ":"))
    except (ValueError, RecursionError, TypeError):
        return body


@dataclass(slots=True)
class _Claims:
    """Per cassette (kept on it, so a new ``use_cassette`` starts afresh): the interactions a
    request was matched to by its body, and the stored requests indexed by their bodies."""

    claimed: set[int] = field(default_factory=set)
    indexed: int = 0
    bodies: dict[Any, list[int]] = field(default_factory=dict)

    def twin(self, cassette: Any, request: Any, served: int) -> int | None:
        """The interaction whose stored request is the one sent, not yet claimed, when vcrpy
        served another's response: requests to one URL sent concurrently (``asyncio.gather``,
        a thread pool) take the recorded responses in the order they arrive, as vcrpy matches
        on method and URL. Such a request was recorded as it is: it is that interaction's
        call, not a drifted one. A request whose twin was claimed already (the code now sends
        it twice) is drift, as before."""
        data = cassette.data
        for index in range(self.indexed, len(data)):  # new interactions: indexed once each
            stored = data[index][0]
            key = (getattr(stored, "method", None), getattr(stored, "uri", None))
            self.bodies.setdefault((*key, _canonical(_body(stored))), []).append(index)
        self.indexed = len(data)
        key = (getattr(request, "method", None), getattr(request, "uri", None))
        for index in self.bodies.get((*key, _canonical(_body(request))), ()):
            if index != served and index not in self.claimed:
                self.claimed.add(index)
                return index
        return None


def _claims(cassette: Any) -> _Claims:
    found = getattr(cassette, "_costsim_claims", None)
    if not isinstance(found, _Claims):
        found = _Claims()
        with contextlib.suppress(AttributeError):  # one that takes none: claims for this call
            cassette._costsim_claims = found
    return found


Observer = Callable[[str, int, Any, Mapping[str, Any], Any], None]
"""``(cassette path, interaction index, request as sent, response, stored request or None)``."""


@dataclass(slots=True)
class VcrPatch:
    """vcrpy's replay and record points, wrapped to report each interaction to ``observer``."""

    observer: Observer
    _loading: threading.local = field(default_factory=threading.local)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _originals: list[tuple[Any, str, Any]] = field(default_factory=list)

    def install(self) -> None:
        from vcr.cassette import Cassette

        patch = self
        play, append, load = Cassette.play_response, Cassette.append, Cassette._load

        def play_response(cassette: Any, request: Any) -> Any:
            # which interaction served the request is told by the play count that moved: one
            # play at a time (a lookup in memory), or a pool's two calls each saw both counts
            # move and could both take the same index (a trial metered one call twice)
            with patch._lock:
                before = dict(cassette.play_counts)
                response = play(cassette, request)
                played = [i for i, n in cassette.play_counts.items() if before.get(i) != n]
            index = played[0] if played else -1
            stored = cassette.data[index][0] if 0 <= index < len(cassette.data) else request
            # a request sent as recorded is the stored one (checked once, here); the record
            # filters matter only to one sent otherwise
            same = same_body(request, stored)
            with patch._lock:
                claims = _claims(cassette)
                twin = None if same else claims.twin(cassette, request, index)
                if same and index >= 0:
                    claims.claimed.add(index)
            if twin is not None:  # served another's response (concurrent calls), not drifted
                index, same = twin, True
                stored, response_of = cassette.data[twin]
            else:
                response_of = response
            sent = stored if same else _as_recorded(cassette, request)
            patch.observer(
                cassette._path, index, stored if sent is None else sent, response_of, stored
            )
            return response

        def record(cassette: Any, request: Any, response: Any) -> None:
            if getattr(patch._loading, "active", False):
                append(cassette, request, response)
                return
            index = len(cassette.data)
            append(cassette, request, response)
            patch.observer(cassette._path, index, request, response, None)

        def loading(cassette: Any) -> None:
            patch._loading.active = True
            try:
                load(cassette)
            finally:
                patch._loading.active = False

        self._originals = [
            (Cassette, "play_response", play),
            (Cassette, "append", append),
            (Cassette, "_load", load),
        ]
        Cassette.play_response = play_response
        Cassette.append = record
        Cassette._load = loading

    def uninstall(self) -> None:
        for owner, name, original in self._originals:
            setattr(owner, name, original)
        self._originals = []


class Observing:
    """What sees the calls vcrpy replays or records: the test (or fixture scope) running, to
    attribute them to, and the patch that reports them to :meth:`observe`."""

    current: str
    _patch: VcrPatch | None

    def observe(
        self,
        cassette_path: str,
        index: int,
        request: Any,
        response: Mapping[str, Any],
        stored: Any = None,
    ) -> None:
        raise NotImplementedError

    @contextmanager
    def attributing(self, name: str) -> Iterator[None]:
        previous, self.current = self.current, name
        try:
            yield
        finally:
            self.current = previous

    def install(self) -> None:
        self._patch = VcrPatch(self.observe)
        self._patch.install()

    def uninstall(self) -> None:
        if self._patch is not None:
            self._patch.uninstall()
            self._patch = None
