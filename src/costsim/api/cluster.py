"""Batches run on the workers of an existing Dask distributed cluster (``--scheduler``).

Results come back in the order of the batches, so the comparison is the local run's, byte
for byte. Whatever goes wrong with the cluster is one sentence (exit 2), never a hang or a
traceback: an address that is not a scheduler is told within :data:`_DASK_SECONDS`, and a
cluster that fails during the run (its scheduler gone, no worker) says so.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import importlib
import itertools
import socket
import threading
from collections.abc import Callable, Generator, Iterator
from typing import Any, TypeVar

from costsim.errors import ConfigError, CostsimError

__all__ = ["on_dask"]

T = TypeVar("T")
R = TypeVar("R")


def on_dask(
    address: str,
    function: Callable[[Any, list[T]], R],
    job: Any,
    runs: list[list[T]],
    prepare: Callable[[list[T]], list[T]],
) -> Generator[R, None, None]:
    try:
        distributed: Any = importlib.import_module("distributed")
    except ImportError:
        raise ConfigError(
            "--scheduler needs Dask distributed: pip install 'costsim[dask]'"
        ) from None
    _handshake(distributed, address)
    try:
        client = distributed.Client(address, timeout=f"{_DASK_SECONDS}s", set_as_default=False)
    except (OSError, ValueError, TimeoutError) as exc:
        raise ConfigError(f"cannot reach the Dask scheduler at {address} ({exc})") from None
    try:
        yield from _on_cluster(client, address, function, job, runs, prepare)
    finally:
        with contextlib.suppress(Exception):
            client.close(timeout=_DASK_SECONDS)


_DASK_SECONDS = 10
"""How long a Dask scheduler has to answer: to connect, to shake hands, to close."""


def _handshake(distributed: Any, address: str) -> None:
    """Shake hands with ``address`` as a Dask client would, within :data:`_DASK_SECONDS`:
    an address that accepts connections but is not a scheduler (a web server, the dashboard's
    port) made the client wait forever, and one that answers something else, fail with a
    traceback."""
    # as the client connects: with the TLS settings of the user's Dask configuration
    security = distributed.Security().get_connection_args("client")
    if address.startswith("tls://") and security.get("ssl_context") is None:
        raise ConfigError(
            f"{address} is a TLS address, and the Dask configuration has no TLS settings for a "
            "client (distributed.comm.tls.ca-file, .client.cert, .client.key)"
        )
    _reachable(distributed, address)

    async def shake() -> None:
        comm = await distributed.comm.connect(address, timeout=_DASK_SECONDS, **security)
        await comm.close()

    def run() -> None:  # connecting has its own limit; the handshake, as long again
        asyncio.run(asyncio.wait_for(shake(), 2 * _DASK_SECONDS))

    done: list[BaseException | None] = []
    thread = threading.Thread(target=lambda: done.append(_raised(run)), daemon=True)
    thread.start()  # its own event loop, whatever loop the caller runs
    thread.join(2 * _DASK_SECONDS + 5)
    problem = done[0] if done else TimeoutError()
    if problem is None:
        return
    if isinstance(problem, OSError) and "Timed out trying to connect" in str(problem):
        raise ConfigError(f"cannot reach the Dask scheduler at {address} ({problem})") from None
    why = (
        "no handshake within its time"
        if isinstance(problem, TimeoutError)
        else f"it answered otherwise: {_first_line(problem)}"
    )
    raise ConfigError(
        f"{address} does not answer as a Dask scheduler ({why}): give the scheduler's "
        "address (tcp://HOST:8786 by default), not its dashboard's"
    )


def _reachable(distributed: Any, address: str) -> None:
    """A TCP address nothing listens on, or whose host has no address, is told at once (the
    client retries for its whole connect time first); one that does not answer is left to
    that time."""
    try:
        scheme, location = distributed.comm.parse_address(address)
        host, port = distributed.comm.parse_host_port(location)
    except (ValueError, TypeError):
        return  # the client says what is wrong with it
    if scheme not in ("tcp", "tls"):
        return
    try:
        with socket.create_connection((host, port), timeout=_DASK_SECONDS):
            return
    except (ConnectionRefusedError, socket.gaierror) as exc:
        raise ConfigError(f"cannot reach the Dask scheduler at {address} ({exc})") from None
    except OSError:
        return  # no answer yet: the client waits its connect time, and says so


def _raised(function: Callable[[], None]) -> BaseException | None:
    try:
        function()
    except BaseException as exc:
        return exc
    return None


def _on_cluster(
    client: Any,
    address: str,
    function: Callable[[Any, list[T]], R],
    job: Any,
    runs: list[list[T]],
    prepare: Callable[[list[T]], list[T]],
) -> Generator[R, None, None]:
    """The runs' results from the cluster, in order (at most two runs per worker ahead of the
    one taken); a cluster that fails on the way (its scheduler gone, no worker to run on) is
    one sentence, not a traceback."""
    try:
        shared = client.scatter(job, broadcast=True)
        workers = max(1, len(client.scheduler_info().get("workers", {})))
        upcoming: Iterator[list[T]] = iter(runs)
        pending = [
            client.submit(function, shared, prepare(run), pure=False)
            for run in itertools.islice(upcoming, 2 * workers)
        ]
        while pending:
            result = pending.pop(0).result()
            nxt = next(upcoming, None)
            if nxt is not None:
                pending.append(client.submit(function, shared, prepare(nxt), pure=False))
            yield result
    except CostsimError:
        raise
    except (Exception, asyncio.CancelledError) as exc:
        if not _the_cluster_s(exc):
            raise
        raise ConfigError(
            f"the Dask cluster at {address} failed during the run ({_first_line(exc)}): "
            "check its scheduler and workers, or run without --scheduler"
        ) from None


def _the_cluster_s(exc: BaseException) -> bool:
    """An error of the cluster, not of costsim's work on it: the connection (closed, timed
    out), a future cancelled because its scheduler went or its workers died, anything Dask
    itself raises."""
    infrastructure = (
        OSError,
        TimeoutError,
        MemoryError,
        asyncio.CancelledError,
        concurrent.futures.CancelledError,
    )
    module = type(exc).__module__.partition(".")[0]
    return isinstance(exc, infrastructure) or module in ("distributed", "tornado")


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__
