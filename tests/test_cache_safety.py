"""A cache folder can come from anywhere: what costsim finds in it never makes it change a file
elsewhere, delete what is not its own, or trust a file it cannot tell apart from a new one."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
from pathlib import Path

import pytest

from costsim import api
from costsim.io import store
from costsim.io.entries import Entries

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "cassettes"


def _foreign(path: Path) -> None:
    """Somebody's own SQLite database, in the default (rollback journal) mode."""
    with contextlib.closing(sqlite3.connect(path)) as connection:
        connection.execute("CREATE TABLE notes (text TEXT)")
        connection.execute("INSERT INTO notes VALUES ('mine')")
        connection.commit()


def _journal_mode(path: Path) -> str:
    with contextlib.closing(sqlite3.connect(path)) as connection:
        return str(connection.execute("PRAGMA journal_mode").fetchone()[0])


@pytest.mark.parametrize("linked", ["database", "folder"])
def test_a_linked_database_is_neither_followed_nor_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, linked: str
) -> None:
    cache = tmp_path / "cache"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    _foreign(elsewhere / "entries.sqlite")
    (cache / "v1").parent.mkdir(parents=True)
    if linked == "database":
        (cache / "v1").mkdir()
        (cache / "v1" / "entries.sqlite").symlink_to(elsewhere / "entries.sqlite")
    else:
        (cache / "v1").symlink_to(elsewhere, target_is_directory=True)
    monkeypatch.setenv("COSTSIM_CACHE_DIR", str(cache))
    assert list(api.load(EXAMPLES)) == list(api.load(EXAMPLES, cache=False))
    assert _journal_mode(elsewhere / "entries.sqlite") == "delete"
    assert sorted(p.name for p in elsewhere.iterdir()) == ["entries.sqlite"]
    with contextlib.closing(sqlite3.connect(elsewhere / "entries.sqlite")) as connection:
        assert connection.execute("SELECT text FROM notes").fetchall() == [("mine",)]


def test_a_foreign_database_outside_a_costsim_cache_is_left_alone(tmp_path: Path) -> None:
    folder = tmp_path / "not-a-cache" / "v1"
    folder.mkdir(parents=True)
    _foreign(folder / "entries.sqlite")
    rows = Entries(folder / "entries.sqlite", ours=lambda: False)
    rows.put("trace", "k", b"{}")
    assert rows.get("trace", "k", 1000) is None
    assert _journal_mode(folder / "entries.sqlite") == "delete"  # not even switched to WAL
    with contextlib.closing(sqlite3.connect(folder / "entries.sqlite")) as connection:
        assert connection.execute("SELECT text FROM notes").fetchall() == [("mine",)]


def test_a_file_rewritten_within_its_clock_tick_is_hashed_again(tmp_path: Path) -> None:
    """Where a file system's clock is coarse, a same-size rewrite keeps the old stamp: a file
    written in the last seconds is never remembered by its stamp."""
    path = tmp_path / "c.yaml"
    path.write_bytes(b"interactions: []\n#a\n")
    first = store.file_digest(path)
    stamp = path.stat().st_mtime_ns
    path.write_bytes(b"interactions: []\n#b\n")
    os.utime(path, ns=(stamp, stamp))  # the same size and modification time
    assert store.file_digest(path) != first
    old = time.time() - 60  # an old file is remembered, and read again once it changes
    os.utime(path, (old, old))
    kept = store.file_digest(path)
    path.write_bytes(b"interactions: []\n#c\n")
    assert store.file_digest(path) != kept


