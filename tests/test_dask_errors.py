"""Whatever goes wrong with a Dask cluster given to ``--scheduler`` is one sentence and exit 2,
within seconds: never a hang (an address that is not a scheduler), never a traceback (a
cluster without workers, an answer that is not Dask's)."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from costsim.api import cluster
from costsim.cli import cli

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = ROOT / "scenarios"

distributed = pytest.importorskip(
    "distributed", reason="Dask distributed is not installed (pip install 'costsim[dask]')"
)


@pytest.fixture(autouse=True)
def _short(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cluster, "_DASK_SECONDS", 1)


def _server(answer: bytes | None) -> Iterator[str]:
    """A TCP server on loopback that accepts and says ``answer`` (None: says nothing, as a
    web server waiting for a request does)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    held: list[socket.socket] = []

    def serve() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            held.append(conn)
            if answer is not None:
                conn.sendall(answer)

    threading.Thread(target=serve, daemon=True).start()
    yield f"tcp://127.0.0.1:{listener.getsockname()[1]}"
    listener.close()
    for conn in held:
        conn.close()


@pytest.fixture
def silent() -> Iterator[str]:
    yield from _server(None)


@pytest.fixture
def babbling() -> Iterator[str]:
    yield from _server(b"\xff" * 64 + b"not dask" * 100)


def _compare(address: str) -> tuple[int, str]:
    result = CliRunner().invoke(
        cli, ["compare", str(SCENARIOS), "--no-cache", "--scheduler", address]
    )
    return result.exit_code, result.output


@pytest.mark.parametrize("kind", ["silent", "babbling"])
def test_an_address_that_is_not_a_scheduler_is_one_sentence(
    kind: str, request: pytest.FixtureRequest
) -> None:
    address = request.getfixturevalue(kind)
    code, output = _compare(address)
    assert code == 2
    assert f"{address} does not answer as a Dask scheduler" in output
    assert "Traceback" not in output and len(output.strip().splitlines()) == 1


def test_a_scheduler_without_workers_is_one_sentence() -> None:
    with distributed.LocalCluster(
        n_workers=0, processes=False, host="127.0.0.1", protocol="tcp", dashboard_address=":0"
    ) as empty:
        code, output = _compare(empty.scheduler_address)
    assert code == 2
    assert f"the Dask cluster at {empty.scheduler_address} failed during the run" in output
    assert "Traceback" not in output


class _Gone:
    """A client whose scheduler went during the run: every future is cancelled."""

    def __init__(self, error: BaseException) -> None:
        self.error = error

    def scatter(self, job: object, broadcast: bool) -> object:
        return job

    def scheduler_info(self) -> dict[str, object]:
        return {"workers": {"w": {}}}

    def submit(self, *args: object, **kwargs: object) -> _Gone:
        return self

    def result(self) -> object:
        raise self.error


def test_a_cluster_that_goes_during_the_run_is_one_sentence() -> None:
    """Its scheduler killed, its workers gone: the futures are cancelled; costsim says so in
    one sentence (exit 2), while an error of costsim's own work is raised as it is."""
    from distributed.client import FutureCancelledError

    from costsim.errors import ConfigError

    gone = _Gone(FutureCancelledError("run-0", "scheduler-connection-lost"))
    with pytest.raises(ConfigError, match="the Dask cluster at tcp://x:8786 failed during the run"):
        list(cluster._on_cluster(gone, "tcp://x:8786", print, None, [[1]], lambda run: run))
    own = _Gone(ValueError("a bug of costsim's own"))
    with pytest.raises(ValueError, match="own"):
        list(cluster._on_cluster(own, "tcp://x:8786", print, None, [[1]], lambda run: run))


def test_a_port_nothing_listens_on_is_told_at_once() -> None:
    """Refused, not waited out: the client retried for its whole connect time first."""
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()  # nothing listens there now
    code, output = _compare(f"tcp://127.0.0.1:{port}")
    assert code == 2
    assert f"cannot reach the Dask scheduler at tcp://127.0.0.1:{port}" in output
    assert "refused" in output.lower()


def test_a_tls_address_without_tls_settings_says_so() -> None:
    """A ``tls://`` scheduler needs the client's certificates from the Dask configuration;
    without them, costsim says that, not that the address is no scheduler."""
    code, output = _compare("tls://127.0.0.1:8786")
    assert code == 2
    assert "is a TLS address, and the Dask configuration has no TLS settings" in output
