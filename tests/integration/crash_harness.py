"""Kill writing processes (SIGKILL) at random instants and check what is left.

Used by ``test_crash_safety.py``; ``python tests/integration/crash_harness.py N`` runs N
crash trials and N/4 concurrency trials and prints the outcome tables.
"""

from __future__ import annotations

import collections
import os
import random
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import tfsql

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from crash_writer import table  # noqa: E402  (this directory, put on sys.path above)

WRITER = str(HERE / "crash_writer.py")
MODES = ("error", "append", "overwrite", "overwrite_partitions")
OLD_ROWS, NEW_ROWS, NEW_FIRST = 150, 300, 100_000
_ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE.parents[1]), os.environ.get("PYTHONPATH", "")])}


def rows(target: Path) -> collections.Counter:
    """The (id, k) rows tfsql reads from ``target`` (empty when it holds no data file)."""
    if not target.exists():
        return collections.Counter()
    try:
        table = tfsql.read_tfrecord(str(target))
    except tfsql.NoDataError:  # a directory without data files (an error since issue 23)
        return collections.Counter()
    return collections.Counter(zip(table.column("id").to_pylist(), table.column("k").to_pylist()))


def span(first: int, n: int, partitions: list[int]) -> collections.Counter:
    return collections.Counter((first + i, partitions[i % len(partitions)]) for i in range(n))


def expected(mode: str) -> tuple[collections.Counter, collections.Counter, list[int]]:
    """(old content, new content after the write, partitions of the new data)."""
    old = collections.Counter() if mode == "error" else span(0, OLD_ROWS, [0, 1, 2])
    parts = [1, 2, 3] if mode == "overwrite_partitions" else [0, 1, 2]
    new = span(NEW_FIRST, NEW_ROWS, parts)
    if mode == "append":
        new = old + new
    elif mode == "overwrite_partitions":
        new = collections.Counter({r: c for r, c in old.items() if r[1] not in parts}) + new
    return old, new, parts


def leftovers(target: Path) -> list[str]:
    if not target.exists():
        return []
    return sorted(n for n in os.listdir(target) if n.startswith(("_temporary", "_trash", "_tfsql")))


def start_writer(
    target: Path, mode: str, first: int, n: int, parts: list[int], wait: Path | None = None
) -> subprocess.Popen:
    args = [sys.executable, WRITER, str(target), mode, str(first), str(n), ",".join(map(str, parts))]
    if wait is not None:
        args += ["--wait", str(wait)]
    return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_ENV)


def read_until(proc: subprocess.Popen, letter: str, timeout: float = 60) -> str:
    """Read the writer's stage letters until ``letter`` (or its exit); returns them."""
    seen = ""
    deadline = time.monotonic() + timeout
    fd = proc.stdout.fileno()
    while letter not in seen and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.05)
        if ready:
            chunk = os.read(fd, 4096).decode()
            if not chunk:
                break
            seen += chunk
    return seen


def crash_trial(directory: Path, mode: str, inside_commit: bool, rng: random.Random, recover_first: bool) -> dict:
    """One kill -9 trial; returns its outcome."""
    target = directory / "out"
    old, new, parts = expected(mode)
    if mode != "error":
        tfsql.write_tfrecord(table(0, OLD_ROWS, [0, 1, 2]), str(target), partition_by="k", max_rows_per_file=25)
    proc = start_writer(target, mode, NEW_FIRST, NEW_ROWS, parts)
    seen = read_until(proc, "C" if inside_commit else "S")
    # measured here: start to commit about 0.11 s, the commit 0.05-0.08 s
    time.sleep(rng.uniform(0, 0.06) if inside_commit else rng.uniform(0, 0.2))
    proc.send_signal(signal.SIGKILL)
    out, _ = proc.communicate()
    seen += out.decode()
    stage = (
        "done"
        if "D" in seen
        else "after commit point"
        if "F" in seen
        else "inside commit"
        if "C" in seen
        else "before commit"
    )
    seen_by_reader = rows(target)  # tfsql's reader, before any recovery
    if recover_first:
        tfsql.recover(str(target)) if target.exists() else None
    after = rows(target)
    # the next write in the same mode (error mode fails on data, after recovering)
    next_rows = table(900_000, 10, [7])
    try:
        tfsql.write_tfrecord(next_rows, str(target), mode=mode, partition_by="k")
    except tfsql.WriteConflictError:
        assert mode == "error" and after
    outcome = "old" if after == old else "new" if after == new else "partial"
    lost = 0 if outcome != "partial" else min(sum((old - after).values()), sum((new - after).values()))
    return {
        "mode": mode,
        "stage": stage,
        "outcome": outcome,
        "lost": lost,
        "reader_agrees": seen_by_reader == after,
        "leftovers": leftovers(target),
        "inside_commit": inside_commit,
    }


