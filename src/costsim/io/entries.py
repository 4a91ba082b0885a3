"""The cache's small entries (loaded traces, per-cassette shares) in one SQLite file.

A run over a thousand cassettes makes two thousand small entries. As files, each costs a file
creation, which some file systems make slow (a millisecond of kernel time each on some virtual
machines, more under Windows' scanners); in one SQLite database (the standard library's
``sqlite3``, write-ahead log) each is a row written in its own transaction: atomic, so a run
killed at any moment leaves whole entries or none, and shared safely by the processes of a
run (one connection per process and thread). Each row's bytes carry their digest: a row
damaged on disk or edited (a flipped byte that still reads as JSON) is refused and rebuilt,
and a database SQLite finds damaged while in use is deleted and started afresh.

It does not only grow (each run on changed cassettes adds their traces and shares, and CI
caches fill): a row carries the day it was last written or read, and a process's first write
deletes the rows unused for :data:`MAX_AGE_DAYS`, then, while the rows hold more than
:data:`MAX_BYTES`, the least recently used ones. Rows used today are never deleted (another
run may be reading them); a row deleted under a reader is a miss, rebuilt. Deleted rows'
pages are reused by later writes, so the file stays as large as its fullest day.

A cache folder can come from anywhere, so the database is opened defensively: its schema
must be exactly costsim's (no trigger, view or other table can come with it), the schema is
not trusted to call functions, and a file that is not a readable costsim database is deleted
and started afresh. Any failure only means an entry is not cached: it never stops a run.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import stat
import threading
import time
from collections.abc import Callable
from pathlib import Path

from costsim.io.seal import SEAL_LENGTH, sealed, unsealed

__all__ = ["MAX_AGE_DAYS", "MAX_BYTES", "Entries"]

_SCHEMA = (
    "CREATE TABLE entries (kind TEXT NOT NULL, key TEXT NOT NULL, data BLOB NOT NULL, "
    "used INTEGER NOT NULL, PRIMARY KEY (kind, key))"
)
_EXPECTED = {
    ("table", "entries", "entries", _SCHEMA),
    ("index", "sqlite_autoindex_entries_1", "entries", None),
}
_VERSION = 4
"""``PRAGMA user_version`` of costsim's database (bumped with its layout; 3: sealed rows,
:mod:`costsim.io.seal`; 4: the day each row was last used)."""
MAX_AGE_DAYS = 30
"""A row unused for this many days is deleted."""
MAX_BYTES = 512 << 20
"""The most the rows hold before the least recently used are deleted (those used today are
kept, however large: a run's own working set is never thrown away under it)."""


def _today() -> int:
    """Days since 1970-01-01, UTC."""
    return int(time.time() // 86_400)


_LOG_BYTES = 32 << 20
"""The most the write-ahead log keeps on disk between checkpoints (``journal_size_limit``)."""


_CONNECTIONS: dict[tuple[int, int, str], sqlite3.Connection | None] = {}
"""One connection per process, thread and database (None: it cannot be used here)."""
_TIDIED: set[tuple[int, str]] = set()
"""The processes and databases already tidied (once per process)."""
_LOCK = threading.Lock()


class _NotOurs(Exception):
    """The file is a database, but not costsim's."""


class Entries:
    """Rows of (kind, key, bytes) in ``path``; ``ours`` says whether its folder is costsim's
    cache (only there is a damaged or foreign database ever deleted)."""

    def __init__(self, path: Path, ours: Callable[[], bool] = lambda: True) -> None:
        self.path = path
        self.ours = ours

    def get(self, kind: str, key: str, limit: int) -> bytes | None:
        """An entry's bytes; None when absent, larger than ``limit``, unreadable or not the
        bytes that were written (its seal does not match)."""
        connection = self._connection(create=False)
        if connection is None:
            return None
        try:  # fetchall: the statement ends, and with it the read transaction
            rows = connection.execute(
                "SELECT data, used FROM entries WHERE kind = ? AND key = ? AND length(data) <= ?",
                (kind, key, limit + SEAL_LENGTH),
            ).fetchall()
        except sqlite3.Error as exc:
            self._damaged(exc)
            return None
        data, used = rows[0] if rows else (None, None)
        if isinstance(used, int) and used < (today := _today()):  # once a day at most
            with contextlib.suppress(sqlite3.Error):  # a read-only database: not noted
                connection.execute(
                    "UPDATE entries SET used = ? WHERE kind = ? AND key = ?", (today, kind, key)
                )
        return unsealed(data) if isinstance(data, bytes) else None

    def put(self, kind: str, key: str, data: bytes) -> None:
        connection = self._connection(create=True)
        if connection is None:
            return
        with contextlib.suppress(sqlite3.Error):  # a failed tidy only leaves rows longer
            self._tidy(connection)
        try:
            connection.execute(
                "INSERT OR REPLACE INTO entries (kind, key, data, used) VALUES (?, ?, ?, ?)",
                (kind, key, sealed(data), _today()),
            )
        except sqlite3.Error as exc:
            self._damaged(exc)

    def _tidy(self, connection: sqlite3.Connection) -> None:
        """Once per process: delete rows unused for :data:`MAX_AGE_DAYS`, then the least
        recently used of those not used today while the rows hold over :data:`MAX_BYTES`."""
        mark = (os.getpid(), str(self.path))
        if mark in _TIDIED:
            return
        _TIDIED.add(mark)
        today = _today()
        connection.execute("DELETE FROM entries WHERE used < ?", (today - MAX_AGE_DAYS,))
        # the newest first, a running sum of their sizes (length() reads no blob)
        connection.execute(
            "DELETE FROM entries WHERE rowid IN (SELECT rowid FROM (SELECT rowid, used, "
            "sum(length(data)) OVER (ORDER BY used DESC, rowid DESC) AS held FROM entries) "
            "WHERE held > ? AND used < ?)",
            (MAX_BYTES, today),
        )

    def _damaged(self, exc: sqlite3.Error) -> None:
        """A database found damaged while in use is deleted (in costsim's own cache folder
        only): the next entry written starts it afresh, instead of every run reading around
        the damage."""
        if getattr(exc, "sqlite_errorname", None) in _DAMAGED and self.ours():
            self.forget()
            _delete(self.path)

    def has(self, kind: str, key: str) -> bool:
        """Whether an entry is there (its bytes are not read)."""
        connection = self._connection(create=False)
        if connection is None:
            return False
        try:
            rows = connection.execute(
                "SELECT 1 FROM entries WHERE kind = ? AND key = ? LIMIT 1", (kind, key)
            ).fetchall()
        except sqlite3.Error:
            return False
        return bool(rows)

    def count(self) -> int:
        connection = self._connection(create=False)
        if connection is None:
            return 0
        try:
            rows = connection.execute("SELECT count(*) FROM entries").fetchall()
        except sqlite3.Error:
            return 0
        return int(rows[0][0]) if rows else 0

    def forget(self) -> None:
        """Close this process's connections to the database (before it is deleted)."""
        with _LOCK:
            for key in [k for k in _CONNECTIONS if k[0] == os.getpid() and k[2] == str(self.path)]:
                connection = _CONNECTIONS.pop(key)
                if connection is not None:
                    with contextlib.suppress(sqlite3.Error):
                        connection.close()

    def _connection(self, *, create: bool) -> sqlite3.Connection | None:
        # a connection opened before a fork belongs to the parent: the child opens its own
        key = (os.getpid(), threading.get_ident(), str(self.path))
        with _LOCK:
            if key in _CONNECTIONS:
                return _CONNECTIONS[key]
        if not _plain_file(self.path, exists=not create):
            return None
        connection = _open(self.path, self.ours)
        with _LOCK:
            _CONNECTIONS[key] = connection
        return connection


_DAMAGED = frozenset({"SQLITE_NOTADB", "SQLITE_CORRUPT"})


def _plain_file(path: Path, *, exists: bool) -> bool:
    """``path`` is a regular file (or, unless it must ``exist``, nothing yet) and neither it
    nor its folder is a symbolic link: a cache folder from anywhere must not make costsim
    open, convert or write a database elsewhere."""
    try:
        if path.parent.is_symlink():
            return False
        status = path.lstat()
    except FileNotFoundError:
        return not exists
    except OSError:
        return False
    return stat.S_ISREG(status.st_mode)


def _open(path: Path, ours: Callable[[], bool]) -> sqlite3.Connection | None:
    """A connection to costsim's database at ``path``. A file that is not one (damaged, or of
    another schema) is deleted and the database made afresh, in costsim's own cache folder
    only; None when it cannot be used (a read-only folder, a lock held too long, a foreign
    file elsewhere): the run goes on without the cache."""
    for attempt in range(2):
        try:
            return _connect(path)
        except _NotOurs:
            pass
        except sqlite3.Error as exc:
            if getattr(exc, "sqlite_errorname", None) not in _DAMAGED:
                return _read_only(path)  # a read-only folder: read what is there
        except OSError:
            return None
        if attempt or not ours():
            return None
        _delete(path)
    return None


def _connect(path: Path) -> sqlite3.Connection:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():  # read before anything is changed: a foreign file stays as it was
        with contextlib.closing(
            sqlite3.connect(f"{path.absolute().as_uri()}?mode=ro", uri=True)
        ) as peek:
            peek.execute("PRAGMA trusted_schema = OFF")
            found = set(peek.execute("SELECT type, name, tbl_name, sql FROM sqlite_master"))
            if found and found != _EXPECTED:
                raise _NotOurs
    connection = sqlite3.connect(path, timeout=60, isolation_level=None)
    try:
        connection.execute("PRAGMA trusted_schema = OFF")
        connection.execute("PRAGMA journal_mode = WAL")
        connection.execute("PRAGMA synchronous = NORMAL")
        # the log is emptied into the database as it goes; cut back to this after (it held
        # 480 MB after a day of runs, the entries themselves 23 MB)
        connection.execute(f"PRAGMA journal_size_limit = {_LOG_BYTES}")
        connection.execute("BEGIN IMMEDIATE")
        try:
            found = set(connection.execute("SELECT type, name, tbl_name, sql FROM sqlite_master"))
            if not found:
                connection.execute(_SCHEMA)
                connection.execute(f"PRAGMA user_version = {_VERSION}")
            elif found != _EXPECTED:
                raise _NotOurs
            (version,) = connection.execute("PRAGMA user_version").fetchone()
            if version != _VERSION:
                raise _NotOurs
            connection.execute("COMMIT")
        except BaseException:
            with contextlib.suppress(sqlite3.Error):
                connection.execute("ROLLBACK")
            raise
    except BaseException:
        connection.close()
        raise
    return connection


def _read_only(path: Path) -> sqlite3.Connection | None:
    """A connection that only reads costsim's database at ``path`` (a cache folder mounted
    read-only still serves what it holds); None when even that fails."""
    if not path.is_file():
        return None
    try:
        uri = f"{path.absolute().as_uri()}?mode=ro"
        connection = sqlite3.connect(uri, uri=True, timeout=60, isolation_level=None)
        connection.execute("PRAGMA trusted_schema = OFF")
        found = set(connection.execute("SELECT type, name, tbl_name, sql FROM sqlite_master"))
        (version,) = connection.execute("PRAGMA user_version").fetchone()
    except sqlite3.Error:
        return None
    if found != _EXPECTED or version != _VERSION:  # as a writable one is checked
        connection.close()
        return None
    return connection


def _delete(path: Path) -> None:
    for suffix in ("", "-wal", "-shm", "-journal"):
        with contextlib.suppress(OSError):
            Path(f"{path}{suffix}").unlink()
