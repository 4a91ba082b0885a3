"""A command's text kept outside memory (:mod:`costsim.io.spool`) and how it reaches the
user: a full temporary folder, an interrupted write, a reader that goes away."""

from __future__ import annotations

import errno
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from costsim.api.recall import Transcript, recall_output, remember_output
from costsim.cli import cli
from costsim.errors import OutputError
from costsim.io import spool
from costsim.io.files import write_atomic
from costsim.io.spool import Body

ROOT = Path(__file__).resolve().parents[1]


class _Full:
    """A temporary file on a full disk."""

    def __init__(self, **_: object) -> None:
        self.closed = False

    def write(self, data: bytes) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    def close(self) -> None:
        self.closed = True


def test_a_full_temporary_folder_is_one_sentence_not_a_traceback(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    made: list[_Full] = []
    monkeypatch.setattr(
        spool.tempfile, "SpooledTemporaryFile", lambda **k: made.append(_Full()) or made[-1]
    )
    with pytest.raises(OutputError, match=r"No space left on device.*set TMPDIR"):
        Body.of(["text"])
    assert made[0].closed
    result = CliRunner().invoke(cli, ["report", str(ROOT / "cassettes"), "--no-cache"])
    assert result.exit_code == 2
    assert result.stderr.startswith("Error: the output (0 bytes so far) cannot be kept in the ")
    assert "Traceback" not in result.output


def test_text_in_blocks_keeps_a_character_cut_between_them(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(spool, "_IN_MEMORY", 4)
    monkeypatch.setattr(spool, "_BLOCK", 3)
    with Body.of(["Δ cost ", "±<$0.001", " — ", "é"]) as body:
        assert body.length == len("Δ cost ±<$0.001 — é".encode())
        assert list(body.pieces()) and body.text == "Δ cost ±<$0.001 — é"
        assert body.text == body.text  # read again from the start


def test_a_body_cut_short_is_an_error_that_says_so() -> None:
    with Body.of(["twelve bytes"]) as whole:
        cut = Body(whole._file, 0, 20)
        with pytest.raises(OutputError, match="ends 8 bytes early"):
            list(cut.chunks())


def test_a_write_interrupted_leaves_no_file_behind(tmp_path: Path) -> None:
    target = tmp_path / "out.json"
    target.write_text("before\n")

    def interrupted() -> Iterator[bytes]:
        yield b'{"partial": '
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_atomic(target, interrupted)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.json"]
    assert target.read_text() == "before\n"


def test_a_header_too_long_to_recall_is_not_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COSTSIM_CACHE_DIR", str(tmp_path / "cache"))
    warnings = tuple(f"warning {i}: " + "x" * 80 for i in range(20_000))  # 1.8 MB of them
    with Transcript.of(warnings, ["hello\n"]) as many:
        remember_output("a" * 64, many, again="a" * 64)
    assert recall_output("a" * 64) is None
    assert not list((tmp_path / "cache").rglob("*.out"))
    with Transcript.of(warnings[:10], ["hello\n"]) as few:
        remember_output("b" * 64, few, again="b" * 64)
    recalled = recall_output("b" * 64)
    assert recalled is not None
    with recalled:
        assert (recalled.text, recalled.warnings) == ("hello\n", warnings[:10])


def test_a_reader_that_goes_away_is_exit_141_not_a_broken_gate() -> None:
    """``costsim ... | head`` with ``set -o pipefail``: click exits 1 on a closed pipe, which
    reads as a broken gate."""
    with subprocess.Popen(
        [sys.executable, "-m", "costsim", "report", str(ROOT / "cassettes"), "--no-cache"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    ) as run:
        assert run.stdout is not None and run.stderr is not None
        run.stdout.close()  # gone before costsim writes a line
        stderr = run.stderr.read()
        assert run.wait(timeout=120) == 141
    assert b"Traceback" not in stderr
