"""Budget patterns (``[tool.costsim] budgets``) that check nothing in a run: they match no
test of it, and are not written for the tests of files it did not collect."""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Sequence
from pathlib import Path

__all__ = ["idle"]


def idle(patterns: Sequence[str], tests: Iterable[str], root: Path | None) -> list[str]:
    """The ``patterns`` no test id of ``tests`` matches, but those for the tests of a file
    under ``root`` that exists and that the run did not collect (``pytest tests/test_one.py``
    with budgets for the others: right, only not in use this run)."""
    tests = set(tests)
    files = {test.split("::", 1)[0] for test in tests}
    return [
        pattern
        for pattern in patterns
        if not any(fnmatch.fnmatchcase(test, pattern) for test in tests)
        and not _for_other_files(pattern, files, root)
    ]


def _for_other_files(pattern: str, files: set[str], root: Path | None) -> bool:
    """``pattern`` names the tests of files under ``root`` none of which is among ``files``
    (the test files of the run): written for tests this run did not collect."""
    head, found, _ = pattern.partition("::")
    if not found or root is None or any(fnmatch.fnmatchcase(name, head) for name in files):
        return False
    try:
        return next(iter(root.glob(head)), None) is not None
    except (ValueError, OSError, NotImplementedError):  # not a pattern glob takes
        return False