def concurrent_trial(directory: Path, modes: tuple[str, str]) -> dict:
    """Two writers to one target at once; returns the outcome."""
    target = directory / "out"
    flag = directory / "go"
    old = collections.Counter()
    if modes != ("error", "error"):
        tfsql.write_tfrecord(table(0, OLD_ROWS, [0, 1, 2]), str(target), partition_by="k", max_rows_per_file=25)
        old = span(0, OLD_ROWS, [0, 1, 2])
    a, b = span(100_000, NEW_ROWS, [0, 1, 2]), span(200_000, NEW_ROWS, [0, 1, 2])
    procs = [
        start_writer(target, mode, first, NEW_ROWS, [0, 1, 2], wait=flag)
        for mode, first in zip(modes, (100_000, 200_000))
    ]
    time.sleep(0.5)  # both imported and waiting
    flag.write_bytes(b"")
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        results.append(out.decode() + err.decode())
    after = rows(target)

    def content(mode: str, before: collections.Counter, new: collections.Counter) -> collections.Counter:
        return before + new if mode == "append" else new

    first_a = content(modes[1], content(modes[0], old, a), b)  # a commits, then b
    first_b = content(modes[0], content(modes[1], old, b), a)
    errors = [r for r in results if "E " in r or "Traceback" in r]
    if modes == ("error", "error"):
        serial = after in (a, b) and len(errors) == 1 and "WriteConflictError" in errors[0]
    else:
        serial = after in (first_a, first_b) and not errors
    return {
        "modes": "/".join(modes),
        "serial": serial,
        "lost": 0 if serial else -1,
        "file_not_found": sum("FileNotFoundError" in r for r in results),
        "errors": [e.strip()[-1500:] for e in errors],
        "leftovers": leftovers(target),
    }


def crash_table(results: list[dict]) -> str:
    lines = [
        "| mode | trials | killed inside commit | before commit | inside commit | after commit point "
        "| finished | old | new | partial | lost rows | reader disagreed | leftovers after next write |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for mode in MODES:
        rs = [r for r in results if r["mode"] == mode]
        stages = collections.Counter(r["stage"] for r in rs)
        outcomes = collections.Counter(r["outcome"] for r in rs)
        lines.append(
            f"| {mode} | {len(rs)} | {sum(r['inside_commit'] for r in rs)} | {stages['before commit']} | "
            f"{stages['inside commit']} | {stages['after commit point']} | {stages['done']} | "
            f"{outcomes['old']} | {outcomes['new']} | {outcomes['partial']} | {sum(r['lost'] for r in rs)} | "
            f"{sum(not r['reader_agrees'] for r in rs)} | {sum(bool(r['leftovers']) for r in rs)} |"
        )
    return "\n".join(lines)


def concurrency_table(results: list[dict]) -> str:
    lines = [
        "| writers | trials | serializable result | lost rows (trials) | raw FileNotFoundError | leftovers |",
        "|---|---|---|---|---|---|",
    ]
    for modes in sorted({r["modes"] for r in results}):
        rs = [r for r in results if r["modes"] == modes]
        lines.append(
            f"| {modes} | {len(rs)} | {sum(r['serial'] for r in rs)} | "
            f"{sum(not r['serial'] for r in rs)} | {sum(r['file_not_found'] for r in rs)} | "
            f"{sum(bool(r['leftovers']) for r in rs)} |"
        )
    return "\n".join(lines)


CONCURRENT = (("overwrite", "overwrite"), ("overwrite", "append"), ("append", "overwrite"), ("error", "error"))


def run(n_crash: int, n_concurrent: int, workdir: Path, seed: int = 0) -> tuple[list[dict], list[dict]]:
    rng = random.Random(seed)
    crashes, concurrent = [], []
    for i in range(n_crash):
        trial_dir = workdir / f"crash-{i}"
        trial_dir.mkdir()
        crashes.append(
            crash_trial(trial_dir, MODES[i % 4], inside_commit=(i // 4) % 4 == 0, rng=rng, recover_first=i % 2 == 0)
        )
    for i in range(n_concurrent):
        trial_dir = workdir / f"concurrent-{i}"
        trial_dir.mkdir()
        concurrent.append(concurrent_trial(trial_dir, CONCURRENT[i % len(CONCURRENT)]))
    return crashes, concurrent


if __name__ == "__main__":  # pragma: no cover - the measurement for the closing note
    import tempfile

    n = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    m = int(sys.argv[2]) if len(sys.argv) > 2 else 50
    with tempfile.TemporaryDirectory() as tmp:
        crashes, concurrent = run(n, m, Path(tmp))
    print(crash_table(crashes))
    print()
    print(concurrency_table(concurrent))
    for r in concurrent:
        if not r["serial"] or r["leftovers"]:
            print(r)
