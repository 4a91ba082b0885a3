"""Which test files a pytest run collected whole: a test of a saved baseline that belongs to
one of them, and that the run neither selected nor deselected, no longer exists.

A file is whole when every test pytest found in it was selected or deselected (``-k``, ``-m``,
``--deselect``). It is not when an argument named some of its tests (``file.py::test``),
when a plugin dropped some of its tests without saying so (the items collected and those
selected or deselected disagree), or in a ``--lf`` / ``--sw`` run (they leave tests out while
collecting, unannounced). Nothing is known whole in a ``--pyargs`` run, where an argument
that names part of a file cannot be placed, nor in a process that collected nothing (the
xdist controller: its workers tell).
"""

from __future__ import annotations

import os
from collections.abc import Iterable

import pytest

__all__ = ["COLLECTED", "DESELECTED", "collection_order", "deselected", "test_file", "whole_files"]

COLLECTED: pytest.StashKey[list[str]] = pytest.StashKey()
"""Node ids of the items as collected, before any plugin keeps or drops some, in collection
order (the order the costsim section lists drifted calls in)."""
DESELECTED: pytest.StashKey[set[str]] = pytest.StashKey()
"""Node ids of the items announced as deselected."""

_PARTIAL_RUNS = ("lf", "stepwise", "stepwise_skip")
"""Options of pytest's own plugins that leave tests out while collecting."""


def test_file(test: str) -> str:
    """The file part of a node id (``tests/test_a.py`` of ``tests/test_a.py::test_x[1]``)."""
    return test.split("::", 1)[0]


def collection_order(config: pytest.Config) -> tuple[str, ...]:
    listed: list[str] = config.stash.get(COLLECTED, [])
    return tuple(listed)


def deselected(config: pytest.Config) -> frozenset[str]:
    announced: set[str] = config.stash.get(DESELECTED, set())
    return frozenset(announced)


def _named_files(config: pytest.Config) -> set[str] | None:
    """Files (as in node ids) of which an argument named only some tests; None when one of
    them cannot be placed under the root (then no file is known to be whole)."""
    named = set()
    start = str(config.invocation_params.dir)
    root = str(config.rootpath)
    for argument in config.args:
        path, found, _ = str(argument).partition("::")
        if not found:
            continue
        full = os.path.abspath(os.path.join(start, path))
        try:
            relative = os.path.relpath(full, root)
        except ValueError:  # another drive
            return None
        if relative.startswith("..") or not os.path.isfile(full):
            return None
        named.add(relative.replace(os.sep, "/"))
    return named


def whole_files(config: pytest.Config, selected: Iterable[str]) -> set[str]:
    if COLLECTED not in config.stash or config.getoption("pyargs", False):
        return set()
    if any(config.getoption(name, False) for name in _PARTIAL_RUNS):
        return set()
    named = _named_files(config)
    if named is None:
        return set()
    found = set(selected) | deselected(config)
    dropped = set(collection_order(config)) - found
    return {test_file(test) for test in found} - named - {test_file(test) for test in dropped}
