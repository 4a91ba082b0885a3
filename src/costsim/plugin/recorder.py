"""The test process's side of the metering process (:mod:`costsim.plugin.helper`).

It notes each call vcrpy replays or records, with the test that made it, and hands the notes
over in batches; it keeps what the hooks read before any test runs (markers, the tests
selected). A replay of an interaction already handed over, sent as recorded, is a note of a
few fields: no body is copied twice. Light on purpose: it imports vcrpy and the standard
library only, so the run pays nothing for costsim's engine.
"""

from __future__ import annotations

import contextlib
import os
import pickle
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, replace
from multiprocessing.connection import Connection
from typing import Any

from costsim.plugin.run import Run, Setup
from costsim.plugin.vcr_patch import VcrPatch, same_body

__all__ = ["PlainRequest", "Recorder"]

BATCH = 256
"""Notes handed over at once."""
_TIMEOUT = 600.0
"""Seconds the end of a run waits for the metering process before it gives up on it."""


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


class Recorder:
    """What the hooks talk to while the metering process meters."""

    def __init__(self, process: Any, connection: Connection) -> None:
        self.process = process
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

    @classmethod
    def start(cls, setup: Setup) -> Recorder | None:
        from costsim.plugin.helper import start

        started = start(setup)
        return None if started is None else cls(*started)

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

    # --- noting calls --------------------------------------------------------------------

    def observe(
        self,
        cassette_path: str,
        index: int,
        request: Any,
        response: Mapping[str, Any],
        stored: Any = None,
    ) -> None:
        """One replayed (``stored`` is the cassette's request) or recorded interaction."""
        stamp = _stamp(cassette_path, index) if stored is not None else None
        if stamp is not None and stamp in self._sent and same_body(request, stored):
            self._note(("again", self.current, cassette_path, index, stamp))
            return
        if stamp is not None:
            self._sent.add(stamp)
        sent = PlainRequest.of(request)
        kept = PlainRequest.of(stored) if stored is not None else None
        self._note(("once", self.current, cassette_path, index, sent, response, kept, stamp))

    def _note(self, item: tuple[Any, ...]) -> None:
        self._batch.append(item)
        if len(self._batch) >= BATCH:
            self._flush()

    def _flush(self) -> None:
        batch, self._batch = self._batch, []
        if not batch or self._gone:
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
                f"{item[1]}: {item[2]} interaction {item[3]}: costsim could not hand it to its "
                f"metering process ({type(exc).__name__}: {exc}); please report it"
            )
        except (OSError, ValueError) as exc:
            self._lost(exc)

    def _lost(self, exc: BaseException | None = None) -> None:
        if not self._gone:
            self._gone = True
            code = getattr(self.process, "exitcode", None)
            why = f"exit code {code}" if code is not None else type(exc).__name__
            self.internal_errors.append(
                f"costsim's metering process stopped ({why}): this run's LLM calls are not all "
                "counted"
            )

    # --- asking ---------------------------------------------------------------------------

    def _ask(self, kind: str, payload: Any, default: Any) -> Any:
        self._flush()
        if self._gone:
            return default
        try:
            self.connection.send((kind, payload))
            if not self.connection.poll(_TIMEOUT):
                raise TimeoutError(f"no answer in {_TIMEOUT:.0f} s")
            status, answer = self.connection.recv()
        except (OSError, EOFError, ValueError, TimeoutError) as exc:
            self._lost(exc)
            return default
        if status == "error":
            self.internal_errors.append(f"{answer} (a costsim bug; please report it)")
            return default
        return answer

    def calls(self, test: str) -> list[Any]:
        """``test``'s calls, metered (the ``costsim`` fixture)."""
        return list(self._ask("calls", test, []))

    def _run(self, run: Run) -> Run:
        return replace(
            run,
            budgets=dict(self.budgets),
            tolerances=dict(self.tolerances),
            usage_errors=tuple(self.usage_errors),
            selected=frozenset(self.selected),
        )

    def finish(self, run: Run, summary: Any = None) -> list[str]:
        """The run's failures; ``summary`` (its options) is rendered meanwhile."""
        failures, internal = self._ask("finish", (self._run(run), summary), ([], []))
        self.internal_errors.extend(internal)
        return list(failures)

    def worker_output(self, run: Run) -> str:
        return str(self._ask("worker_output", self._run(run), '{"tests": {}}'))

    def merge_worker(self, output: str) -> None:  # pragma: no cover - workers meter in-process
        raise NotImplementedError("an xdist controller meters in its own process")

    def summary(self, options: Any) -> list[str]:
        return list(self._ask("summary", options, []))

    def close(self) -> None:
        if not self._gone:
            with contextlib.suppress(OSError, ValueError):
                self.connection.send(("close", None))
        self._gone = True
        self.connection.close()
        self.process.join(timeout=5)
        if self.process.is_alive():
            self.process.terminate()


def _stamp(path: str, index: int) -> tuple[str, int, int, int] | None:
    """An interaction of a file as it is now (a re-recorded file is another)."""
    try:
        status = os.stat(path)
    except OSError:
        return None
    return (os.path.abspath(path), index, status.st_mtime_ns, status.st_size)
