"""The test process's side of the metering process (:mod:`costsim.plugin.helper`).

It notes each call vcrpy replays or records, with the test that made it, and hands the notes
over in batches; it keeps what the hooks read before any test runs (markers, the tests
selected). A replay of an interaction already handed over, sent as recorded, is a note of a
few fields: no body is copied twice. Light on purpose: it imports vcrpy and the standard
library only, so the run pays nothing for costsim's engine.

Calls may come from several threads (an SDK's pool): noting and asking hold one lock. A
process the tests fork inherits the recorder: there it notes nothing (as metering in the test
process counts nothing a forked child does), so no call is counted twice.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import threading
import time
import weakref
from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import lru_cache
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from costsim.plugin.run import MeteringError, Run, Setup
from costsim.plugin.vcr_patch import Observing, VcrPatch
from costsim.render.paths import display_path

__all__ = ["PlainRequest", "Recorder"]

BATCH = 256
"""Notes handed over at once."""
_POLL = 1.0
"""Seconds between checks that the metering process still runs, while an answer is awaited."""
_LIVE: weakref.WeakSet[Recorder] = weakref.WeakSet()
_UNKNOWN = -(1 << 16)
"""The exit code of a metering process reaped by someone else (no real code is this)."""


def _in_a_forked_child() -> None:
    for recorder in list(_LIVE):
        recorder.forked()


os.register_at_fork(after_in_child=_in_a_forked_child)


@dataclass(frozen=True, slots=True)
class PlainRequest:
    """A vcrpy request as plain data (what costsim reads of one), safe to hand over."""

    method: str
    uri: str
    body: bytes | str | None
    headers: dict[str, Any]

    @classmethod
    def of(cls, request: Any) -> PlainRequest:
        body = getattr(request, "body", None)
        return cls(
            str(getattr(request, "method", "")),
            str(getattr(request, "uri", "")),
            body if isinstance(body, bytes | str) else None,
            dict(getattr(request, "headers", {}) or {}),
        )


class Recorder(Observing):
    """What the hooks talk to while the metering process meters."""

    def __init__(self, pid: int, connection: Connection) -> None:
        self.pid = pid
        self.connection = connection
        self.current = "<outside tests>"
        self.budgets: dict[str, Any] = {}
        self.tolerances: dict[str, dict[str, float]] = {}
        self.usage_errors: list[str] = []
        self.selected: set[str] = set()
        self.internal_errors: list[str] = []
        self._batch: list[tuple[Any, ...]] = []
        self._sent: set[tuple[str, int, int, int]] = set()
        self._patch: VcrPatch | None = None
        self._gone = False
        self._lock = threading.Lock()
        self._child = False
        self._exit: int | None = None
        _LIVE.add(self)

    def forked(self) -> None:
        """In a process the tests forked: note nothing, and leave the pipe to the parent."""
        self._child = True
        self._batch = []
        self._lock = threading.Lock()  # a lock held by another thread at the fork stays held

    @classmethod
    def start(cls, setup: Setup) -> Recorder | None:
        from costsim.plugin.helper import start

        started = start(setup)
        return None if started is None else cls(*started)

    # --- noting calls --------------------------------------------------------------------

    def observe(
        self,
        cassette_path: str,
        index: int,
        request: Any,
        response: Mapping[str, Any],
        stored: Any = None,
    ) -> None:
        """One replayed (``stored`` is the cassette's request) or recorded interaction. Never
        raises: the user's test must not fail because of costsim."""
        if self._child:
            return
        try:
            with self._lock:
                self._observe(cassette_path, index, request, response, stored)
        except Exception as exc:  # a costsim bug: said at the end, never in the user's test
            self.internal_errors.append(
                f"{self.current}: {cassette_path} interaction {index}: costsim could not note "
                f"it ({type(exc).__name__}: {exc}); please report it"
            )

    def _observe(
        self, path: str, index: int, request: Any, response: Mapping[str, Any], stored: Any
    ) -> None:
        # the file as an absolute path and its name as reports show it, both from this
        # process's working folder (a test may change it; the metering process's stays put)
        file, shown = _named(path, os.getcwd())
        stamp = _stamp(file, index) if stored is not None else None
        # the patch hands over the stored request itself when the one sent matches it
        if stamp is not None and stamp in self._sent and request is stored:
            self._note(("again", self.current, file, shown, index, stamp))
            return
        if stamp is not None:
            self._sent.add(stamp)
        sent = PlainRequest.of(request)
        kept = PlainRequest.of(stored) if stored is not None else None
        self._note(("once", self.current, file, shown, index, sent, response, kept, stamp))

    def _note(self, item: tuple[Any, ...]) -> None:
        self._batch.append(item)
        if len(self._batch) >= BATCH:
            self._flush()

    def _flush(self) -> None:
        batch, self._batch = self._batch, []
        if not batch or self._gone or self._child:
            return
        try:
            self.connection.send(("observe", batch))
        except (pickle.PicklingError, TypeError, AttributeError):
            for item in batch:  # one note the pipe cannot carry must not lose the others
                self._send_one(item)
        except (OSError, ValueError) as exc:
            self._lost(exc)

    def _send_one(self, item: tuple[Any, ...]) -> None:
        try:
            self.connection.send(("observe", [item]))
        except (pickle.PicklingError, TypeError, AttributeError) as exc:
            self.internal_errors.append(
                f"{item[1]}: {item[3]} interaction {item[4]}: costsim could not hand it to its "
                f"metering process ({type(exc).__name__}: {exc}); please report it"
            )
        except (OSError, ValueError) as exc:
            self._lost(exc)

    def _alive(self) -> bool:
        if self._exit is None:
            try:
                pid, status = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:  # reaped elsewhere: gone, its exit code unknown
                self._exit = _UNKNOWN
                return False
            if pid:
                self._exit = os.waitstatus_to_exitcode(status)
        return self._exit is None

    def _lost(self, exc: BaseException | None = None) -> None:
        if not self._gone:
            self._gone = True
            code = None if self._alive() else self._exit
            why = (
                type(exc).__name__
                if code is None
                else "exit code unknown"
                if code == _UNKNOWN
                else f"exit code {code}"
            )
            self.internal_errors.append(
                f"costsim's metering process stopped ({why}): this run's LLM calls are not all "
                "counted"
            )

    # --- asking ---------------------------------------------------------------------------

    def _ask(self, kind: str, payload: Any, default: Any, *, strict: bool = False) -> Any:
        """The metering process's answer (after every note so far); on its failure the
        ``default``, the failure kept as costsim's own (``strict``: raised)."""
        with self._lock:
            status, answer = self._exchange(kind, payload)
        if status == "ok":
            return answer
        if strict:
            raise MeteringError(answer)
        if status == "error":
            self.internal_errors.append(f"{answer} (a costsim bug; please report it)")
        return default

    def _exchange(self, kind: str, payload: Any) -> tuple[str, Any]:
        self._flush()
        if self._gone or self._child:
            return "lost", "costsim's metering process is not running"
        try:
            self.connection.send((kind, payload))
            while not self.connection.poll(_POLL):  # as long as it takes, while it runs
                if not self._alive():
                    raise EOFError
            status, answer = self.connection.recv()
        except (OSError, EOFError, ValueError, pickle.UnpicklingError) as exc:
            self._lost(exc)
            return "lost", "costsim's metering process stopped"
        return status, answer

    def calls(self, test: str) -> list[Any]:
        """``test``'s calls, metered (the ``costsim`` fixture); a metering process that
        failed or stopped raises, as metering in the test process does: a test's assertions
        on its calls are never checked against an empty list."""
        return list(self._ask("calls", test, [], strict=True))

    def finish(self, run: Run, summary: Any = None) -> list[str]:
        """The run's failures; ``summary`` (its options) is rendered meanwhile. This
        process's own errors travel with the run, so that the report the metering process
        writes lists them too; its answer is the whole list."""
        mine = replace(run, internal_errors=tuple(self.internal_errors))
        answer = self._ask("finish", (mine, summary), None)
        if answer is None:  # stopped or failed: said in internal_errors
            return []
        failures, internal = answer
        self.internal_errors[:] = internal
        return list(failures)

    # xdist workers and controllers meter in their own process (see start.forkable)
    def worker_output(self, run: Run) -> str:  # pragma: no cover
        raise NotImplementedError("an xdist worker meters in its own process")

    def merge_worker(self, output: str) -> None:  # pragma: no cover
        raise NotImplementedError("an xdist controller meters in its own process")

    def summary(self, options: Any) -> list[str]:
        """The summary lines; a failure is raised (the hook reports it as costsim's)."""
        return list(self._ask("summary", options, [], strict=True))

    def close(self) -> None:
        if self._child:
            return
        if not self._gone:
            with contextlib.suppress(OSError, ValueError):
                self.connection.send(("close", None))
        self._gone = True
        self.connection.close()
        deadline = time.monotonic() + 5
        while self._alive() and time.monotonic() < deadline:
            time.sleep(0.01)
        if self._alive():
            with contextlib.suppress(OSError):
                os.kill(self.pid, signal.SIGTERM)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(self.pid, 0)


@lru_cache(maxsize=4096)
def _named(path: str, cwd: str) -> tuple[str, str]:
    """(absolute path, name as reports show it) of a cassette from ``cwd``: once per file and
    working folder, not once per call."""
    return os.path.normpath(os.path.join(cwd, path)), display_path(Path(path))  # as abspath


def _stamp(file: str, index: int) -> tuple[str, int, int, int] | None:
    """An interaction of a file (an absolute path) as it is now (a re-recorded file is
    another)."""
    try:
        status = os.stat(file)
    except OSError:
        return None
    return (file, index, status.st_mtime_ns, status.st_size)
