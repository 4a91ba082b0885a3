"""The long fuzz run: 10,000 mutated cassettes through every command, crashes and hangs caught.

    python benchmarks/fuzz_cassettes.py                 # 10,000 mutants, seed 14
    python benchmarks/fuzz_cassettes.py --count 2000 --seed 7 --workers 4

Mutants (tests/fuzz/mutate.py: byte flips, truncation, deleted / duplicated keys, wrong types,
bad and inconsistent usage, cut streams, corrupt gzip, huge numbers, deep nesting, alias bombs)
are made from the project's seed cassettes and a fixed sample of the real corpus
(../shared/corpus, when present). Each runs through ``report --format json``, ``cassettes
check --format json`` and ``simulate -s caching`` in worker processes; a worker that dies is a
crash, one that takes longer than --timeout is a hang. Then ``report DIR --lenient --format
json`` runs over folders of mutants and must always write JSON.

Silently wrong (tests/fuzz/check.py): a report that exits 0 with totals (calls, calls with
usage, prompt and output tokens) different from the unmutated file's, with no warning, note,
estimated call or skipped file, and different from what an independent strict reading of the
mutant says it billed (tests/fuzz/oracle.py), or a cost above $100,000 with no flag.

Exit status 1 when any traceback, crash, hang or silently wrong total is found. Mutants are
written to a temporary folder and deleted (pass --keep DIR to keep the failing ones).
"""

from __future__ import annotations

import argparse
import json
import select
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from queue import Empty, Queue
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.fuzz.mutate import mutants, sample_sources  # noqa: E402
from tests.fuzz.seeds import write_seeds  # noqa: E402

CORPUS = ROOT.parent / "shared" / "corpus"
FAILURES = ("traceback", "crash", "hang", "silently-wrong")


class Worker:
    """One worker process, restarted after a crash or a hang."""

    def __init__(self) -> None:
        self.process: subprocess.Popen[str] | None = None

    def start(self) -> subprocess.Popen[str]:
        if self.process is None or self.process.poll() is not None:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "tests.fuzz.worker"],
                cwd=ROOT,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
                bufsize=1,
            )
        return self.process

    def run(self, job: str, timeout: float) -> dict[str, Any]:
        process = self.start()
        assert process.stdin is not None
        assert process.stdout is not None
        try:
            process.stdin.write(job + "\n")
            process.stdin.flush()
        except BrokenPipeError:
            return self._died(process)
        ready, _, _ = select.select([process.stdout], [], [], timeout)
        if not ready:
            process.kill()
            process.wait()
            return {"status": "hang", "detail": f"no answer in {timeout:.0f} s"}
        line = process.stdout.readline()
        if not line:
            return self._died(process)
        result: dict[str, Any] = json.loads(line)
        return result

    def _died(self, process: subprocess.Popen[str]) -> dict[str, Any]:
        code = process.wait()
        return {"status": "crash", "detail": f"worker exited with {code}"}

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            assert self.process.stdin is not None
            self.process.stdin.close()
            self.process.wait(timeout=30)


