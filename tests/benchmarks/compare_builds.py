"""Benchmark: two git revisions of tfsql, built side by side, measured in one run.

``compare_builds.py BEFORE AFTER`` exports each revision (``git archive``) into its own
directory, builds its native module and DuckDB extension there
(``python setup.py build_ext --inplace``, with this interpreter), and runs the
``bench_core`` and ``bench_duckdb`` workloads against both builds, interleaved: every
repetition runs each workload once per build, before/after then after/before in turn, so
machine load falls on both alike. Each measurement is a fresh subprocess that imports
``tfsql`` from its build's directory (``PYTHONPATH``) or loads its build's extension file
into a fresh DuckDB connection; two builds of ``tfsql._native`` cannot share a process.

Workloads (one thread each, so that CPU time is the work's own):

- ``core``: ``tfsql.dataset(dir, threads=1).to_table()`` over the ``bench_core``
  datasets (tabular, vectors, images), and the in-memory decoder on each (files read
  first, framed and decoded block by block: the C core without file IO); ``1 of 10``
  rows read one column of the 10 (``int0``) — the other 9 features are validated, not
  decoded;
- ``duckdb``: ``bench_duckdb``'s queries on ``tfrecord_scan`` with ``SET threads = 1``
  (count, filtered sum, aggregate over all columns) and ``sum(c)`` (1 of 10 columns).

Each cell is the minimum over the repetitions (each worker runs the work once to warm up,
then ``--inner`` times) of the process CPU time (user + system, every thread), the
calling thread's CPU time and the wall time; ``ratio`` is after / before (below 1:
faster). On a shared machine read the CPU columns: wall time also counts waiting for a
core. CPU time still counts the kernel zeroing the pages a run faults in, which varies
with the machine's memory state (it moves the images rows by several per cent from one
run to the next). The machine's ``uptime`` load averages are printed before and after.
Every workload's answer (row count, or the query's result) must be the same for both
builds.

Builds are cached under ``--build-dir`` by commit (``.tfsql-build.json`` marks a finished
one); ``--rebuild`` rebuilds. The data are the ``bench_core`` datasets at ``--scale``
(cached under ``--data-dir``) and ``bench_duckdb``'s table of ``--duckdb-rows`` rows,
each read by its data files' names (``dir/*.tfrecord``), as a build older than the
writers' ``features.json`` (969b40f) can read it.

Usage::

    python tests/benchmarks/compare_builds.py 969b40f HEAD
    python tests/benchmarks/compare_builds.py main HEAD --repeat 9 --only "core:tabular"
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _datasets  # noqa: E402
from _measure import format_table, run_worker, worker_main  # noqa: E402

SCRIPT = str(Path(__file__).resolve())
REPO = Path(__file__).resolve().parents[2]
STAMP = ".tfsql-build.json"
EXTENSION_FILE = "tfsql.duckdb_extension"
CORE_DATASETS = ("tabular", "vectors", "images")
PROJECTED = ["int0"]  # 1 of the tabular set's 10 features
#: What each run measures, in the table's order: the process's CPU time (user + system,
#: every thread), the calling thread's, and the wall time. (Not user time alone: Linux
#: splits a process's CPU time into user and system by sampled clock ticks, too coarse
#: for runs of tens of milliseconds.)
MEASURES = ("cpu", "thread", "wall")
MEASURE_NAMES = {"cpu": "proc CPU", "thread": "thread CPU", "wall": "wall"}
DUCKDB_PROJECTION = ("sum(c), 1 of 10 columns", "SELECT sum(c) FROM {src}")


# --------------------------------------------------------------------------------------
# Builds
# --------------------------------------------------------------------------------------


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=REPO, check=True, capture_output=True, text=True).stdout.strip()


def build_revision(revision: str, build_dir: Path, *, rebuild: bool = False) -> Path:
    """Export ``revision`` into ``build_dir/<commit>`` and build it in place; return the
    directory (reused when an earlier call finished building the same commit)."""
    commit = _git("rev-parse", "--verify", f"{revision}^{{commit}}")
    target = build_dir / commit[:12]
    stamp = target / STAMP
    if stamp.exists() and not rebuild:
        return target
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    archive = subprocess.run(["git", "archive", commit], cwd=REPO, check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive, check=True)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "setup.py", "build_ext", "--inplace"], cwd=target, env=env, capture_output=True, text=True
    )
    if proc.returncode != 0:
        raise RuntimeError(f"building {revision} ({commit[:12]}) failed:\n{proc.stderr[-4000:]}")
    natives = list((target / "tfsql").glob("_native*.so")) + list((target / "tfsql").glob("_native*.pyd"))
    if not natives or not (target / "tfsql" / EXTENSION_FILE).exists():
        raise RuntimeError(f"building {revision} ({commit[:12]}) made no native module or no DuckDB extension")
    stamp.write_text(json.dumps({"revision": revision, "commit": commit, "seconds": time.perf_counter() - started}))
    return target


# --------------------------------------------------------------------------------------
# Workers (each runs in its own process, importing tfsql from one build)
# --------------------------------------------------------------------------------------


def _cpu_seconds() -> float:
    """This process's CPU seconds so far, user + system (every thread)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _timed(run: Callable[[], Any], inner: int) -> dict[str, Any]:
    """Run once to warm up, then ``inner`` times: the best of each of `MEASURES` (each
    its own minimum, in seconds) and the last answer."""
    answer = run()
    best = dict.fromkeys(MEASURES, float("inf"))
    for _ in range(inner):
        wall, cpu, thread = time.perf_counter(), _cpu_seconds(), time.thread_time()
        answer = run()
        spent = {
            "cpu": _cpu_seconds() - cpu,
            "thread": time.thread_time() - thread,
            "wall": time.perf_counter() - wall,
        }
        best = {k: min(best[k], spent[k]) for k in MEASURES}
    return {**best, "answer": answer}


