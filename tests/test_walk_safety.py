"""Hostile paths: what ``-o FILE`` writes to (a FIFO, a device, a link, a file in a folder we
cannot write into), folders walked that cannot be read, FIFOs and devices among cassettes,
the same cassette reached twice, linked folders, and a cache folder whose tag was damaged."""

from __future__ import annotations

import json
import os
import resource
import shutil
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import costsim
from costsim import api
from costsim.cli import cli
from costsim.errors import WalkError
from costsim.io.entries import Entries
from costsim.io.store import CacheStore
from tests.conftest import EXAMPLES

SOURCE = Path(costsim.__file__).resolve().parents[1]
"""The costsim under test, for the processes a test starts."""
ONE = EXAMPLES / "anthropic_support_agent.yaml"
OTHER = EXAMPLES / "openai_chat_streaming.yaml"


def _run(*args: str) -> Any:
    return CliRunner().invoke(cli, [*args, "--no-cache", "-j1"])


def _total(*args: str) -> tuple[int, str, list[str]]:
    """(calls, cost, cassettes) of ``costsim report ARGS`` as JSON."""
    result = _run("report", *args, "--format", "json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    totals = document["totals"]
    paths = [row["path"] for row in document["cassettes"]]
    return totals["llm_calls"], totals["cost_usd"], paths


def _environment() -> dict[str, str]:
    path = os.pathsep.join(filter(None, (str(SOURCE), os.environ.get("PYTHONPATH"))))
    return {**os.environ, "PYTHONPATH": path, "COLUMNS": "100"}


def _process(
    command: list[str], cwd: Path, timeout: float = 60, memory: int | None = None
) -> subprocess.CompletedProcess[str]:
    def limit() -> None:  # a runaway read stops at the limit, not at the machine's memory
        if memory is not None:
            resource.setrlimit(resource.RLIMIT_AS, (memory, memory))

    return subprocess.run(
        command,
        cwd=cwd,
        env=_environment(),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        preexec_fn=limit,
    )


@pytest.fixture
def unprivileged(tmp_path: Path) -> list[str]:
    """The start of a command run without the power to read or write past permissions: as
    is when the tests run as a user; as root, through ``setpriv`` dropping every capability
    (root then keeps only an owner's rights). Skipped where neither is possible."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: permissions cannot be tested")
    prefix = [setpriv, "--bounding-set=-all", "--inh-caps=-all", "--ambient-caps=-all", "--"]
    closed = tmp_path / "probe"
    closed.mkdir(mode=0)
    try:
        probe = subprocess.run(
            [*prefix, sys.executable, "-c", f"import os; os.listdir({str(closed)!r})"],
            capture_output=True,
            check=False,
        )
    finally:
        closed.rmdir()
    if probe.returncode == 0:
        pytest.skip("setpriv could not drop root's capabilities here")
    return prefix


def _costsim(prefix: list[str], *args: str) -> list[str]:
    return [*prefix, sys.executable, "-m", "costsim", *args, "--no-cache", "-j1"]


@pytest.fixture
def restore_modes(tmp_path: Path) -> Iterator[None]:
    """Folders a test closes are opened again, so that the temporary folder can go."""
    yield

    def reopen(folder: Path) -> None:
        folder.chmod(0o755)
        for child in folder.iterdir():
            if child.is_dir() and not child.is_symlink():
                reopen(child)

    reopen(tmp_path)


# --- -o FILE ----------------------------------------------------------------------------------


def test_output_to_a_fifo_writes_into_it_and_leaves_it_a_fifo(tmp_path: Path) -> None:
    """``-o myfifo`` replaced the FIFO with a regular file: its reader got nothing."""
    fifo = tmp_path / "myfifo"
    os.mkfifo(fifo)
    with subprocess.Popen(["cat", str(fifo)], stdout=subprocess.PIPE, text=True) as reader:
        result = _run("report", str(EXAMPLES), "-o", str(fifo), "--format", "json")
        try:
            received, _ = reader.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            reader.kill()
            received = ""
    assert result.exit_code == 0, result.output
    assert stat.S_ISFIFO(fifo.lstat().st_mode)
    assert json.loads(received)["kind"] == "costsim.report"


def test_output_to_a_device_writes_into_it_and_leaves_it_a_device(tmp_path: Path) -> None:
    """``-o /dev/null`` replaced /dev/null (as root) with a regular file. A device of the same
    numbers is made here: the real one is never risked."""
    null = tmp_path / "null"
    try:
        os.mknod(null, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("devices cannot be made here (not root)")
    for target in (null, tmp_path / "null-link"):
        if target != null:
            target.symlink_to(null)
        result = _run("report", str(EXAMPLES), "-o", str(target), "--format", "json")
        assert result.exit_code == 0, result.output
        assert stat.S_ISCHR(null.lstat().st_mode)
    assert (tmp_path / "null-link").is_symlink()
    assert sorted(path.name for path in tmp_path.iterdir()) == ["null", "null-link"]


def test_output_through_a_link_writes_its_target_atomically(tmp_path: Path) -> None:
    """``-o link.json`` replaced the link with a file, leaving what it pointed at as it was."""
    (tmp_path / "elsewhere").mkdir()
    real = tmp_path / "elsewhere" / "real.json"
    real.write_text("old\n")
    real.chmod(0o640)
    before = real.stat().st_ino
    link = tmp_path / "link.json"
    link.symlink_to(real)
    assert _run("report", str(EXAMPLES), "-o", str(link)).exit_code == 0
    assert link.is_symlink() and link.resolve() == real
    assert json.loads(real.read_text())["kind"] == "costsim.report"
    assert real.stat().st_ino != before  # replaced whole, never half-written
    assert stat.S_IMODE(real.stat().st_mode) == 0o640  # with the permissions it had
    assert sorted(path.name for path in real.parent.iterdir()) == ["real.json"]

    dangling = tmp_path / "new.json"
    dangling.symlink_to(tmp_path / "elsewhere" / "made.json")
    assert _run("report", str(EXAMPLES), "-o", str(dangling)).exit_code == 0
    assert dangling.is_symlink()
    assert json.loads((tmp_path / "elsewhere" / "made.json").read_text())["totals"]


def test_output_into_a_folder_closed_to_us_writes_a_file_open_to_us(
    tmp_path: Path, unprivileged: list[str], restore_modes: None
) -> None:
    """``-o /dev/null`` as a user, or a writable file in a read-only folder: the temporary
    file cannot be made beside it, so costsim refused ("cannot be written"); the file itself
    can be written, and is. A new file there is still refused in one sentence."""
    closed = tmp_path / "closed"
    closed.mkdir()
    (closed / "out.json").write_text("old\n")
    (closed / "out.json").chmod(0o666)
    devices = True
    try:
        os.mknod(closed / "null", stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except PermissionError:
        devices = False
    closed.chmod(0o555)
    written = _process(
        _costsim(unprivileged, "report", str(EXAMPLES), "-o", "closed/out.json"), tmp_path
    )
    assert written.returncode == 0, written.stderr
    assert json.loads((closed / "out.json").read_text())["kind"] == "costsim.report"
    if devices:
        args = ("report", str(EXAMPLES), "-o", "closed/null", "--format", "json")
        nulled = _process(_costsim(unprivileged, *args), tmp_path)
        assert nulled.returncode == 0, nulled.stderr
        assert stat.S_ISCHR((closed / "null").lstat().st_mode)
    refused = _process(
        _costsim(unprivileged, "report", str(EXAMPLES), "-o", "closed/new.json"), tmp_path
    )
    assert refused.returncode == 2
    assert refused.stderr == "Error: closed/new.json: cannot be written (Permission denied)\n"


# --- folders that cannot be read --------------------------------------------------------------


@pytest.mark.parametrize(("mode", "name"), [(0o000, "closed"), (0o311, "execute-only")])
def test_a_folder_that_cannot_be_read_is_an_error_or_with_lenient_a_warning(
    tmp_path: Path, unprivileged: list[str], restore_modes: None, mode: int, name: str
) -> None:
    """A closed folder was a PermissionError traceback (exit 1); an execute-only one had its
    cassettes silently left out of the total."""
    walked = tmp_path / "d"
    (walked / "a").mkdir(parents=True)
    shutil.copy(ONE, walked / "one.yaml")
    shutil.copy(OTHER, walked / "a" / "other.yaml")
    (walked / "a").chmod(mode)
    strict = _process(_costsim(unprivileged, "report", "d"), tmp_path)
    assert strict.returncode == 2, strict.stderr
    assert strict.stderr == (
        "Error: d/a: the folder cannot be read (Permission denied); --lenient leaves it out "
        "with a warning\n"
    )
    lenient = _process(_costsim(unprivileged, "report", "d", "--lenient"), tmp_path)
    assert lenient.returncode == 0, lenient.stderr
    assert lenient.stderr == (
        "warning: d/a: the folder cannot be read (Permission denied): any cassettes in it are "
        "left out\n"
    )
    assert lenient.stdout.startswith("3 LLM calls in 1 cassette")
    listed = _process(_costsim(unprivileged, "cassettes", "list", "d"), tmp_path)
    assert listed.returncode == 2 and "d/a: the folder cannot be read" in listed.stderr


def test_a_folder_that_cannot_be_read_is_a_walk_error_of_the_api(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The library says it as the CLI does (whoever runs the tests: the listing is refused
    here as the file system refuses it to a user)."""
    (tmp_path / "a").mkdir()
    shutil.copy(ONE, tmp_path / "one.yaml")
    listing = os.scandir

    def refused(path: Any) -> Any:
        if Path(path) == tmp_path / "a":
            raise PermissionError(13, "Permission denied", str(path))
        return listing(path)

    monkeypatch.setattr(os, "scandir", refused)
    with pytest.raises(WalkError, match="the folder cannot be read"):
        api.load(tmp_path, jobs=1, cache=False)
    loaded = api.load(tmp_path, lenient=True, jobs=1, cache=False)
    assert len(loaded) == 1
    assert loaded.warnings == (
        f"{tmp_path / 'a'}: the folder cannot be read (Permission denied): any cassettes in it "
        "are left out",
    )


# --- files that are not regular files ---------------------------------------------------------


def test_a_fifo_or_a_device_in_a_walked_folder_is_left_out_not_read(tmp_path: Path) -> None:
    """``p/fifo.yaml`` made ``costsim report p`` wait forever; ``p/zero.yaml -> /dev/zero``
    read until memory ran out (23 GB). Both are left out, named in one warning."""
    walked = tmp_path / "p"
    walked.mkdir()
    shutil.copy(ONE, walked / "one.yaml")
    os.mkfifo(walked / "fifo.yaml")
    (walked / "zero.yaml").symlink_to("/dev/zero")
    command = [sys.executable, "-m", "costsim", "report", "p", "--no-cache", "-j1"]
    result = _process(command, tmp_path, timeout=60, memory=3 << 30)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stderr == (
        "warning: left out 2 file(s) that are not regular files: p/fifo.yaml (a FIFO), "
        "p/zero.yaml (a link to a character device) (costsim reads only regular files)\n"
    )
    assert result.stdout.startswith("3 LLM calls in 1 cassette")


def test_a_fifo_named_is_said_to_be_one_not_missing(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo.yaml"
    os.mkfifo(fifo)
    strict = _run("report", str(fifo))
    assert strict.exit_code == 2
    assert strict.stderr == (
        f"Error: {fifo}: is a FIFO, not a regular file (costsim reads cassettes only from "
        "those); --lenient leaves it out with a warning\n"
    )
    lenient = _run("report", str(fifo), str(ONE), "--lenient")
    assert lenient.exit_code == 0
    assert lenient.stderr == (
        f"warning: left out 1 file(s) that are not regular files: {fifo} (a FIFO) (costsim "
        "reads only regular files)\n"
    )
    assert lenient.stdout.startswith("3 LLM calls in 1 cassette")


def test_a_fifo_among_a_scenario_s_cassettes_is_said_not_read(tmp_path: Path) -> None:
    """A scenario naming a FIFO compared nothing in silence; one whose glob matched it waited
    forever (the FIFO was opened to see whether it is a scenario). Named, it is an error;
    matched with --lenient, a warning on stderr (compare's warnings were in its JSON only)."""
    shutil.copy(ONE, tmp_path / "a.yaml")
    os.mkfifo(tmp_path / "f.yaml")
    named = tmp_path / "named.yml"
    named.write_text("name: named\ncassettes: [f.yaml]\nvariants: {a: [caching]}\n")
    strict = _run("compare", str(named))
    assert strict.exit_code == 2
    assert f"{tmp_path / 'f.yaml'}: is a FIFO, not a regular file" in strict.stderr
    globbed = tmp_path / "globbed.yml"
    globbed.write_text('name: globbed\ncassettes: ["*.yaml"]\nvariants: {a: [caching]}\n')
    command = [sys.executable, "-m", "costsim", "compare", "globbed.yml", "--lenient"]
    lenient = _process([*command, "--no-cache", "-j1"], tmp_path)
    assert lenient.returncode == 0, lenient.stderr
    assert lenient.stderr == (
        "warning: left out 1 file(s) that are not regular files: f.yaml (a FIFO) (costsim "
        "reads only regular files)\n"
    )
    assert "a saves $" in lenient.stdout


# --- the same cassette reached twice ----------------------------------------------------------


def test_a_cassette_named_twice_is_counted_once(tmp_path: Path) -> None:
    """``report base base`` doubled every total, as did ``report base base/x.yaml``."""
    base = tmp_path / "base"
    shutil.copytree(EXAMPLES, base)
    once = _total(str(base))
    assert _total(str(base), str(base)) == once
    assert _total(str(base), str(base / ONE.name)) == once
    assert _total(str(base / ONE.name), str(base))[:2] == once[:2]
    twice = _run("report", str(base), str(base / ONE.name))
    assert twice.stderr == f"warning: {base / ONE.name} named more than once: read once\n"
    folder = _run("report", str(base), f"{base}/")
    assert folder.stderr == f"warning: {base} named more than once: read once\n"


def test_a_link_to_a_cassette_beside_it_is_counted_once(tmp_path: Path) -> None:
    """``alias.yaml -> x.yaml`` in the folder counted x twice; the file itself is kept, under
    its own name (the link sorts first)."""
    base = tmp_path / "base"
    shutil.copytree(EXAMPLES, base)
    once = _total(str(base))
    (base / "alias.yaml").symlink_to(ONE.name)
    assert _total(str(base)) == once
    result = _run("report", str(base))
    assert result.stderr == (
        f"warning: {base / 'alias.yaml'} is the same file as {base / ONE.name}: read once\n"
    )


# --- linked folders ---------------------------------------------------------------------------


def test_a_linked_folder_is_walked_once_and_a_loop_ends(tmp_path: Path) -> None:
    """A linked subfolder was left out without a word. It is walked; a link back to a folder
    already walked (a loop, or a second name for one) adds nothing."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shutil.copy(OTHER, elsewhere / "other.yaml")
    walked = tmp_path / "walked"
    (walked / "own").mkdir(parents=True)
    shutil.copy(ONE, walked / "own" / "one.yaml")
    (walked / "linked").symlink_to(elsewhere)
    (walked / "loop").symlink_to(".")
    (walked / "own" / "up").symlink_to("..")
    (walked / "again").symlink_to("own")
    calls, _, paths = _total(str(walked))
    assert sorted(Path(path).name for path in paths) == ["one.yaml", "other.yaml"]
    assert calls == 4
    assert _run("report", str(walked)).stderr == ""


# --- the cache folder -------------------------------------------------------------------------


def test_a_cache_whose_tag_was_truncated_can_still_be_cleared(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After ``find .costsim_cache -type f -exec truncate -s 0 {} ;`` clear refused ("is not
    a costsim cache") and only rm -rf helped. Laid out as costsim's cache and holding nothing
    else, it is cleared, and the damaged tag is said; any other folder is still refused."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("COSTSIM_CACHE_DIR", str(cache))
    api.load(EXAMPLES, jobs=1)
    Entries(cache / "v1" / "entries.sqlite").forget()  # as a new run: no open connection
    for path in cache.rglob("*"):
        if path.is_file():
            path.write_bytes(b"")
    info = CliRunner().invoke(cli, ["cache", "info"])
    assert info.exit_code == 0
    assert info.stderr == (
        f"warning: {cache}: its CACHEDIR.TAG is damaged; costsim cache clear clears the folder "
        "all the same\n"
    )
    cleared = CliRunner().invoke(cli, ["cache", "clear"])
    assert cleared.exit_code == 0, cleared.output
    assert cleared.stderr == (
        f"warning: {cache}: its CACHEDIR.TAG is damaged, but the folder is laid out as "
        "costsim's cache: cleared\n"
    )
    assert not cache.exists()


def test_a_folder_with_a_damaged_tag_that_is_not_costsim_s_is_still_refused(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "project"
    (folder / "v1").mkdir(parents=True)
    (folder / "v1" / "entries.sqlite").write_bytes(b"")
    (folder / "CACHEDIR.TAG").write_text("")
    (folder / "README.md").write_text("mine\n")  # something costsim never writes
    assert CacheStore(folder).damaged_tag() is None
    refused = CliRunner().invoke(cli, ["cache", "clear", "--cache-dir", str(folder)])
    assert refused.exit_code == 2
    assert "is not a costsim cache (it has no costsim CACHEDIR.TAG): nothing deleted" in (
        refused.stderr
    )
    assert (folder / "v1" / "entries.sqlite").exists()
    (folder / "README.md").unlink()
    (folder / "v1" / "entries.sqlite").unlink()
    assert CacheStore(folder).damaged_tag() is None  # no database: not costsim's layout
    assert CliRunner().invoke(cli, ["cache", "clear", "--cache-dir", str(folder)]).exit_code == 2
