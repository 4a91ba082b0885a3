"""How close a full ``costsim compare`` comes to the speed of reading the files.

    python benchmarks/bench_compare.py [FOLDER] [--scenario FILE] [--runs N] [--scale K]
                                       [--format table|json] [--jobs N]

In one run, on this machine, repeated ``--runs`` times (default 3, interleaved so that every
measurement sees the same load) and reported as medians:

- the parse floor: every cassette under FOLDER (default ../shared/corpus) parsed with
  libyaml's ``CSafeLoader`` and nothing else, in a fresh interpreter;
- ``costsim compare`` of the scenario (default benchmarks/corpus_scenario.yaml: every
  registered strategy and one stacked variant with attribution, over FOLDER) with a cold
  cache (an empty cache folder) and a warm one (the same folder again);

and the ratios cold / floor and warm / floor; then, as a pull request that re-records one
cassette does, ``changed``: the same command after one cassette (the median-sized one) changed,
with the cache of the warm run. All of it runs on a copy of FOLDER (each file's bytes differ
from the original by a comment line), so that a file can be changed. Every output is checked
byte for byte against a serial ``--jobs 1 --no-cache`` run. Times are wall clock; CPU is
user + system time of the run and every process it started; peak RSS sums the run's process
tree (sampled every 20 ms).

``--scale K`` runs the same comparison over FOLDER repeated K times (each copy's files differ
by a comment line, so nothing is shared through the cache) against FOLDER once, both cold,
and prints how time and peak RSS grow.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
SCENARIO = ROOT / "benchmarks" / "corpus_scenario.yaml"
FLOOR = """
import sys, pathlib, yaml
for path in sorted(pathlib.Path(sys.argv[1]).rglob("*")):
    if path.suffix in (".yaml", ".yml") and path.is_file():
        yaml.load(path.read_bytes(), Loader=yaml.CSafeLoader)
"""


def _tree_rss(pid: int) -> int:
    """Resident memory (bytes) of ``pid`` and its descendants (Linux /proc; else 0)."""
    total = 0
    try:
        children: dict[int, list[int]] = {}
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    with open(f"/proc/{entry}/stat") as file:
                        parent = int(file.read().rsplit(")", 1)[1].split()[1])
                except (OSError, ValueError, IndexError):
                    continue
                children.setdefault(parent, []).append(int(entry))
        stack = [pid]
        while stack:
            current = stack.pop()
            stack.extend(children.get(current, []))
            try:
                with open(f"/proc/{current}/statm") as file:
                    total += int(file.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
            except (OSError, ValueError, IndexError):
                continue
    except OSError:
        return 0
    return total


def measure(command: list[str], env: dict[str, str]) -> tuple[float, float, int, bytes]:
    """(wall seconds, CPU seconds, peak RSS bytes, stdout) of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    with tempfile.TemporaryFile() as out:
        process = subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.DEVNULL)
        peak = 0
        while process.poll() is None:
            peak = max(peak, _tree_rss(process.pid))
            time.sleep(0.02)
        wall = time.perf_counter() - started
        if process.returncode not in (0, 1):
            raise SystemExit(f"{' '.join(command)} exited with {process.returncode}")
        out.seek(0)
        output = out.read()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    peak = peak or after.ru_maxrss * 1024  # no /proc: the largest child so far
    return wall, cpu, peak, output


def _costsim(scenario: Path, fmt: str, *extra: str) -> list[str]:
    command = [sys.executable, "-m", "costsim", "compare", str(scenario), "--lenient"]
    return [*command, "--format", fmt, *extra]


def _scaled(folder: Path, copies: int, into: Path, scenario: Path) -> Path:
    """``copies`` copies of ``folder`` under ``into`` (distinct bytes) and a scenario over them."""
    for copy in range(copies):
        for path in sorted(folder.rglob("*.yaml")):
            target = into / "cassettes" / f"copy{copy}" / path.relative_to(folder)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(path.read_bytes() + f"\n# copy {copy}\n".encode())
    into.mkdir(parents=True, exist_ok=True)
    document = yaml.safe_load(scenario.read_text())
    document["cassettes"] = [str(into / "cassettes" / "**" / "*.yaml")]
    scaled = into / "scenario.yaml"
    scaled.write_text(yaml.safe_dump(document, sort_keys=False))
    return scaled


def _median(values: list[float]) -> float:
    return statistics.median(values)


def _load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.1f} (1 min), {five:.1f} (5 min) on {os.cpu_count()} cores"