def test_a_read_only_cache_serves_what_it_holds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cache folder mounted read-only: nothing can be written, what is there is read."""
    from costsim.io import entries

    cache = tmp_path / "cache"
    monkeypatch.setenv("COSTSIM_CACHE_DIR", str(cache))
    expected = list(api.load(EXAMPLES))
    Entries(cache / "v1" / "entries.sqlite").forget()  # as a new run: no open connection

    def read_only(path: Path) -> sqlite3.Connection:
        raise sqlite3.OperationalError("attempt to write a readonly database")

    monkeypatch.setattr(entries, "_connect", read_only)
    parsed: list[Path] = []
    monkeypatch.setattr("costsim.api.work.trace_from_bytes", lambda path, data: parsed.append(path))
    assert list(api.load(EXAMPLES, jobs=1)) == expected
    assert parsed == []  # every trace came from the read-only cache
    assert store.CacheStore(cache).size()[0] == 3


def test_a_cache_that_cannot_be_cleared_is_one_sentence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from click.testing import CliRunner

    from costsim.cli import cli

    cache = tmp_path / "cache"
    monkeypatch.setenv("COSTSIM_CACHE_DIR", str(cache))
    api.load(EXAMPLES)

    def refuse(path: object) -> None:
        raise OSError(30, "Read-only file system")

    monkeypatch.setattr(store.shutil, "rmtree", refuse)
    result = CliRunner().invoke(cli, ["cache", "clear"])
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "cannot be cleared (Read-only file system)" in lines[0]


def test_a_cache_that_cannot_be_written_is_one_warning_after_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Like pytest's "could not create cache path": the run goes through, its output is the
    same, and one line says that nothing was kept (so the next run is slow), naming the
    folder, the reason and what to do; -q and --no-cache silence it."""
    from click.testing import CliRunner

    from costsim.cli import cli

    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder\n")
    monkeypatch.setenv("COSTSIM_CACHE_DIR", str(blocker / "cache"))
    runner = CliRunner()
    plain = runner.invoke(cli, ["report", str(EXAMPLES), "--no-cache", "-j1"])
    assert plain.exit_code == 0 and plain.stderr == ""
    result = runner.invoke(cli, ["report", str(EXAMPLES), "-j1"])
    assert result.exit_code == 0 and result.stdout == plain.stdout
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(f"warning: the cache folder {blocker / 'cache'} cannot be written")
    assert "(Not a directory)" in lines[0] and "COSTSIM_CACHE_DIR" in lines[0]
    assert runner.invoke(cli, ["report", str(EXAMPLES), "-j1", "-q"]).stderr == ""

    monkeypatch.setenv("COSTSIM_CACHE_DIR", str(tmp_path / "cache"))
    assert runner.invoke(cli, ["report", str(EXAMPLES), "-j1"]).stderr == ""

    def read_only(**kwargs: object) -> tuple[int, str]:
        raise OSError(30, "Read-only file system")

    monkeypatch.setattr(store.tempfile, "mkstemp", read_only)
    gated = runner.invoke(cli, ["compare", str(ROOT / "scenarios"), "--fail-over", "0", "-j1"])
    assert gated.exit_code == 1  # a broken gate: the run went through, and still says it
    assert "cannot be written (Read-only file system)" in gated.stderr


def test_a_file_on_a_read_only_file_system_is_one_sentence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """-o, a saved baseline or report on a read-only mount: the write and the clean-up of its
    temporary file both fail; the error is still the one sentence, not a traceback."""
    from costsim.errors import ConfigError
    from costsim.io import files

    def refuse(*args: object, **kwargs: object) -> None:
        raise OSError(30, "Read-only file system")

    said = f"{tmp_path / 'out.json'}: cannot be written (Read-only file system)"
    with monkeypatch.context() as patched:
        patched.setattr(files, "_create", refuse)
        with pytest.raises(ConfigError) as caught:
            files.write_atomic(tmp_path / "out.json", "{}")
    assert str(caught.value) == said
    with monkeypatch.context() as patched:
        patched.setattr(files.os, "replace", refuse)
        patched.setattr(Path, "unlink", refuse)
        with pytest.raises(ConfigError) as caught:
            files.write_atomic(tmp_path / "out.json", "{}")
    assert str(caught.value) == said


def test_a_cache_folder_that_exists_keeps_its_own_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """COSTSIM_CACHE_DIR naming a project folder: its .gitignore was overwritten with '*';
    kept, it was deleted by ``cache clear``, which deletes only the one costsim wrote."""
    (tmp_path / ".gitignore").write_text("mine\n")
    monkeypatch.setenv("COSTSIM_CACHE_DIR", str(tmp_path))
    api.load(EXAMPLES, jobs=1)
    assert (tmp_path / ".gitignore").read_text() == "mine\n"
    assert store.CacheStore(tmp_path).is_cache()  # the tag is still written
    assert store.CacheStore(tmp_path).clear() > 0
    assert (tmp_path / ".gitignore").read_text() == "mine\n"
    assert not (tmp_path / "CACHEDIR.TAG").exists()
    fresh = tmp_path / "fresh"
    monkeypatch.setenv("COSTSIM_CACHE_DIR", str(fresh))
    api.load(EXAMPLES, jobs=1)
    assert (fresh / ".gitignore").read_text() == "# created by costsim\n*\n"
    assert store.CacheStore(fresh).clear() > 0
    assert not fresh.exists()  # all of it costsim's: the folder goes too
    (tmp_path / ".gitignore").write_text("")  # a project's own, empty: kept too
    monkeypatch.setenv("COSTSIM_CACHE_DIR", str(tmp_path))
    api.load(EXAMPLES, jobs=1)
    assert store.CacheStore(tmp_path).clear() > 0
    assert (tmp_path / ".gitignore").read_text() == ""


