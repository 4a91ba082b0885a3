"""A cassette cut short between two interactions.

vcrpy writes a cassette's ``version`` key after its last interaction. A file cut off at the
end of an interaction still parses, its later calls missing from every total. A file without
the key is only a hint alone (some recorders never write it), but among files of the same
folder that have it, the recorder that wrote it there wrote it here too: ``cassettes check``
makes it a ``cut-short`` warning, and every command that totals the file warns of it. The
corpus has 6 such files among 902, each beside hundreds that end with the key (three of them
end on a tool call left unanswered).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path

from costsim.model import CassetteTrace

__all__ = ["cut_short", "cut_short_message", "cut_short_warnings", "traces_cut_short"]


def cut_short(paths: Sequence[Path], unversioned: Iterable[Path]) -> dict[Path, int]:
    """Each YAML file of ``unversioned`` (among ``paths``, the files read) whose folder holds
    other YAML files of ``paths`` that end with the ``version`` key, with how many do (a JSON
    cassette cut anywhere does not parse, and vcrpy writes its key elsewhere)."""
    missing, files = set(unversioned), dict.fromkeys(p for p in paths if _yaml(p))
    folder = {path: path.absolute().parent for path in files}  # c/x.yaml beside /w/c/y.yaml
    versioned: Counter[Path] = Counter(folder[path] for path in files if path not in missing)
    return {
        path: versioned[folder[path]]
        for path in files
        if path in missing and versioned[folder[path]]
    }


def _yaml(path: Path) -> bool:
    return path.suffix.lower() != ".json"  # read as YAML, as the loader reads it


def cut_short_message(others: int) -> str:
    return (
        "no 'version' key, which vcrpy writes after the last interaction, where "
        + (
            "the other cassette of its folder ends"
            if others == 1
            else f"the {others:,} other cassettes of its folder end"
        )
        + " with one: "
        "probably cut short between two interactions, its later calls missing from every "
        "total (re-record it; if it is whole, add 'version: 1' at its end)"
    )


_NAMED = 5
"""The most files a grouped warning names (``cassettes check`` lists every one)."""


def cut_short_warnings(paths: Sequence[Path], unversioned: Iterable[Path]) -> list[str]:
    """One sentence per folder of files of :func:`cut_short`, naming them (the corpus three
    times over printed 18 of these sentences, one per file, 400 characters each)."""
    found = cut_short(paths, unversioned)
    folders: dict[Path, list[Path]] = {}
    for path in found:
        folders.setdefault(path.absolute().parent, []).append(path)
    warnings = []
    for files in folders.values():
        others = found[files[0]]
        if len(files) == 1:
            warnings.append(f"{files[0]}: {cut_short_message(others)}")
            continue
        names = ", ".join(path.name for path in files[:_NAMED])
        if len(files) > _NAMED:
            names += f" and {len(files) - _NAMED:,} more ('costsim cassettes check' lists each)"
        warnings.append(
            f"{files[0].parent}: {len(files):,} cassettes have no 'version' key ({names}), "
            "which vcrpy writes after the last interaction, where "
            + ("the other cassette" if others == 1 else f"the {others:,} other cassettes")
            + " of their folder "
            + ("ends" if others == 1 else "end")
            + " with one: probably cut short between two interactions, their later calls "
            "missing from every total (re-record them; if one is whole, add 'version: 1' at "
            "its end)"
        )
    return warnings


def traces_cut_short(traces: Sequence[CassetteTrace]) -> list[str]:
    """:func:`cut_short_warnings` of loaded traces (their files, as read)."""
    paths = [trace.path for trace in traces]
    return cut_short_warnings(paths, [trace.path for trace in traces if not trace.versioned])