def _fuzz(jobs: list[tuple[int, str]], workers: int, timeout: float) -> dict[int, dict[str, Any]]:
    queue: Queue[tuple[int, str]] = Queue()
    for job in jobs:
        queue.put(job)
    results: dict[int, dict[str, Any]] = {}
    lock = threading.Lock()

    def serve() -> None:
        worker = Worker()
        while True:
            try:
                index, job = queue.get_nowait()
            except Empty:
                break
            result = worker.run(job, timeout)
            with lock:
                results[index] = result
                done = len(results)
            if done % 500 == 0:
                print(f"  {done:,} / {len(jobs):,}", file=sys.stderr, flush=True)
        worker.stop()

    threads = [threading.Thread(target=serve) for _ in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def _lenient(folders: list[Path], timeout: float) -> list[str]:
    """``report DIR --lenient --format json`` over each folder: JSON every time."""
    problems = []
    for folder in folders:
        files = len(list(folder.iterdir()))
        try:
            result = subprocess.run(
                [sys.executable, "-c", "from costsim.cli import main; main()", "report",
                 str(folder), "--lenient", "--format", "json"],
                cwd=ROOT, capture_output=True, text=True, timeout=timeout, check=False,
            )  # fmt: skip
        except subprocess.TimeoutExpired:
            problems.append(f"{folder.name}: hang")
            continue
        try:
            document = json.loads(result.stdout)
        except ValueError:
            problems.append(f"{folder.name}: exit {result.returncode}, no JSON: {result.stderr}")
            continue
        seen = len(document["cassettes"]) + len(document["skipped"])
        if result.returncode != 0 or seen != files or "Traceback" in result.stderr:
            problems.append(f"{folder.name}: exit {result.returncode}, {seen}/{files} files")
    return problems


def _summarise(
    results: dict[int, dict[str, Any]], made: dict[int, Any], keep: Path | None
) -> tuple[dict[str, Any], list[str]]:
    outcomes: Counter[str] = Counter()
    by_class: dict[str, Counter[str]] = {}
    failures = []
    for index, result in sorted(results.items()):
        mutant, path = made[index]
        status = result["status"]
        outcomes[status] += 1
        by_class.setdefault(mutant.mutator, Counter())[status] += 1
        outcomes["flagged"] += bool(result.get("flagged"))
        if status in FAILURES:
            detail = str(result.get("detail", ""))[-400:]
            failures.append(
                f"{mutant.name} ({mutant.source.name}): {status} {result.get('command', '')}: "
                f"{detail}"
            )
            if keep:
                keep.mkdir(parents=True, exist_ok=True)
                shutil.copy(path, keep / mutant.name)
    summary = {
        "mutants": len(results),
        "tracebacks": outcomes["traceback"],
        "crashes": outcomes["crash"],
        "hangs": outcomes["hang"],
        "silently_wrong": outcomes["silently-wrong"],
        "flagged": outcomes["flagged"],
        "by_class": {name: dict(counts) for name, counts in sorted(by_class.items())},
    }
    return summary, failures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=14)
    parser.add_argument("--sources", type=int, default=150, help="corpus cassettes to mutate")
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per mutant")
    parser.add_argument("--folders", type=int, default=20, help="lenient folders to run")
    parser.add_argument("--keep", type=Path, help="copy failing mutants into this folder")
    args = parser.parse_args()

    started = time.monotonic()
    work = Path(tempfile.mkdtemp(prefix="costsim-fuzz-"))
    try:
        sources = write_seeds(work)
        if (CORPUS / "MANIFEST.tsv").is_file():
            sources += sample_sources(CORPUS, args.sources, args.seed)
        else:
            print(f"corpus not found at {CORPUS}: project seeds only", file=sys.stderr)
        folder_count = max(1, args.folders)
        folders = [work / f"folder-{n:02d}" for n in range(folder_count)]
        for folder in folders:
            folder.mkdir()
        jobs: list[tuple[int, str]] = []
        made: dict[int, Any] = {}
        for mutant in mutants(sources, args.count, args.seed):
            path = folders[mutant.index % folder_count] / mutant.name
            path.write_bytes(mutant.data)
            commands = "report,check,simulate"
            jobs.append((mutant.index, f"{path}\t{mutant.source}\t{commands}"))
            made[mutant.index] = (mutant, path)
        generated = time.monotonic()
        print(f"{len(jobs):,} mutants of {len(sources)} cassettes in "
              f"{generated - started:.0f} s; running...", file=sys.stderr)  # fmt: skip
        results = _fuzz(jobs, args.workers, args.timeout)
        fuzzed = time.monotonic()
        lenient = _lenient(folders, args.timeout * 20)
        finished = time.monotonic()

        summary, failures = _summarise(results, made, args.keep)
        summary.update(
            seed=args.seed,
            sources=len(sources),
            lenient_folders=folder_count,
            lenient_failures=len(lenient),
            seconds={
                "generate": round(generated - started, 1),
                "fuzz": round(fuzzed - generated, 1),
                "lenient": round(finished - fuzzed, 1),
            },
        )
        print(json.dumps(summary, indent=2))
        for line in failures[:50] + lenient:
            print(line, file=sys.stderr)
        return 1 if failures or lenient else 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
