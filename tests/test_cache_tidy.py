"""The cache's database does not only grow (:mod:`costsim.io.entries`): rows unused for a month
go, and past a size the least recently used, never one used today."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from costsim import api
from costsim.io import entries
from costsim.io.entries import Entries
from costsim.io.seal import SEAL_LENGTH
from tests.conftest import EXAMPLES


@pytest.fixture
def database(tmp_path: Path) -> Iterator[Entries]:
    found = Entries(tmp_path / "entries.sqlite")
    yield found
    found.forget()


def _used(path: Path) -> dict[str, int]:
    with contextlib.closing(sqlite3.connect(path)) as connection:
        return dict(connection.execute("SELECT key, used FROM entries"))


def _age(path: Path, ages: dict[str, int]) -> None:
    """Mark rows as last used ``ages[key]`` days ago."""
    today = entries._today()
    with contextlib.closing(sqlite3.connect(path)) as connection:
        for key, age in ages.items():
            connection.execute("UPDATE entries SET used = ? WHERE key = ?", (today - age, key))
        connection.commit()


def _new_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """As a new run: its first write tidies."""
    monkeypatch.setattr(entries, "_TIDIED", set())


def test_rows_unused_for_a_month_are_deleted_by_the_next_run(
    database: Entries, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key in ("old", "month", "recent"):
        database.put("trace", key, b"{}")
    _age(database.path, {"old": entries.MAX_AGE_DAYS + 1, "month": entries.MAX_AGE_DAYS})
    database.put("trace", "more", b"{}")  # the same process: tidied already
    assert set(_used(database.path)) == {"old", "month", "recent", "more"}
    _new_process(monkeypatch)
    database.put("trace", "new", b"{}")
    assert set(_used(database.path)) == {"month", "recent", "more", "new"}


def test_past_the_size_the_least_recently_used_go_but_never_todays(
    database: Entries, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(entries, "MAX_BYTES", 3 * (1_000 + SEAL_LENGTH))  # three rows
    for key in ("a", "b", "c", "d", "e"):
        database.put("share", key, b"x" * 1_000)
    _age(database.path, {"a": 5, "b": 3, "c": 3, "d": 1})
    _new_process(monkeypatch)
    database.put("share", "f", b"x" * 1_000)  # tidied first: e (today), d, c fit
    assert set(_used(database.path)) == {"c", "d", "e", "f"}
    _age(database.path, {"c": 9, "d": 9, "e": 9, "f": 9})
    monkeypatch.setattr(entries, "MAX_BYTES", 10)
    _new_process(monkeypatch)
    for key in ("g", "h"):  # today's rows alone are over the size: kept all the same
        database.put("share", key, b"x" * 1_000)
    assert set(_used(database.path)) == {"g", "h"}


def test_reading_a_row_marks_it_used_today(database: Entries) -> None:
    database.put("trace", "k", b"{}")
    _age(database.path, {"k": 7})
    assert database.get("trace", "k", 100) == b"{}"
    assert _used(database.path)["k"] == entries._today()


def test_a_database_of_the_previous_layout_is_started_afresh(tmp_path: Path) -> None:
    path = tmp_path / "entries.sqlite"
    with contextlib.closing(sqlite3.connect(path)) as connection:
        connection.execute(
            "CREATE TABLE entries (kind TEXT NOT NULL, key TEXT NOT NULL, data BLOB NOT NULL, "
            "PRIMARY KEY (kind, key))"
        )
        connection.execute("PRAGMA user_version = 3")
        connection.commit()
    found = Entries(path)
    try:
        found.put("trace", "k", b"{}")
        assert found.get("trace", "k", 100) == b"{}"
    finally:
        found.forget()


def test_a_run_marks_what_it_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COSTSIM_CACHE_DIR", str(tmp_path / "cache"))
    api.load(EXAMPLES, jobs=1)
    (database,) = (tmp_path / "cache").rglob("entries.sqlite")
    used = _used(database)
    assert used and set(used.values()) == {entries._today()}
    _age(database, dict.fromkeys(used, 2))
    api.load(EXAMPLES, jobs=1)  # read from the cache: each row marked used today
    assert set(_used(database).values()) == {entries._today()}
