"""An error while a process pool has work pending (a job that cannot be pickled, a bug, Ctrl-C)
ends the run with that error, its workers stopped. Python 3.11's pool shutdown can wait
forever on work it cancels (CPython gh-94440, gh-116685): a compare whose job failed to
pickle (after an in-process pytester run took costsim's strategy modules away) hung in
``ProcessPoolExecutor.shutdown`` instead of failing."""

from __future__ import annotations

import subprocess
import sys
import textwrap

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
