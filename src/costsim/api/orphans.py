"""Pool workers that end with the process that started them.

A process killed outright (SIGTERM, SIGKILL: a CI job cancelled, a timeout) cannot shut its
process pool down; its idle workers wait on their queue for minutes, holding the output pipe
a CI step reads to its end. On Linux each worker asks the kernel for a signal when its parent
ends (``prctl``'s ``PR_SET_PDEATHSIG``) and takes it as any SIGTERM: it ends.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import signal
import sys

__all__ = ["die_with_parent"]

_PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    """Ask Linux to stop this worker when the process that started it ends, and stop now if
    it has meanwhile (elsewhere, or a worker a fork server started: nothing)."""
    parent = multiprocessing.parent_process()
    if not sys.platform.startswith("linux") or parent is None or os.getppid() != parent.pid:
        return
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):
        return
    if os.getppid() != parent.pid:  # it ended before the request took effect
        os._exit(1)
