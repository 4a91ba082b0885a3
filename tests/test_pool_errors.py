"""An error while a process pool has work pending (a job that cannot be pickled, a bug, Ctrl-C)
ends the run with that error, its workers stopped. Python 3.11's pool shutdown can wait
forever on work it cancels (CPython gh-94440, gh-116685): a compare whose job failed to
pickle (after an in-process pytester run took costsim's strategy modules away and left a
thread, so the pool forked a server) hung in ``ProcessPoolExecutor.shutdown``; the second
test reproduces that hang on the build before the fix."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from tests.conftest import ROOT

SCRIPT = textwrap.dedent(
    """
    import threading, time
    from costsim.api.execution import Settings, pool_session, run_batches

    def work(job, run):
        time.sleep(0.02)
        return sum(run)

    class Unpicklable:
        def __reduce__(self):
            raise TypeError("not this one")

    settings = Settings(jobs=2)
    runs = [[n] for n in range(40)]
    for job in (None, Unpicklable()):
        try:
            with pool_session(settings):
                for n, result in enumerate(run_batches(settings, work, job, runs)):
                    if n == 2:
                        raise ValueError("stop")
        except (ValueError, TypeError) as exc:
            print(type(exc).__name__, flush=True)
    """
)


def test_an_error_with_work_pending_ends_the_run() -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["ValueError", "TypeError"]


HANG = textwrap.dedent(
    """
    import os, sys, tempfile, threading, time
    from _pytest.pytester import SysModulesSnapshot
    import costsim.strategies.registry as registry

    snapshot = SysModulesSnapshot()
    registry.strategies()  # what an in-process pytester run imports ...
    snapshot.restore()  # ... and takes away when it ends, leaving a thread behind
    threading.Thread(target=time.sleep, args=(120,), daemon=True).start()
    os.environ["COSTSIM_CACHE_DIR"] = tempfile.mkdtemp()
    from click.testing import CliRunner
    from costsim.cli import cli

    args = ["compare", sys.argv[1], "--variant", "routing", "--variant", "caching-static"]
    result = CliRunner().invoke(cli, args)
    print(type(result.exception).__name__, flush=True)
    """
)


def test_a_job_that_cannot_be_pickled_fails_the_compare_instead_of_hanging() -> None:
    """The order a test run once took: the pool's job meets a second copy of a strategy's
    parameter class, cannot be pickled, and the compare waited forever in shutdown."""
    from tests.conftest import CORPUS

    if not CORPUS.is_dir():
        pytest.skip(f"the corpus is not at {CORPUS}")
    done = subprocess.run(
        [sys.executable, "-c", HANG, str(ROOT / "benchmarks" / "corpus_scenario.yaml")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=45,
        check=False,
    )
    assert done.stdout.split()[-1:] == ["PicklingError"], done.stdout + done.stderr
