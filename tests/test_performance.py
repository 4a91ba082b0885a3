"""The machinery that makes runs fast gives the results a plain serial run gives: the cache of
loaded cassettes (and of each cassette's share of a comparison), the process pool, and a Dask
cluster; a corrupt or half-written cache is never an error."""

from __future__ import annotations

import contextlib
import json
import os
import random
import sqlite3
import string
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from costsim import api
from costsim.api import execution, pipeline
from costsim.api.batches import batches
from costsim.cli import cli
from costsim.errors import ConfigError, CostsimError
from costsim.io import entries as execution_entries
from costsim.io.seal import sealed, unsealed

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = ROOT / "scenarios"
EXAMPLES = ROOT / "cassettes"
BUNDLED = SCENARIOS / "bundled_examples.yaml"


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("COSTSIM_CACHE_DIR", str(folder))
    return folder


@pytest.fixture
def pool(monkeypatch: pytest.MonkeyPatch) -> None:
    """Small inputs go through the process pool too (by default they are run in-process)."""
    monkeypatch.setattr(pipeline, "_POOL_BYTES", 0)


def _doc(result: Any) -> str:
    return json.dumps(result.to_json(), indent=2)


def _pages(result: Any) -> tuple[str, ...]:
    """Every format of a result: what must not depend on how it was computed."""
    return tuple(result.render(fmt) for fmt in ("json", "table", "markdown", "html"))


def _database(folder: Path) -> Path:
    return folder / "v1" / "entries.sqlite"


def _rows(folder: Path) -> list[tuple[str, str, bytes]]:
    """The small entries (traces, shares): rows of the cache's database, their bytes as
    written (without the digest each row is sealed with)."""
    if not _database(folder).is_file():
        return []
    with contextlib.closing(sqlite3.connect(_database(folder))) as connection:
        try:
            rows = sorted(connection.execute("SELECT kind, key, data FROM entries"))
        except sqlite3.OperationalError:  # made, but killed before its table was
            return []
    return [(kind, key, unsealed(data) or b"") for kind, key, data in rows]


def _rewrite(folder: Path, change: Callable[[bytes], bytes]) -> None:
    """Every entry, row or file, rewritten by ``change`` (a row sealed again: what it holds
    is checked as if costsim had written it)."""
    with contextlib.closing(sqlite3.connect(_database(folder))) as connection:
        for kind, key, data in _rows(folder):
            connection.execute(
                "UPDATE entries SET data = ? WHERE kind = ? AND key = ?",
                (sealed(change(data)), kind, key),
            )
        connection.commit()
    for path in _files(folder):
        path.write_bytes(sealed(change(unsealed(path.read_bytes()) or b"")))


def _files(folder: Path) -> list[Path]:
    """The large entries (a whole comparison): files."""
    return sorted(folder.rglob("*.json")) if folder.is_dir() else []


def _entries(folder: Path) -> list[str]:
    """Every entry, row or file."""
    return [f"{kind}:{key}" for kind, key, _ in _rows(folder)] + [str(p) for p in _files(folder)]


def _contents(folder: Path) -> list[bytes]:
    """Every entry's bytes as written (rows and files without their seals)."""
    files = [unsealed(p.read_bytes()) or b"" for p in _files(folder)]
    return [data for _, _, data in _rows(folder)] + files


def test_cached_traces_equal_parsed_ones(cache_dir: Path) -> None:
    plain = api.load(EXAMPLES, cache=False)
    assert not cache_dir.exists()
    written = api.load(EXAMPLES)
    assert _entries(cache_dir)
    read = api.load(EXAMPLES)
    assert list(written) == list(plain) == list(read)
    assert [repr(trace) for trace in read] == [repr(trace) for trace in plain]


def test_the_same_bytes_elsewhere_are_read_at_their_own_path(
    cache_dir: Path, tmp_path: Path
) -> None:
    source = EXAMPLES / "anthropic_support_agent.yaml"
    copy = tmp_path / "elsewhere" / "copy.yaml"
    copy.parent.mkdir()
    copy.write_bytes(source.read_bytes())
    api.load(source)
    entries = _entries(cache_dir)
    moved = api.load(copy)[0]
    assert _entries(cache_dir) == entries  # keyed by content: read, not written again
    assert moved.path == copy
    assert all(call.provenance.path == copy for call in moved.calls)
    assert repr(moved) == repr(api.load(copy, cache=False)[0])


