"""Where baselines live: ``.costsim/NAME.json`` in the project, found the way the pytest plugin
saves them, so ``costsim baseline compare main pr`` reads what ``pytest --costsim-save pr``
wrote. A baseline is named by its file's stem, or given as a path."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

from costsim.analysis.baseline import (
    Comparison,
    CostChange,
    TestCost,
    compare_baselines,
    cost_change,
    load_baseline,
)
from costsim.errors import InputError

__all__ = [
    "BASELINE_FOLDER",
    "BaselineDiff",
    "SavedBaseline",
    "baseline_folder",
    "diff_baselines",
    "list_baselines",
    "resolve_baseline",
]

BASELINE_FOLDER = ".costsim"
_PROJECT_FILES = ("pyproject.toml", "pytest.ini", "tox.ini", "setup.cfg")


def baseline_folder(start: Path | None = None) -> Path:
    """The ``.costsim`` folder of the project holding ``start`` (default: the working folder):
    the nearest one above it, else beside the nearest project file (pytest's root), else in
    ``start`` itself."""
    here = (start or Path.cwd()).resolve()
    chain = [here, *here.parents]
    for folder in chain:
        if (folder / BASELINE_FOLDER).is_dir():
            return folder / BASELINE_FOLDER
    for folder in chain:
        if any((folder / name).is_file() for name in _PROJECT_FILES):
            return folder / BASELINE_FOLDER
    return here / BASELINE_FOLDER


@dataclass(frozen=True, slots=True)
class SavedBaseline:
    """A baseline file and its figures; or, listed with others, one that cannot be read
    (``error`` says why, and it has no figures)."""

    name: str
    path: Path
    tests: dict[str, TestCost]
    saved: datetime | None = None
    error: str | None = None

    @property
    def total(self) -> TestCost:
        whole = TestCost()
        for cost in self.tests.values():
            whole.merge(cost)
        return whole


def resolve_baseline(name: str | Path, folder: Path | None = None) -> Path:
    """A baseline given by name (``main`` -> ``.costsim/main.json``) or by path."""
    text = str(name)
    path = Path(text)
    if path.suffix == ".json" or "/" in text or path.is_file():
        return path
    home = folder or baseline_folder()
    found = home / f"{text}.json"
    if found.is_file():
        return found
    saved = [p.stem for p in _files(home)]
    listed = f"saved: {', '.join(saved)}" if saved else f"none saved in {home}"
    raise InputError(
        f"no baseline named {text!r} ({listed}); save one with pytest --costsim-save {text}"
    )


def _saved(path: Path) -> datetime | None:
    try:
        return datetime.fromtimestamp(path.stat().st_mtime, tz=UTC)
    except OSError:
        return None


def _read(path: Path) -> SavedBaseline:
    return SavedBaseline(path.stem, path, load_baseline(path), _saved(path))


def _listed(path: Path) -> SavedBaseline:
    """One baseline of a listing: a file that cannot be read is listed with why, as
    ``cassettes list`` lists an unreadable cassette, so one bad file hides no other."""
    try:
        return _read(path)
    except InputError as exc:
        return SavedBaseline(path.stem, path, {}, _saved(path), error=str(exc))


def list_baselines(folder: Path | None = None) -> tuple[Path, list[SavedBaseline]]:
    """The baseline folder and every baseline saved in it, by name (those that cannot be
    read with their ``error``)."""
    home = folder or baseline_folder()
    return home, [_listed(path) for path in _files(home)]


def _files(home: Path) -> list[Path]:
    """The JSON files of the folder, less those costsim wrote as something else (the README
    suggests ``.costsim/calibration.json`` for a saved calibration); any other file is read
    as a baseline, so a damaged one is an error that names it."""
    files = sorted(home.glob("*.json")) if home.is_dir() else []
    return [path for path in files if not _other_kind(path)]


_KIND = re.compile(rb'"kind"\s*:\s*"(costsim\.[\w.-]+)"')


def _other_kind(path: Path) -> bool:
    """The file opens as a document costsim writes (its ``kind`` among the first bytes) of
    another kind; read no further than that, since baselines can be large."""
    try:
        with path.open("rb") as file:
            head = file.read(1024)
    except OSError:
        return False
    found = _KIND.search(head)
    return found is not None and found.group(1) != b"costsim.baseline"


@dataclass(frozen=True, slots=True)
class BaselineDiff:
    """Two baselines and how the second compares with the first."""

    old: SavedBaseline
    new: SavedBaseline
    comparison: Comparison
    tolerances: dict[str, float]

    @property
    def cost_change(self) -> tuple[Decimal | None, Decimal | None]:
        """Each baseline's whole cost (None when a call of it is unpriced)."""
        return self.old.total.cost_usd, self.new.total.cost_usd

    @property
    def priced_change(self) -> CostChange:
        """What the tests both hold, priced in both, cost in each (and how many of those
        both hold were left out, unpriced)."""
        return cost_change(self.old.tests, self.new.tests)


def diff_baselines(
    old: str | Path, new: str | Path, tolerances: dict[str, float], folder: Path | None = None
) -> BaselineDiff:
    """Compare baseline ``new`` with ``old`` (names or paths)."""
    first = _read(resolve_baseline(old, folder))
    second = _read(resolve_baseline(new, folder))
    result = compare_baselines(first.tests, second.tests, tolerances)
    return BaselineDiff(first, second, result, dict(tolerances))