def _user_env() -> dict[str, str]:
    """This environment, with Python's bytecode caches kept, as an installed wheel has them
    (PYTHONDONTWRITEBYTECODE would make every run compile costsim afresh)."""
    return {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def _median_file(folder: Path) -> Path:
    files = sorted(folder.rglob("*.yaml"), key=lambda p: (p.stat().st_size, str(p)))
    return files[len(files) // 2]


def compare_runs(folder: Path, scenario: Path, runs: int, fmt: str, jobs: list[str]) -> None:
    with tempfile.TemporaryDirectory(prefix="costsim-bench-copy-") as tmp:
        copy = Path(tmp) / "x1"
        scaled = _scaled(folder, 1, copy, scenario)
        _compare_runs(scaled, copy / "cassettes", runs, fmt, jobs)


def _compare_runs(scenario: Path, folder: Path, runs: int, fmt: str, jobs: list[str]) -> None:
    env = _user_env()
    print(f"{folder}: {sum(1 for _ in folder.rglob('*.yaml'))} cassettes; {_load()}")
    reference = measure(_costsim(scenario, fmt, "--jobs", "1", "--no-cache"), env)
    print(f"serial --jobs 1 --no-cache: {reference[0]:.2f} s wall, {reference[1]:.2f} s CPU")
    names = ("floor", "cold", "warm", "changed")
    rows: dict[str, list[tuple[float, float, int]]] = {name: [] for name in names}
    changed = _median_file(folder)
    for turn in range(runs):
        with tempfile.TemporaryDirectory(prefix="costsim-bench-cache-") as cache:
            env["COSTSIM_CACHE_DIR"] = cache
            wall, cpu, rss, _ = measure([sys.executable, "-c", FLOOR, str(folder)], env)
            rows["floor"].append((wall, cpu, rss))
            for name in names[1:]:
                if name == "changed":  # a comment line: the same numbers, other bytes
                    with changed.open("a") as file:
                        file.write(f"# changed {turn}\n")
                wall, cpu, rss, output = measure(_costsim(scenario, fmt, *jobs), env)
                if output != reference[3]:
                    raise SystemExit(f"{name} run output differs from the serial run's")
                rows[name].append((wall, cpu, rss))
    floor = _median([wall for wall, _, _ in rows["floor"]])
    for name, values in rows.items():
        wall = _median([v[0] for v in values])
        cpu = _median([v[1] for v in values])
        megabytes = _median([v[2] for v in values]) / 1e6
        walls = ", ".join(f"{v[0]:.2f}" for v in values)
        ratio = f"  = {wall / floor:.2f} x floor" if name != "floor" else ""
        print(
            f"  {name:<7} {wall:6.2f} s wall ({walls}), {cpu:6.2f} s CPU, "
            f"{megabytes:6.0f} MB{ratio}"
        )
    print(f"  outputs byte-identical to the serial run; {_load()}")


def scale_runs(folder: Path, scenario: Path, copies: int, fmt: str, jobs: list[str]) -> None:
    env = _user_env()
    results = {}
    with tempfile.TemporaryDirectory(prefix="costsim-bench-scale-") as tmp:
        for k in (1, copies):
            scaled = _scaled(folder, k, Path(tmp) / f"x{k}", scenario)
            with tempfile.TemporaryDirectory(prefix="costsim-bench-cache-") as cache:
                env["COSTSIM_CACHE_DIR"] = cache
                wall, cpu, rss, _ = measure(_costsim(scaled, fmt, *jobs), env)
            results[k] = (wall, cpu, rss)
            print(f"  {k:>3} x: {wall:7.2f} s wall, {cpu:7.2f} s CPU, peak RSS {rss / 1e6:6.0f} MB")
            shutil.rmtree(Path(tmp) / f"x{k}")
    one, many = results[1], results[copies]
    print(
        f"  {copies} x the folder: time x{many[0] / one[0]:.2f} (CPU x{many[1] / one[1]:.2f}), "
        f"peak RSS x{many[2] / one[2]:.2f}; {_load()}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", nargs="?", type=Path, default=ROOT.parent / "shared" / "corpus")
    parser.add_argument("--scenario", type=Path, default=SCENARIO)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--scale", type=int, default=0, metavar="K")
    parser.add_argument("--format", dest="fmt", choices=("table", "json"), default="table")
    parser.add_argument("--jobs", default=None)
    args = parser.parse_args()
    folder = args.folder.resolve()
    jobs = ["--jobs", args.jobs] if args.jobs else []
    if args.scale:
        scale_runs(folder, args.scenario.resolve(), args.scale, args.fmt, jobs)
    else:
        compare_runs(folder, args.scenario.resolve(), args.runs, args.fmt, jobs)


if __name__ == "__main__":
    main()