def test_a_row_damaged_or_edited_on_disk_is_rebuilt_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A byte of a kept trace changed on disk (one digit of a token count: still JSON, still
    a trace) must not become a different bill: every row carries its digest, and a row that
    is not the bytes written is rebuilt from the cassette."""
    from click.testing import CliRunner

    from costsim.cli import cli

    monkeypatch.setenv("COSTSIM_CACHE_DIR", str(tmp_path / "cache"))
    runner = CliRunner()
    clean = runner.invoke(cli, ["report", str(EXAMPLES), "--format", "json", "-j1"])
    assert clean.exit_code == 0
    database = tmp_path / "cache" / "v1" / "entries.sqlite"
    with contextlib.closing(sqlite3.connect(database)) as connection:
        rows = connection.execute("SELECT kind, key, data FROM entries WHERE kind = 'trace'")
        edited = 0
        for kind, key, data in list(rows):
            if b'"output":58' in data:  # the support agent's first answer: 58 tokens
                changed = data.replace(b'"output":58', b'"output":59', 1)
                connection.execute(
                    "UPDATE entries SET data = ? WHERE kind = ? AND key = ?", (changed, kind, key)
                )
                edited += 1
        connection.commit()
    assert edited == 1
    again = runner.invoke(cli, ["report", str(EXAMPLES), "--format", "json", "-j1"])
    assert again.exit_code == 0 and again.stderr == ""
    assert again.stdout == clean.stdout


def test_a_database_found_damaged_in_use_is_started_afresh(tmp_path: Path) -> None:
    """SQLite says a page is damaged while a run reads: the database (costsim's own) is
    deleted, so the next entry written starts it afresh (every run read around it before)."""
    path = tmp_path / "entries.sqlite"
    entries = Entries(path)
    entries.put("trace", "k", b"kept")
    assert entries.get("trace", "k", 100) == b"kept"
    damaged = sqlite3.DatabaseError("database disk image is malformed")
    damaged.sqlite_errorname = "SQLITE_CORRUPT"  # type: ignore[attr-defined]
    entries._damaged(damaged)
    assert not path.exists()
    entries.put("trace", "k", b"again")
    assert entries.get("trace", "k", 100) == b"again"


def test_the_cache_keeps_the_newest_comparisons_and_outputs_not_every_one(
    tmp_path: Path,
) -> None:
    """Each run on changed inputs writes a new comparison and output (15 MB of JSON each for a
    large corpus): only the newest 16 of each are kept, and rows are not touched."""
    cache = store.CacheStore(tmp_path / "cache")
    cache.put("trace", "t", b"{}")
    for index in range(20):
        cache.put_chunks("output", f"{index:064x}", [b"header\n", b"text"])
        written = cache._path("output", f"{index:064x}")
        os.utime(written, ns=(index * 10**9, index * 10**9))  # in the order written
    kept = sorted((tmp_path / "cache").rglob("*.out"))
    assert len(kept) == 16
    assert {path.stem for path in kept} == {f"{index:064x}" for index in range(4, 20)}
    assert cache.get("trace", "t") == b"{}"


def test_a_database_slot_that_is_not_a_file_is_one_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A folder where the entries database goes keeps every run cold: said once, as any cache
    that cannot be written is (it went unsaid)."""
    from click.testing import CliRunner

    from costsim.cli import cli

    (tmp_path / "cache" / "v1" / "entries.sqlite").mkdir(parents=True)
    monkeypatch.setenv("COSTSIM_CACHE_DIR", str(tmp_path / "cache"))
    result = CliRunner().invoke(cli, ["report", str(EXAMPLES), "-j1"])
    assert result.exit_code == 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "entries.sqlite is not a file" in lines[0] and "--no-cache" in lines[0]


def test_a_kept_comparison_edited_on_disk_is_rebuilt_not_shown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One bit of a kept comparison (a price) changed on disk is not shown and then recalled
    as another bill: every file entry ends with the digest of what precedes it."""
    from click.testing import CliRunner

    from costsim.cli import cli

    monkeypatch.setenv("COSTSIM_CACHE_DIR", str(tmp_path / "cache"))
    scenarios = str(ROOT / "scenarios")
    runner = CliRunner()
    clean = runner.invoke(cli, ["compare", scenarios, "-q", "--format", "json", "-j1"])
    assert clean.exit_code == 0
    edited = 0
    for entry in (tmp_path / "cache").rglob("comparison/*/*.json"):
        data = entry.read_bytes()
        changed = data.replace(b'"priced_cost":"2.', b'"priced_cost":"3.', 1)
        if changed != data:
            entry.write_bytes(changed)
            edited += 1
    for entry in (tmp_path / "cache").rglob("output/*/*.out"):
        entry.unlink()  # not recalled: the comparison is read
    assert edited == 1
    for _ in range(2):
        again = runner.invoke(cli, ["compare", scenarios, "-q", "--format", "json", "-j1"])
        assert again.exit_code == 0 and again.stdout == clean.stdout


def test_a_version_folder_that_is_a_link_is_one_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The entries database is never opened through a link (a cache folder can come from
    anywhere), so a linked version folder keeps every run cold: said once."""
    from click.testing import CliRunner

    from costsim.cli import cli

    (tmp_path / "cache").mkdir()
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "cache" / "v1").symlink_to(tmp_path / "elsewhere")
    monkeypatch.setenv("COSTSIM_CACHE_DIR", str(tmp_path / "cache"))
    result = CliRunner().invoke(cli, ["report", str(EXAMPLES), "-j1"])
    assert result.exit_code == 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "is a symbolic link" in lines[0]


