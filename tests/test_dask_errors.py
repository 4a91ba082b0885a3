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
