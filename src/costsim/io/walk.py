"""Finding cassettes under folders the way ruff and pytest find files: hidden folders,
virtual environments, ``site-packages`` and ``node_modules`` are skipped; ``include`` and
``exclude`` globs narrow the search; a folder that holds no cassette is reported, not
silently counted as nothing.

Globs are matched against a file's path relative to the folder given, or any end of it
(``cassettes/*.yaml`` matches ``tests/cassettes/a.yaml``; ``*`` also crosses ``/``) and, when
they hold no ``/``, against its name and the names of the folders it is in (``--exclude
legacy`` skips every ``legacy`` folder).

Only regular files are read: a FIFO or a device (a link to ``/dev/zero``) found in a folder is
left out with a warning, and named is an error. A linked folder is walked, once: a folder
already walked (the link loops back, or names a folder walked directly) is not walked again.
A folder that cannot be read is an error naming it. The same file reached twice (named twice,
named and found in a folder, or linked beside itself) is read once, said in one warning.
``lenient``: a folder that cannot be read, or a file named that is not a regular file, is a
warning and left out instead of an error.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path, PurePosixPath

from costsim.errors import CassetteNotFoundError, WalkError
from costsim.io.sniff import CASSETTE_SUFFIXES, is_scenario_file, sniff_kind

__all__ = [
    "CASSETTE_SUFFIXES",
    "SKIPPED_FOLDERS",
    "Found",
    "Progress",
    "Selection",
    "find_cassettes",
    "is_scenario_file",
    "sniff_kind",
]

SKIPPED_FOLDERS = frozenset({"node_modules", "site-packages", "__pycache__", "__pypackages__"})
"""Besides hidden folders (``.git``, ``.venv``, ``.costsim``) and any folder holding a
``pyvenv.cfg`` (a virtual environment, whatever its name)."""

Progress = Callable[[str, int, int], None]
"""Called as work advances: (what, done, total)."""


@dataclass(frozen=True, slots=True)
class Selection:
    """``include`` / ``exclude`` globs (empty: every cassette the walk finds)."""

    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()

    @classmethod
    def of(cls, include: Iterable[str] = (), exclude: Iterable[str] = ()) -> Selection:
        return cls(tuple(include), tuple(exclude))

    def _matches(self, patterns: tuple[str, ...], relative: PurePosixPath) -> bool:
        parts = relative.parts
        tails = ["/".join(parts[i:]) for i in range(len(parts))]
        for pattern in patterns:
            names = tails if "/" in pattern else parts
            if any(fnmatchcase(name, pattern) for name in names):
                return True
        return False

    def excludes_folder(self, relative: PurePosixPath) -> bool:
        return self._matches(self.exclude, relative)

    def wants(self, relative: PurePosixPath) -> bool:
        if self._matches(self.exclude, relative):
            return False
        return not self.include or self._matches(self.include, relative)


def _skipped(folder: Path) -> bool:
    name = folder.name
    # os.path.isfile, not Path.is_file: a folder that cannot be searched is no error here
    # (its walk says it cannot be read)
    return name.startswith(".") or name in SKIPPED_FOLDERS or os.path.isfile(folder / "pyvenv.cfg")


_KINDS = (
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDIR, "a folder"),
)


def _what(path: Path, mode: int) -> str:
    """What a file that is not a regular file is: ``a FIFO``, ``a link to a character
    device``."""
    kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
    return f"a link to {kind}" if path.is_symlink() else kind


Identity = tuple[int, int] | str
"""A file or folder as the file system knows it: (device, inode), or its real path when it
cannot be examined."""


def _identity(path: Path, status: os.stat_result | None) -> Identity:
    return (status.st_dev, status.st_ino) if status is not None else os.path.realpath(path)


def _status(path: Path) -> os.stat_result | None:
    """``path``'s status, links followed; None when it cannot be examined (its load says
    why: a file that cannot be read, a link that loops or leads nowhere)."""
    try:
        return path.stat()
    except (OSError, ValueError):
        return None


@dataclass(slots=True)
class _Tree:
    """What a walk of one folder found: candidate files, most direct first (files before
    links to files, both before files in linked folders), and folders it could not read."""

    files: list[tuple[tuple[bool, bool], Path]] = field(default_factory=list)
    unreadable: list[tuple[Path, str]] = field(default_factory=list)


def _tree(root: Path, selection: Selection) -> _Tree:
    """Walk ``root``: its own folders first, then the linked ones (each real folder once, so
    a link that loops back ends there)."""
    tree = _Tree()
    seen: set[Identity] = set()
    direct: list[Path] = [root]
    linked: list[Path] = []
    while direct or linked:
        via_link = not direct
        here = direct.pop() if direct else linked.pop()
        identity = _identity(here, _status(here))
        if identity in seen:
            continue
        seen.add(identity)
        try:
            with os.scandir(here) as listing:
                entries = sorted(listing, key=lambda entry: entry.name)
        except OSError as exc:
            tree.unreadable.append((here, exc.strerror or str(exc)))
            continue
        for entry in entries:
            path = here / entry.name
            relative = PurePosixPath(path.relative_to(root))
            if _is_folder(entry):
                if not _skipped(path) and not selection.excludes_folder(relative):
                    (linked if via_link or entry.is_symlink() else direct).append(path)
            elif path.suffix.lower() in CASSETTE_SUFFIXES and selection.wants(relative):
                tree.files.append(((via_link, entry.is_symlink()), path))
    tree.files.sort()
    return tree


def _is_folder(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()  # links followed
    except OSError:
        return False


@dataclass(frozen=True, slots=True)
class Found:
    """The cassette files under some paths, the folders among them that hold none, and the
    scenario files found beside the cassettes (left out: they are not recordings)."""

    files: tuple[Path, ...]
    empty: tuple[Path, ...]
    scenarios: tuple[Path, ...] = ()
    others: tuple[Path, ...] = ()
    """YAML and JSON files a walk found that say they are something else (see
    :func:`sniff_kind`): left out, said so (a file named is read whatever it holds)."""
    irregular: tuple[tuple[Path, str], ...] = ()
    """Files that are not regular files, and what each is (``a FIFO``): left out, never read."""
    unreadable: tuple[tuple[Path, str], ...] = ()
    """Folders that could not be read, and why (``lenient`` only: else an error)."""
    repeated: tuple[tuple[Path, Path], ...] = ()
    """Paths that reach a file or folder reached before, and the path it is read as."""

    def warnings(self) -> list[str]:
        suffixes = ", ".join(f"*{s}" for s in CASSETTE_SUFFIXES)
        found = [f"{path}: no cassette files ({suffixes}) found here" for path in self.empty]
        found += [
            f"{folder}: the folder cannot be read ({why}): any cassettes in it are left out"
            for folder, why in self.unreadable
        ]
        irregular = tuple(Path(f"{path} ({what})") for path, what in self.irregular)
        left_out = (
            (
                self.scenarios,
                "costsim scenario file(s), not cassettes",
                "costsim compare reads them",
            ),
            (
                self.others,
                "file(s) without an 'interactions' key, not vcrpy cassettes",
                "name a file to read it as one",
            ),
            (irregular, "file(s) that are not regular files", "costsim reads only regular files"),
        )
        for paths, what, why in left_out:
            if paths:
                found.append(f"left out {len(paths)} {what}: {_names(paths)} ({why})")
        if self.repeated:
            found.append(_repeated(self.repeated))
        return found


def _names(paths: tuple[Path, ...] | list[str]) -> str:
    names = ", ".join(str(path) for path in paths[:3])
    return names + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")


def _repeated(pairs: tuple[tuple[Path, Path], ...]) -> str:
    """One line for every path that reached a file or folder already reached."""
    if len(pairs) == 1 and pairs[0][0] != pairs[0][1]:
        return f"{pairs[0][0]} is the same file as {pairs[0][1]}: read once"
    if len(pairs) == 1:
        return f"{pairs[0][0]} named more than once: read once"
    names = [str(path) if path == first else f"{path} (= {first})" for path, first in pairs]
    return f"{len(pairs)} paths named more than once, each read once: {_names(names)}"


@dataclass(slots=True)
class _Collector:
    """Gathers the files under the paths named, each once."""

    selection: Selection
    lenient: bool
    files: list[Path] = field(default_factory=list)
    known: dict[Identity, Path] = field(default_factory=dict)
    empty: list[Path] = field(default_factory=list)
    left_out: dict[str, list[Path]] = field(default_factory=lambda: {"scenario": [], "other": []})
    irregular: list[tuple[Path, str]] = field(default_factory=list)
    unreadable: list[tuple[Path, str]] = field(default_factory=list)
    repeated: list[tuple[Path, Path]] = field(default_factory=list)

    def add(self, path: Path) -> None:
        try:
            status = path.stat()
        except (FileNotFoundError, NotADirectoryError):
            raise CassetteNotFoundError(path) from None
        except (OSError, ValueError):
            status = None  # taken as a file: its load says why it cannot be read
        if status is not None and stat.S_ISDIR(status.st_mode):
            if self._once(path, status):
                self._folder(path)
        elif status is not None and not stat.S_ISREG(status.st_mode):
            what = _what(path, status.st_mode)
            reason = f"is {what}, not a regular file (costsim reads cassettes only from those)"
            self._problem(WalkError(path, reason))
            self.irregular.append((path, what))
        elif self._once(path, status):
            self.files.append(path)  # named: taken whatever it holds (its load says)

    def _problem(self, error: WalkError) -> None:
        if not self.lenient:
            raise error

    def _once(self, path: Path, status: os.stat_result | None) -> bool:
        """Whether ``path`` is the first to reach its file or folder (else it is noted)."""
        identity = _identity(path, status)
        first = self.known.setdefault(identity, path)
        if first is not path:
            self.repeated.append((path, first))
        return first is path

    def _folder(self, root: Path) -> None:
        tree = _tree(root, self.selection)
        for folder, why in tree.unreadable:
            self._problem(WalkError(folder, f"the folder cannot be read ({why})"))
        self.unreadable += tree.unreadable
        found: list[Path] = []
        repeated = len(self.repeated)
        for _, path in tree.files:
            status = _status(path)
            if status is not None and not stat.S_ISREG(status.st_mode):
                self.irregular.append((path, _what(path, status.st_mode)))
            elif self._once(path, status):
                self.left_out.get(sniff_kind(path) or "", found).append(path)
        self.files.extend(sorted(found))
        read = not any(folder == root for folder, _ in tree.unreadable)
        if not found and read and len(self.repeated) == repeated:
            self.empty.append(root)

    def found(self) -> Found:
        return Found(
            tuple(self.files),
            tuple(self.empty),
            tuple(self.left_out["scenario"]),
            tuple(self.left_out["other"]),
            irregular=tuple(self.irregular),
            unreadable=tuple(self.unreadable),
            repeated=tuple(self.repeated),
        )


def find_cassettes(
    paths: Iterable[Path], selection: Selection | None = None, *, lenient: bool = False
) -> Found:
    """Files given are taken as they are; folders are walked (see the module's docstring)."""
    collector = _Collector(selection or Selection(), lenient)
    for path in paths:
        collector.add(path)
    return collector.found()
