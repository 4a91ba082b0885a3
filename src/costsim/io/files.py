"""Files costsim writes: atomically, so a reader never sees half a file."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from costsim.errors import ConfigError

__all__ = ["write_atomic"]


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` so readers never see a half-written file."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):  # a read-only file system refuses this too
            tmp.unlink(missing_ok=True)
        raise ConfigError(f"{path}: cannot be written ({exc.strerror or exc})") from None
