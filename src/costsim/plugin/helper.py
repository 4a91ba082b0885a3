"""The metering process: calls are metered beside the tests, not in their way.

Metering needs costsim's engine and the price lists, a few hundred milliseconds to import, and
reads every call it sees. In the test process that time adds to the run; so where a second
core is free, the plugin forks a metering process when the run starts: it imports costsim
while the tests run, and meters the calls the test process hands it
(:class:`~costsim.plugin.recorder.Recorder`: a few microseconds each). The end of the run
asks it for the failures and the summary. The figures are the same as metering in the test
process (:class:`~costsim.plugin.local.LocalState` runs there and here).

Forking is safe only where the test process has no other thread yet and the platform forks
well (Linux); anywhere else, or with ``COSTSIM_METER_PROCESS=0``, or on one core, the calls are
metered in the test process, as before. The process is forked directly (``os.fork``), not
through :mod:`multiprocessing`, so that nothing of the test process's own use of
multiprocessing (daemonic workers, exit hooks in forked children) can stop it. If it stops
anyway, the run says so and its costsim part fails: a count is never silently short.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
import threading
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any

from costsim.api.cpus import usable_cpus
from costsim.plugin.run import Setup

__all__ = ["ENV", "forkable", "serve", "start"]

ENV = "COSTSIM_METER_PROCESS"
"""``0`` meters in the test process; ``1`` uses a metering process wherever one can fork."""


def forkable() -> bool:
    """Whether a metering process can be forked safely and is worth it here."""
    wanted = os.environ.get(ENV, "").strip().lower()
    if wanted in ("0", "no", "off", "false"):
        return False
    if not sys.platform.startswith("linux") or not hasattr(os, "register_at_fork"):
        return False
    if threading.active_count() != 1:
        return False
    return wanted in ("1", "yes", "on", "true") or usable_cpus() > 1


def start(setup: Setup) -> tuple[int, Connection] | None:
    """A metering process (forked now): its process id and the test process's end of its
    pipe; None when it cannot be started (the run then meters in the test process)."""
    try:
        ours, theirs = multiprocessing.Pipe()
    except OSError:
        return None
    try:
        pid = os.fork()
    except OSError:
        ours.close()
        theirs.close()
        return None
    if pid == 0:  # the metering process: never returns into the test run
        code = 1
        try:
            ours.close()
            serve(theirs, setup)
            code = 0
        finally:
            os._exit(code)
    theirs.close()
    return pid, ours


def serve(connection: Connection, setup: Setup) -> None:
    """The metering process: answer the test process until it says ``close`` or goes away."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the test process's to handle
    from costsim.plugin.local import LocalState  # imported here, beside the running tests

    state = LocalState(setup)
    handlers = _handlers(state)
    while True:
        try:
            kind, payload = connection.recv()
        except Exception:  # the test process went away, or the stream broke: stop
            return
        if kind == "close":
            return
        try:
            reply: Any = ("ok", handlers[kind](payload))
        except Exception as exc:  # reported by the test process as costsim's own failure
            reply = ("error", f"{kind}: {type(exc).__name__}: {exc}")
        if kind != "observe":
            try:
                connection.send(reply)
            except (OSError, ValueError):
                return
        if kind == "finish" and reply[0] == "ok":
            state.prepare_summary(payload[1])  # while the test process ends its run


def _handlers(state: Any) -> dict[str, Callable[[Any], Any]]:
    def observe(batch: list[tuple[Any, ...]]) -> None:
        done = {item[1] for item in batch} - {batch[-1][1]} if batch else set()
        for item in batch:
            try:
                if item[0] == "again":
                    state.observe_again(*item[1:])
                else:
                    state.observe(*item[1:])
            except Exception as exc:  # a costsim bug: the run hears of it at the end
                state.internal_errors.append(
                    f"{item[1]}: {item[3]} interaction {item[4]}: costsim could not meter it "
                    f"({type(exc).__name__}: {exc}); please report it"
                )
        state.meter(done)  # tests that have moved on: metered now, not at the end

    return {
        "observe": observe,
        "calls": state.calls,
        "finish": lambda asked: (state.finish(asked[0]), list(state.internal_errors)),
        "summary": state.summary,
    }