def _core_worker(config: dict) -> dict:
    import bench_core

    import tfsql
    from tfsql._codec import codec

    make = bench_core.in_memory_run if config["run"] == "in_memory" else bench_core.scan_run
    run = make(config)

    def answer() -> Any:
        return run()["rows"]

    return {**_timed(answer, config["inner"]), "loaded": [tfsql.__file__, codec.__file__]}


def _duckdb_worker(config: dict) -> dict:
    import duckdb

    con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
    con.execute(f"LOAD '{config['extension']}'")
    con.execute(f"SET threads = {config['threads']}")
    sql = config["sql"]
    result = _timed(lambda: con.sql(sql).fetchall(), config["inner"])
    answer = result["answer"]
    # float sums depend on the order of addition: compare them rounded
    result["answer"] = repr([tuple(round(v, 3) if isinstance(v, float) else v for v in row) for row in answer])
    return {**result, "loaded": [config["extension"]]}


def _prepare_worker(config: dict) -> dict:
    """Write (or find cached) the data every workload reads, with one build's writer."""
    import bench_duckdb

    paths = {}
    for name in CORE_DATASETS:
        paths[name] = str(_datasets.ensure_dataset(name, config["data_dir"], config["scale"], verbose=False).path)
    root = Path(config["data_dir"]) / f"duckdb-rows{config['duckdb_rows']}-files{config['duckdb_files']}"
    root.mkdir(parents=True, exist_ok=True)
    table = bench_duckdb.make_table(config["duckdb_rows"])
    paths["duckdb"], _ = bench_duckdb.write_data(table, str(root), config["duckdb_files"])
    return paths


# --------------------------------------------------------------------------------------
# The driver
# --------------------------------------------------------------------------------------


def workloads(paths: dict[str, str], inner: int) -> list[tuple[str, dict]]:
    """Every workload as (name, worker config without the build's own fields)."""
    from bench_duckdb import QUERIES

    # the data files by name: a build before the writers' features.json (969b40f) would
    # read that file of a dataset's directory as a (corrupt) TFRecord file
    paths = {name: f"{path}/*.tfrecord" for name, path in paths.items()}
    listing: list[tuple[str, dict]] = []
    for name in CORE_DATASETS:
        listing.append(
            (f"core: {name} files -> table", {"kind": "core", "run": "scan", "path": paths[name], "threads": 1})
        )
        listing.append((f"core: {name} in-memory decode", {"kind": "core", "run": "in_memory", "path": paths[name]}))
    tabular = paths["tabular"]
    listing.append(
        (
            "core: tabular in-memory, 1 of 10",
            {"kind": "core", "run": "in_memory", "path": tabular, "columns": PROJECTED},
        )
    )
    listing.append(
        (
            "core: tabular files, 1 of 10",
            {"kind": "core", "run": "scan", "path": tabular, "threads": 1, "columns": PROJECTED},
        )
    )
    src = f"tfrecord_scan('{paths['duckdb']}')"
    queries = [(label, sql) for label, sql in QUERIES if "{part}" not in sql] + [DUCKDB_PROJECTION]
    for label, sql in queries:
        listing.append((f"duckdb: {label}", {"kind": "duckdb", "sql": sql.format(src=src), "threads": 1}))
    return [(name, {**config, "inner": inner}) for name, config in listing]