@pytest.mark.parametrize("scenario", sorted(SCENARIOS.glob("*.yaml")), ids=lambda p: p.stem)
def test_parallel_and_cached_comparisons_equal_a_serial_one(
    scenario: Path, cache_dir: Path, pool: None
) -> None:
    serial = _pages(api.compare(scenario, jobs=1, cache=False))
    assert not cache_dir.exists()
    assert _pages(api.compare(scenario, jobs=2)) == serial  # cold: parsed, and cached
    assert _pages(api.compare(scenario, jobs=2)) == serial  # warm: read back


def test_a_simulation_of_paths_equals_one_of_loaded_traces(cache_dir: Path, pool: None) -> None:
    streamed = api.simulate(EXAMPLES, "caching:ttl=1h", jobs=2)
    loaded = api.simulate(api.load(EXAMPLES, cache=False), "caching:ttl=1h")
    assert _pages(streamed) == _pages(loaded)


def test_breakdowns_of_a_streamed_comparison(cache_dir: Path, pool: None) -> None:
    result = api.compare(BUNDLED, jobs=2)
    for by in api.BREAKDOWN_KEYS:
        assert result.breakdown(by).render("table") == (
            api.compare(BUNDLED, jobs=1, cache=False).breakdown(by).render("table")
        )


def test_corrupt_entries_are_ignored_and_rebuilt(cache_dir: Path) -> None:
    expected = _doc(api.compare(BUNDLED, jobs=1))
    assert _rows(cache_dir) and _files(cache_dir)
    broken = iter(range(10_000))
    _rewrite(cache_dir, lambda data: b"{not json" if next(broken) % 2 else data[: len(data) // 2])
    assert _doc(api.compare(BUNDLED, jobs=1)) == expected
    for data in _contents(cache_dir):
        json.loads(data)  # replaced by complete entries
    assert _doc(api.compare(BUNDLED, jobs=1)) == expected


@pytest.mark.parametrize(
    "damage",
    [
        b"not a database at all" * 100,
        b"",
        "schema",  # a database, but not costsim's: another table, a trigger
    ],
)
def test_a_damaged_or_foreign_database_is_started_afresh(
    cache_dir: Path, damage: bytes | str
) -> None:
    expected = _doc(api.compare(BUNDLED, jobs=1, cache=False))
    api.load(EXAMPLES)
    database = _database(cache_dir)
    execution_entries.Entries(database).forget()  # this process's connection, as a new run's
    for suffix in ("-wal", "-shm"):
        Path(f"{database}{suffix}").unlink(missing_ok=True)
    if isinstance(damage, bytes):
        database.write_bytes(damage)
    else:
        database.unlink()
        with contextlib.closing(sqlite3.connect(database)) as connection:
            connection.execute("CREATE TABLE entries (kind, key, data, extra)")
            connection.execute(
                "CREATE TRIGGER t AFTER INSERT ON entries BEGIN DELETE FROM entries; END"
            )
            connection.commit()
    assert _doc(api.compare(BUNDLED, jobs=1)) == expected
    # three traces, their run's share and the days prices changed on, afresh
    assert len(_rows(cache_dir)) == 5
    assert _doc(api.compare(BUNDLED, jobs=1)) == expected


def test_no_cache_neither_reads_nor_writes(cache_dir: Path) -> None:
    api.compare(BUNDLED, cache=False)
    api.load(EXAMPLES, cache=False)
    assert not cache_dir.exists()


def test_cli_jobs_and_no_cache_give_the_same_bytes(cache_dir: Path, pool: None) -> None:
    args = ["compare", str(BUNDLED), "--format", "json"]
    serial = CliRunner().invoke(cli, [*args, "--jobs", "1", "--no-cache"])
    assert serial.exit_code == 0, serial.output
    assert not cache_dir.exists()
    for extra in (["--jobs", "2"], ["-j", "2"], []):
        parallel = CliRunner().invoke(cli, [*args, *extra])
        assert parallel.exit_code == 0, parallel.output
        assert parallel.stdout == serial.stdout


def test_cache_clear_and_info(cache_dir: Path) -> None:
    api.load(EXAMPLES)
    info = CliRunner().invoke(cli, ["cache", "info", "--format", "json"])
    assert info.exit_code == 0
    assert json.loads(info.output)["path"] == str(cache_dir)
    assert json.loads(info.output)["entries"] == 3
    cleared = CliRunner().invoke(cli, ["cache", "clear"])
    assert cleared.exit_code == 0
    assert "removed" in cleared.output
    assert not cache_dir.exists()
    again = CliRunner().invoke(cli, ["cache", "clear"])
    assert "removed 0 entries from the cache" in again.output


def test_a_new_cache_folder_keeps_itself_out_of_git(cache_dir: Path) -> None:
    api.load(EXAMPLES)
    assert (cache_dir / ".gitignore").read_text().splitlines()[-1] == "*"
    assert (cache_dir / "CACHEDIR.TAG").read_text().startswith("Signature: 8a477f597d28d172")


def test_killed_runs_leave_no_corrupt_entry(cache_dir: Path) -> None:
    command = [sys.executable, "-m", "costsim", "compare", str(SCENARIOS), "--format", "json"]
    env = {**os.environ, "COSTSIM_CACHE_DIR": str(cache_dir)}
    expected = subprocess.run(
        [*command, "--no-cache"], env=env, capture_output=True, check=True, cwd=ROOT
    ).stdout
    for delay in (0.5, 1.0, 1.5, 2.0, 2.5, 3.0):
        process = subprocess.Popen(
            command, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        time.sleep(delay)
        process.kill()
        process.wait()
        for data in _contents(cache_dir):
            json.loads(data)  # an entry is complete, or not there at all
        for entry in cache_dir.rglob("*.out"):  # a recalled output: a header, then its text
            whole = unsealed(entry.read_bytes())
            assert whole is not None  # sealed as written: complete
            header, _, text = whole.partition(b"\n")
            assert json.loads(header)["length"] == len(text)
    after = subprocess.run(command, env=env, capture_output=True, check=True, cwd=ROOT).stdout
    assert after == expected


def test_settings_from_pyproject(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.costsim]\nscheduler = "tcp://127.0.0.1:8786"\njobs = 3\ncache = false\n'
    )
    monkeypatch.chdir(tmp_path)
    settings = execution.current()
    assert (settings.scheduler, settings.jobs, settings.cache) == ("tcp://127.0.0.1:8786", 3, False)
    with api.configured(jobs=1):
        assert execution.current().jobs == 1
        assert execution.resolve(jobs=2).jobs == 2
    (tmp_path / "pyproject.toml").write_text("[tool.costsim]\njobs = 0\n")
    with pytest.raises(ConfigError, match="jobs"):
        execution.current()


def test_batches_keep_order_and_balance() -> None:
    runs = batches(list(range(10)), [1] * 9 + [20], 4)
    assert [item for run in runs for item in run] == list(range(10))
    assert runs[-1] == [9]


def test_dask_cluster_gives_the_local_result(cache_dir: Path) -> None:
    distributed = pytest.importorskip(
        "distributed", reason="Dask distributed is not installed (pip install 'costsim[dask]')"
    )
    local = _doc(api.compare(BUNDLED, jobs=1, cache=False))
    with distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=False,
        host="127.0.0.1",
        protocol="tcp",
        dashboard_address=":0",  # none at 8787: another cluster on the machine may hold it
    ) as cluster:
        address = cluster.scheduler_address
        assert address.startswith("tcp://127.0.0.1:")
        remote = _doc(api.compare(BUNDLED, scheduler=address, cache=False))
        cli_run = CliRunner().invoke(
            cli, ["compare", str(BUNDLED), "--format", "json", "--scheduler", address]
        )
    assert remote == local
    assert cli_run.exit_code == 0, cli_run.output
    local_cli = CliRunner().invoke(cli, ["compare", str(BUNDLED), "--format", "json", "-j", "1"])
    assert cli_run.stdout == local_cli.stdout


def test_cache_clear_refuses_a_folder_that_is_not_a_costsim_cache(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    (project / "src" / "app.py").write_text("print(1)\n")
    result = CliRunner().invoke(cli, ["cache", "clear", "--cache-dir", str(project)])
    assert result.exit_code == 2 and "is not a costsim cache" in result.stderr
    assert (project / "src" / "app.py").is_file()


def test_entries_that_do_not_fit_or_are_not_files_are_rebuilt(cache_dir: Path) -> None:
    """Valid JSON of the wrong shape (a share of other variants, a trace dated without a zone)
    and entries that are not regular files are misses, never an error or a hang."""
    expected = _pages(api.compare(BUNDLED, jobs=1, cache=False))
    api.compare(BUNDLED, jobs=1)

    def reshaped(entry: bytes) -> bytes:
        data = json.loads(entry)
        if "share" in data:
            data["share"]["variants"] = data["share"]["variants"][:1]
        elif "variants" in data:
            data["variants"] = []
        elif "calls" in data:
            for call in data["calls"]:
                if call.get("recorded_at"):
                    call["recorded_at"] = call["recorded_at"][:19]
        return json.dumps(data).encode()

    _rewrite(cache_dir, reshaped)
    assert _pages(api.compare(BUNDLED, jobs=1)) == expected
    for entry in _files(cache_dir):
        entry.unlink()
        os.mkfifo(entry)  # a reader that opened it would wait for a writer forever
    assert _pages(api.compare(BUNDLED, jobs=1)) == expected


def test_the_same_bytes_as_json_and_as_yaml_are_cached_apart(
    cache_dir: Path, tmp_path: Path
) -> None:
    """A ``.json`` file is parsed as JSON only: YAML bytes cached from a ``.yaml`` file do not
    make the same bytes in a ``.json`` file readable."""
    data = (EXAMPLES / "anthropic_support_agent.yaml").read_bytes()
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "x.yaml").write_bytes(data)
    (tmp_path / "b" / "x.json").write_bytes(data)
    assert len(api.load(tmp_path / "a")[0].calls) == 3
    with pytest.raises(CostsimError, match="not valid JSON"):
        api.load(tmp_path / "b")


@pytest.mark.parametrize("address", ["http://127.0.0.1:1", "foo bar", "tcp://host:port"])
def test_a_scheduler_address_that_is_not_one_is_one_sentence(address: str) -> None:
    result = CliRunner().invoke(cli, ["compare", str(BUNDLED), "--scheduler", address])
    assert result.exit_code == 2, result.output
    assert "is not a Dask scheduler address" in result.stderr
    assert "Traceback" not in result.output


def test_agents_named_by_cassette_files_match_wherever_the_work_runs(
    cache_dir: Path, pool: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Roles given by cassette files are looked up where the scenario was read, so a worker in
    another folder (or on another machine) names them alike."""
    scenario = tmp_path / "agents.yaml"
    scenario.write_text(
        f"name: agents by file\ncassettes: [{EXAMPLES}/*.yaml]\n"
        f"agents:\n  support: {{cassettes: [{EXAMPLES}/anthropic_support_agent.yaml]}}\n"
        "variants:\n  cache: [caching]\n"
    )
    monkeypatch.chdir(EXAMPLES.parent)
    serial = api.compare(scenario, jobs=1, cache=False).breakdown("agent").render("table")
    assert "support" in serial
    matcher = api.compare(scenario, jobs=1, cache=False).data.agent_matcher()
    relative = [Path("cassettes") / "anthropic_support_agent.yaml", Path("cassettes/other.yaml")]
    moved = matcher.for_paths(relative)
    assert moved.paths == {str(relative[0]): "support"} and not moved.files
    assert api.compare(scenario, jobs=2).breakdown("agent").render("table") == serial


def test_loading_reports_progress(cache_dir: Path, pool: None) -> None:
    seen: list[tuple[str, int, int]] = []
    api.load(EXAMPLES, jobs=2, progress=lambda what, done, total: seen.append((what, done, total)))
    assert seen and seen[-1] == ("loading", 3, 3)
    assert [done for _, done, _ in seen] == sorted(done for _, done, _ in seen)


def _check_folder(folder: Path) -> Path:
    """Cassettes with something for every kind of finding: a planted (fake) API key, a call
    without usage, an unreadable file, and clean recordings."""
    folder.mkdir()
    for example in sorted(EXAMPLES.glob("*.yaml")):
        (folder / example.name).write_bytes(example.read_bytes())
    agent = (folder / "anthropic_support_agent.yaml").read_text(encoding="utf-8")
    rng = random.Random(19)  # a made-up key of the right shape, never a committed literal
    fake_key = "sk-ant-api03-" + "".join(rng.choice(string.ascii_letters) for _ in range(93))
    planted = agent.replace(
        "uri: https://api.anthropic.com/v1/messages",
        "uri: https://api.anthropic.com/v1/messages?key=" + fake_key,
        1,
    )
    assert planted != agent
    (folder / "planted.yaml").write_text(planted, encoding="utf-8")
    no_usage = agent.replace('"usage"', '"usage_was_here"')
    assert no_usage != agent
    (folder / "no_usage.yaml").write_text(no_usage, encoding="utf-8")
    (folder / "cut.yaml").write_text("interactions:\n- request: {uri: [", encoding="utf-8")
    return folder


def test_cassettes_check_in_a_pool_and_from_the_cache_finds_what_a_serial_check_finds(
    tmp_path: Path, cache_dir: Path, pool: None
) -> None:
    folder = _check_folder(tmp_path / "recordings")

    def check(*extra: str) -> dict[str, str]:
        pages = {}
        for fmt in ("json", "table"):
            result = CliRunner().invoke(
                cli, ["cassettes", "check", str(folder), "--format", fmt, "--show-info", *extra]
            )
            assert result.exit_code == 1, result.output  # errors found: the check fails
            pages[fmt] = result.stdout
        return pages

    serial = check("--jobs", "1", "--no-cache")
    assert not cache_dir.exists()
    found = json.loads(serial["json"])
    rules = {finding["rule"] for finding in found["findings"]}
    assert {"unreadable", "no-usage", "anthropic-api-key"} <= rules, rules
    assert check("--jobs", "2") == serial  # computed by the pool, and cached
    assert len([row for row in _rows(cache_dir) if row[0] == "findings"]) == 6
    assert check("--jobs", "2") == serial  # from the cache
    _rewrite(cache_dir, lambda data: data[: len(data) // 2])  # every entry cut short
    assert check() == serial  # ignored and rebuilt
    # a file changed in place is checked afresh, never answered by what it held before
    (folder / "planted.yaml").write_bytes((EXAMPLES / "anthropic_support_agent.yaml").read_bytes())
    fixed = json.loads(check()["json"])
    assert "anthropic-api-key" not in {finding["rule"] for finding in fixed["findings"]}
    assert fixed == json.loads(check("--jobs", "1", "--no-cache")["json"])


def test_every_command_takes_the_same_output_options() -> None:
    """The README's promise: every command takes --format, -o, --wide, -v and -q (``cache
    info -q`` and ``cache clear -q`` were refused as unknown options)."""
    import click

    def commands(group: click.Group, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
        found: list[tuple[str, ...]] = []
        for name, command in group.commands.items():
            if isinstance(command, click.Group):
                found += commands(command, (*path, name))
            else:
                found.append((*path, name))
        return found

    for path in commands(cli):
        command: Any = cli
        for name in path:
            command = command.commands[name]
        options = {option for param in command.params for option in getattr(param, "opts", [])}
        assert {"--format", "-o", "--wide", "-v", "-q"} <= options, path
    quiet = CliRunner().invoke(cli, ["cache", "info", "-q", "--format", "json"])
    assert quiet.exit_code == 0 and json.loads(quiet.stdout)["kind"] == "costsim.cache_info"
