"""Files costsim writes: atomically, so a reader never sees half a file.

A regular file (new, or an existing one, reached through any links) is written to a
temporary file beside it that then replaces it, keeping its permissions. What is not a
regular file is written to as it is, never replaced: ``/dev/null``, ``/dev/stdout``, a FIFO
another process reads. A regular file in a folder that cannot take the temporary file (a
read-only folder) but that can itself be written is written in place.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Callable, Iterable
from pathlib import Path

from costsim.errors import ConfigError

__all__ = ["write_atomic"]

_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
_IN_PLACE = (errno.EACCES, errno.EPERM, errno.EROFS)
"""Why a temporary file could not be made beside a file that may still be written itself."""


def write_atomic(path: Path, text: str | Callable[[], Iterable[bytes]]) -> None:
    """Write ``text`` to ``path`` so readers never see a half-written file (see the module's
    docstring for what is not a regular file). ``text`` may be a function that gives its
    UTF-8 bytes in blocks (from the start each time it is called). Raises
    :class:`ConfigError` naming ``path``."""
    data = _blocks(text.encode("utf-8")) if isinstance(text, str) else text
    try:
        status: os.stat_result | None = path.stat()  # links followed
    except FileNotFoundError:
        status = None
    except OSError as exc:
        raise _unwritable(path, exc) from None
    if status is not None and stat.S_ISDIR(status.st_mode):
        raise ConfigError(f"{path}: is a folder, not a file to write")
    if status is not None and not stat.S_ISREG(status.st_mode):
        _write_in_place(path, data)  # a device, a FIFO: written to, never replaced
        return
    target = Path(os.path.realpath(path)) if path.is_symlink() else path
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = _temporary(target, data, status)
    except OSError as exc:
        if status is None or exc.errno not in _IN_PLACE:
            raise _unwritable(path, exc) from None
        _write_in_place(path, data)  # the folder is closed to us, the file is not
        return
    try:
        os.replace(tmp, target)
    except OSError as exc:
        with contextlib.suppress(OSError):  # a read-only file system refuses this too
            tmp.unlink(missing_ok=True)
        raise _unwritable(path, exc) from None


def _blocks(data: bytes) -> Callable[[], Iterable[bytes]]:
    return lambda: (data,)


def _temporary(
    target: Path, data: Callable[[], Iterable[bytes]], status: os.stat_result | None
) -> Path:
    """A new file beside ``target`` holding ``data`` (with ``target``'s permissions when it
    exists). Created exclusively: a file or link already at its name is never written."""
    tmp = target.with_name(f".{target.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    handle = _create(tmp)
    try:
        with os.fdopen(handle, "wb") as file:
            if status is not None:
                os.fchmod(file.fileno(), stat.S_IMODE(status.st_mode))
            file.writelines(data())
    except BaseException:  # a full disk, Ctrl-C, an error making the text: no file left
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        raise
    return tmp


def _create(path: Path) -> int:
    return os.open(path, _CREATE, 0o666)


def _write_in_place(path: Path, data: Callable[[], Iterable[bytes]]) -> None:
    try:
        with path.open("wb") as file:
            file.writelines(data())
    except OSError as exc:
        raise _unwritable(path, exc) from None


def _unwritable(path: Path, exc: OSError) -> ConfigError:
    return ConfigError(f"{path}: cannot be written ({exc.strerror or exc})")
