"""Hostile paths: what ``-o FILE`` writes to (a FIFO, a device, a link, a file in a folder we
cannot write into)."""

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
from costsim.cli import cli
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