def test_a_seal_tells_every_change_of_the_bytes_it_covers() -> None:
    """One seal for rows and files: what was sealed reads back; a flipped bit, a cut, an
    added byte or bytes never sealed read as nothing (and the entry is rebuilt)."""
    from costsim.io.seal import sealed, unsealed

    data = b'{"priced_cost":"2.667696"}'
    assert unsealed(sealed(data)) == data
    assert unsealed(sealed(b"")) == b""
    kept = sealed(data)
    assert unsealed(kept.replace(b"2.66", b"3.66")) is None
    assert unsealed(kept[1:]) is None and unsealed(kept[:-1]) is None
    assert unsealed(kept + b" ") is None and unsealed(data) is None


def test_cache_commands_list_only_the_options_they_use() -> None:
    """A trial: ``cache clear --help`` listed html and ``-v`` ("every event, note and
    unpriced call"), which a one-line result has none of. ``-v`` is still accepted (a script
    passes it to every command); html is refused by click, exit 2."""
    from click.testing import CliRunner

    from costsim.cli import cli

    for command in ("clear", "info"):
        shown = CliRunner().invoke(cli, ["cache", command, "--help"]).output
        assert "--verbose" not in shown and "html" not in shown, shown
        assert "--format [table|json|markdown]" in shown and "-q, --quiet" in shown
    refused = CliRunner().invoke(cli, ["cache", "info", "--format", "html"])
    assert refused.exit_code == 2 and "'html' is not one of" in refused.output
    assert CliRunner().invoke(cli, ["cache", "info", "-v"]).exit_code == 0
    full = CliRunner().invoke(cli, ["report", "--help"]).output
    assert "--verbose" in full and "html:" in full


def test_cache_info_of_a_folder_not_made_yet_says_so(tmp_path: Path) -> None:
    """A trial: after ``cache clear``, ``cache info`` said ``0 entries, 0.0 MB`` of a folder
    that no longer existed."""
    from click.testing import CliRunner

    from costsim.cli import cli

    folder = tmp_path / "never"
    result = CliRunner().invoke(cli, ["cache", "info", "--cache-dir", str(folder)])
    assert result.exit_code == 0
    assert result.stdout.strip().endswith(
        ": no cache there yet (the first run that reads cassettes makes it)"
    )
    assert not folder.exists()