def _measure_on(build: Path, config: dict) -> dict:
    env = {"PYTHONPATH": str(build), "TFSQL_PURE_PYTHON": "0"}
    if config["kind"] == "duckdb":
        config = {**config, "extension": str(build / "tfsql" / EXTENSION_FILE)}
    result = run_worker(SCRIPT, config, env=env)
    for loaded in result["loaded"]:
        if not Path(loaded).resolve().is_relative_to(build.resolve()):
            raise RuntimeError(f"a worker for {build} loaded {loaded}, outside the build")
    return result


def _uptime() -> str:
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "uptime: n/a"


def _cell(seconds: float) -> str:
    return f"{seconds * 1000:,.1f}"


def compare(builds: dict[str, Path], listing: list[tuple[str, dict]], repeat: int) -> list[list[str]]:
    """Run every workload ``repeat`` times per build, interleaved; return the table rows."""
    best: dict[tuple[str, str], dict[str, float]] = {}
    answers: dict[tuple[str, str], Any] = {}
    labels = list(builds)
    for rep in range(repeat):
        order = labels if rep % 2 == 0 else labels[::-1]
        for name, config in listing:
            for label in order:
                result = _measure_on(builds[label], config)
                key = (name, label)
                if key in answers and answers[key] != result["answer"]:
                    raise RuntimeError(f"{name}: {label} answered {result['answer']!r}, earlier {answers[key]!r}")
                answers[key] = result["answer"]
                old = best.get(key, {})
                best[key] = {k: min(old.get(k, float("inf")), result[k]) for k in MEASURES}
        print(f"  repetition {rep + 1}/{repeat} done", file=sys.stderr, flush=True)
    rows = []
    before, after = labels
    for name, _config in listing:
        if answers[(name, before)] != answers[(name, after)]:
            raise RuntimeError(
                f"{name}: the builds disagree: {answers[(name, before)]!r} vs {answers[(name, after)]!r}"
            )
        row = [name]
        for measure in MEASURES:
            b, a = best[(name, before)][measure], best[(name, after)][measure]
            row += [_cell(b), _cell(a), f"{a / b:.3f}" if b > 0 else "n/a"]
        rows.append(row)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("before", help="git revision measured first (e.g. 969b40f)")
    parser.add_argument("after", help="git revision compared with it (e.g. HEAD)")
    parser.add_argument("--repeat", type=int, default=7, help="repetitions per build and workload (default 7)")
    parser.add_argument("--inner", type=int, default=1, help="measured runs per worker after its warm-up run")
    parser.add_argument("--build-dir", default=os.path.join(tempfile.gettempdir(), "tfsql-compare-builds"))
    parser.add_argument("--rebuild", action="store_true", help="rebuild even when a finished build is cached")
    parser.add_argument("--duckdb-rows", type=int, default=200_000)
    parser.add_argument("--duckdb-files", type=int, default=8)
    parser.add_argument("--only", help="run only the workloads whose name contains this text")
    _datasets.add_common_arguments(parser)
    parser.set_defaults(scale=0.2)
    args = parser.parse_args()

    build_dir = Path(args.build_dir)
    builds = {}
    for label, revision in (("before", args.before), ("after", args.after)):
        started = time.perf_counter()
        builds[label] = build_revision(revision, build_dir, rebuild=args.rebuild)
        print(f"{label}: {revision} -> {builds[label]} ({time.perf_counter() - started:.0f} s)", file=sys.stderr)
    prepare = {
        "kind": "prepare",
        "data_dir": os.path.abspath(args.data_dir),
        "scale": args.scale,
        "duckdb_rows": args.duckdb_rows,
        "duckdb_files": args.duckdb_files,
    }
    paths = run_worker(SCRIPT, prepare, env={"PYTHONPATH": str(builds["after"])})
    listing = [(n, c) for n, c in workloads(paths, args.inner) if args.only is None or args.only in n]
    if not listing:
        parser.error(f"no workload name contains {args.only!r}")

    load_before = _uptime()
    rows = compare(builds, listing, args.repeat)
    load_after = _uptime()
    header = ["workload (ms)"]
    for measure in MEASURES:
        header += [f"{MEASURE_NAMES[measure]} before", "after", "ratio"]
    print(
        f"before = {args.before} ({builds['before'].name}), after = {args.after} ({builds['after'].name}); "
        f"min of {args.repeat} interleaved runs (each after a warm-up run), 1 thread, scale {args.scale:g}, "
        f"duckdb {args.duckdb_rows:,} rows"
    )
    print(f"load before: {load_before}")
    print(f"load after:  {load_after}")
    print(format_table(header, rows))


if __name__ == "__main__":
    if not worker_main(sys.argv, {"core": _core_worker, "duckdb": _duckdb_worker, "prepare": _prepare_worker}):
        main()
