"""A pool worker ends with the costsim process that started it, however that one ends.

A CI job cancelled or timed out kills costsim outright (SIGTERM, SIGKILL): it cannot shut its
pool down, and its idle workers used to wait on their queue for minutes, holding the output
pipe the CI step reads to its end (a trial: `costsim compare ... | cat` still hung 30 s after
the TERM, the workers 200 s later).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

SCRIPT = """
import os, sys, time
from concurrent.futures import ProcessPoolExecutor
from costsim.api.execution import _context, _worker_start

pool = ProcessPoolExecutor(1, mp_context=_context(), initializer=_worker_start)
print(pool.submit(os.getpid).result(), flush=True)
time.sleep(120)
"""


def _cpu_seconds(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"  # a zombie has ended: only its exit status waits to be read


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl is Linux's")
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["term", "kill"])
def test_an_idle_worker_ends_with_its_killed_parent(sig: signal.Signals) -> None:
    command = [sys.executable, "-c", SCRIPT]
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True) as run:
        assert run.stdout is not None
        worker = int(run.stdout.readline())
        assert _alive(worker)
        os.kill(run.pid, sig)
        run.wait(timeout=30)
    deadline = time.monotonic() + 20
    while _alive(worker) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(worker)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_ctrl_c_exits_130_without_a_traceback(corpus: Path, tmp_path: Path) -> None:
    """Ctrl-C is the shell's 130 (128 + SIGINT), not 1, which a broken budget or gate means."""
    command = [sys.executable, "-m", "costsim", "report", str(corpus), "--lenient"]
    env = {**os.environ, "COSTSIM_CACHE_DIR": str(tmp_path / "cache")}
    with subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env=env) as run:
        while _cpu_seconds(run.pid) < 1.2 and run.poll() is None:
            time.sleep(0.05)  # until costsim is imported (half a second) and reading the corpus
        run.send_signal(signal.SIGINT)
        _, stderr = run.communicate(timeout=60)
    assert run.returncode == 130, stderr
    assert "Aborted!" in stderr and "Traceback" not in stderr
