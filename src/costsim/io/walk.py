"""Finding cassettes under folders the way ruff and pytest find files: hidden folders,
virtual environments, ``site-packages`` and ``node_modules`` are skipped; ``include`` and
``exclude`` globs narrow the search; a folder that holds no cassette is reported, not
silently counted as nothing.

Globs are matched against a file's path relative to the folder given, or any end of it
(``cassettes/*.yaml`` matches ``tests/cassettes/a.yaml``; ``*`` also crosses ``/``) and, when
they hold no ``/``, against its name and the names of the folders it is in (``--exclude
legacy`` skips every ``legacy`` folder).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path, PurePosixPath

from costsim.errors import CassetteNotFoundError
from costsim.io.encoding import decode_head

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

CASSETTE_SUFFIXES = (".yaml", ".yml", ".json")
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
    return name.startswith(".") or name in SKIPPED_FOLDERS or (folder / "pyvenv.cfg").is_file()


_TOP_KEY = re.compile(r"""^["']?([A-Za-z_]+)["']?[ \t]*:""", re.MULTILINE)
_SNIFF_BYTES = 16_384


_JSON_INTERACTIONS = re.compile(r'"interactions"\s*:')


def sniff_kind(path: Path) -> str | None:
    """What a file's first bytes (in its encoding) say it is: ``cassette`` (a vcrpy
    cassette: a top-level ``interactions`` key, which vcrpy writes first), ``scenario`` (a
    costsim scenario: top-level ``variants`` and ``cassettes``) or ``other`` (a YAML mapping
    with other top-level keys, a JSON object without ``"interactions"``: a configuration
    file, costsim's own JSON output); None when they do not say (a bare list, vcrpy's format
    before 1.0; YAML in flow style). A cassette's content is indented under its keys, so no
    line of it can read as a top-level key."""
    suffix = path.suffix.lower()
    if suffix not in CASSETTE_SUFFIXES:
        return None
    try:
        with path.open("rb") as file:
            head = decode_head(file.read(_SNIFF_BYTES))
    except OSError:
        return None  # the load says why
    if suffix == ".json":
        if _JSON_INTERACTIONS.search(head):
            return "cassette"
        other = head.lstrip("\ufeff \t\r\n").startswith("{")
        return "other" if other and not _anywhere(path, _JSON_INTERACTIONS) else None
    keys = set(_TOP_KEY.findall(head))
    if {"variants", "cassettes"} <= keys:
        return "scenario"
    if "interactions" in keys:
        return "cassette"
    return "other" if keys and not _anywhere(path, _YAML_INTERACTIONS) else None


_YAML_INTERACTIONS = re.compile(r"""^["']?interactions["']?[ \t]*:""", re.MULTILINE)


def _anywhere(path: Path, key: re.Pattern[str]) -> bool:
    """Whether ``key`` is anywhere in the file (read whole only when its first bytes, where
    vcrpy writes it, do not show it: a file that is not a cassette, or one from a recorder
    that writes it late)."""
    try:
        return key.search(decode_head(path.read_bytes())) is not None
    except OSError:
        return True  # the load says why


def is_scenario_file(path: Path) -> bool:
    return sniff_kind(path) == "scenario"


def _walk(root: Path, selection: Selection) -> list[Path]:
    found: list[Path] = []
    for current, folders, files in os.walk(root):
        here = Path(current)
        folders[:] = sorted(
            name
            for name in folders
            if not _skipped(here / name)
            and not selection.excludes_folder(PurePosixPath((here / name).relative_to(root)))
        )
        for name in files:
            path = here / name
            if path.suffix.lower() in CASSETTE_SUFFIXES and selection.wants(
                PurePosixPath(path.relative_to(root))
            ):
                found.append(path)
    return sorted(found)


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

    def warnings(self) -> list[str]:
        suffixes = ", ".join(f"*{s}" for s in CASSETTE_SUFFIXES)
        found = [f"{path}: no cassette files ({suffixes}) found here" for path in self.empty]
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
        )
        for paths, what, why in left_out:
            if paths:
                names = ", ".join(str(path) for path in paths[:3])
                more = f" and {len(paths) - 3} more" if len(paths) > 3 else ""
                found.append(f"left out {len(paths)} {what}: {names}{more} ({why})")
        return found


def find_cassettes(paths: Iterable[Path], selection: Selection | None = None) -> Found:
    """Files given are taken as they are; folders are walked (see the module's docstring)."""
    chosen = selection or Selection()
    files: list[Path] = []
    empty: list[Path] = []
    left_out: dict[str, list[Path]] = {"scenario": [], "other": []}
    for path in paths:
        if path.is_dir():
            found: list[Path] = []
            for file in _walk(path, chosen):
                left_out.get(sniff_kind(file) or "", found).append(file)
            files.extend(found)
            if not found:
                empty.append(path)
        elif path.is_file():
            files.append(path)
        else:
            raise CassetteNotFoundError(path)
    return Found(tuple(files), tuple(empty), tuple(left_out["scenario"]), tuple(left_out["other"]))
