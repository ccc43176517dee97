"""Benchmark (issue 16): split files, inference in one read, parallel gzip, Spark ranges.

Four tables, every configuration in a fresh process, best of ``--repeat``:

1. ``read_tfrecord`` against TensorFlow's best pipeline on the three datasets: with
   schema inference (the default sample: 1,000 records or 4 MiB per file), with the
   previous sample (1,000 records per file, ``infer_bytes=None``) and with ``schema=``
   given (no inference at all: what decoding the sample into the first batches could
   reach at best). TensorFlow's rate is the better of ``bench_core``'s two pipelines
   (run with an interpreter that has TensorFlow).
2. One large uncompressed file (the 8 image files, about 800 MB, and the 8 tabular
   files, about 227 MB, concatenated) read with threads=1, threads=2 (the file whole:
   one thread reads and frames, the pool decodes) and threads=2 with
   ``split_bytes=32 MiB`` (byte ranges, each decoded in pieces of a batch by the pool,
   ``tfsql.splits``), with the process CPU time and peak memory.
3. gzip writing of tabular rows into 2 shards with 1 and 2 compression threads.

Tables 2 and 3 start with the machine's ceiling measured in the same run: a GIL-free
CPU task (SHA-256 of 1 MiB buffers) on 2 threads against 1. On a shared machine whose
second core is busy this is well below 2x, and no thread ratio can exceed it.
4. Spark (``local[2]``) reading one ~1 GB uncompressed file: partitions planned (one per
   128 MiB range) and the time to collect the three integer columns (a schema naming
   only them: every record is still framed and CRC-checked), checked row by row against
   ``read_tfrecord`` (with ``--spark``; needs pyspark and Java).

Usage::

    python tests/benchmarks/bench_split.py --data-dir ./bench-data
    python tests/benchmarks/bench_split.py --scale 0.05 --repeat 1 --spark
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _datasets
from _measure import (
    fmt_float,
    fmt_rate,
    fmt_ratio,
    format_table,
    measure,
    run_worker,
    tensorflow_available,
    worker_main,
)
from bench_core import _tf_worker


def _read_worker(config: dict) -> dict:
    import tfsql

    path = config["path"]
    options = dict(config.get("options", {}))
    if config.get("given_schema"):
        options["schema"] = tfsql.infer_schema(path, infer_sample=None if config.get("full") else 1000)

    runs: list[float] = []

    def run() -> dict:
        before, main_before, start = os.times(), time.thread_time(), time.perf_counter()
        table = tfsql.read_tfrecord(path, **options)
        after, main_after = os.times(), time.thread_time()
        runs.append(time.perf_counter() - start)
        return {
            "rows": table.num_rows,
            "cpu": after.user - before.user + after.system - before.system,
            "main_cpu": main_after - main_before,
        }

    # the first run also pays for the pages of its table; later runs may reuse the pages
    # the previous table freed (glibc keeps the main thread's, not the decode threads')
    return {**measure(run, repeat=config["repeat"]), "first": runs[0]}


def _gzip_worker(config: dict) -> dict:
    import tfsql

    spec = _datasets.SPECS["tabular"]
    table = __import__("pyarrow").Table.from_batches(list(_datasets.generate_batches(spec, config["rows"])))

    def run() -> dict:
        out = tempfile.mkdtemp(dir=config["tmp"])
        before, main_before = os.times(), time.thread_time()
        try:
            tfsql.write_tfrecord(
                table, out + "/o", compression="gzip", num_shards=config["files"], threads=config["threads"]
            )
        finally:
            shutil.rmtree(out)
        after, main_after = os.times(), time.thread_time()
        return {
            "rows": table.num_rows,
            "cpu": after.user - before.user + after.system - before.system,
            "main_cpu": main_after - main_before,
        }

    return measure(run, repeat=config["repeat"])


def _ceiling_worker(config: dict) -> dict:
    """Seconds for the same GIL-free CPU work on 1 thread, then split over 2."""
    import hashlib
    import threading
    import time

    data = b"x" * (1 << 20)
    n = config["n"]

    def hash_many(k: int) -> None:
        for _ in range(k):
            hashlib.sha256(data).digest()

    best = {1: float("inf"), 2: float("inf")}
    for _ in range(config["repeat"]):
        start = time.perf_counter()
        hash_many(n)
        best[1] = min(best[1], time.perf_counter() - start)
        threads = [threading.Thread(target=hash_many, args=(n // 2,)) for _ in range(2)]
        start = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        best[2] = min(best[2], time.perf_counter() - start)
    return {"one": best[1], "two": best[2]}


def ceiling_line(args: argparse.Namespace, script: str) -> str:
    """The machine's 2-thread ceiling now (see the module docstring)."""
    result = run_worker(script, {"kind": "ceiling", "n": 300, "repeat": args.repeat})
    load = os.getloadavg()
    return (
        f"machine ceiling: GIL-free CPU work on 2 threads = {result['one'] / result['two']:.2f}x 1 thread "
        f"(load average {load[0]:.1f})\n"
    )


WORKERS = {"read": _read_worker, "tf": _tf_worker, "gzip": _gzip_worker, "ceiling": _ceiling_worker}


def _amdahl(result: dict) -> float:
    """The speed-up 2 free cores could give over running all of this CPU work on one:
    the work on the calling thread is serial (Amdahl), the rest spreads over both."""
    return result["cpu"] / max(result["main_cpu"], result["cpu"] / 2)


def _rate(result: dict | None) -> float | None:
    return None if result is None else result["rows"] / result["seconds"]


def _warm_page_cache(files: list) -> None:
    """Read every file once, so that the first configuration measured does not pay for
    bytes the kernel dropped since (the comparisons are between warm reads)."""
    for file in files:
        with open(file, "rb", buffering=0) as f:
            while f.read(16 << 20):
                pass


def table_vs_tensorflow(args: argparse.Namespace, script: str) -> str:
    rows = []
    for name in ("tabular", "vectors", "images"):
        data = _datasets.ensure_dataset(name, args.data_dir, args.scale)
        _warm_page_cache(data.files)
        path = str(data.path)
        base = {"kind": "read", "path": path, "repeat": args.repeat, "options": {"threads": 2}}
        runs = {
            "inferred (1,000 rec or 4 MiB / file)": run_worker(script, base),
            "inferred (1,000 rec / file, before)": run_worker(
                script, {**base, "options": {"threads": 2, "infer_bytes": None}}
            ),
            "schema= given": run_worker(script, {**base, "given_schema": True}),
        }
        tf_best = None
        if tensorflow_available() and not args.no_tensorflow:
            tf = [
                run_worker(
                    script, {"kind": "tf", "dataset": name, "files": data.files, "pipeline": p, "repeat": args.repeat}
                )
                for p in ("serial", "interleave")
            ]
            tf_best = max(_rate(r) for r in tf)
        for label, result in runs.items():
            rate = _rate(result)
            rows.append(
                [
                    name,
                    label,
                    fmt_float(result["seconds"], 3),
                    fmt_rate(rate),
                    fmt_ratio(rate / tf_best) if tf_best else "n/a",
                ]
            )
        rows.append(
            [
                name,
                "TensorFlow best pipeline",
                fmt_float(data.rows / tf_best, 3) if tf_best else "n/a",
                fmt_rate(tf_best),
                "1.00x",
            ]
        )
    return "read_tfrecord(dir, threads=2), all columns, vs TensorFlow\n" + format_table(
        ["dataset", "configuration", "seconds", "records/s", "x TF"], rows
    )


def table_single_file(args: argparse.Namespace, script: str) -> str:
    rows = []
    for name in ("images", "tabular"):
        one = _datasets.concatenated_file(_datasets.ensure_dataset(name, args.data_dir, args.scale), 8)
        size = os.path.getsize(one.files[0])
        configs = {
            "threads=1": {"threads": 1},
            "threads=2, no split_bytes": {"threads": 2},
            "threads=2, split_bytes=32 MiB": {"threads": 2, "split_bytes": 32 << 20},
        }
        results = {
            label: run_worker(script, {"kind": "read", "path": one.files[0], "repeat": args.repeat, "options": options})
            for label, options in configs.items()
        }
        base = _rate(results["threads=1"])
        first_base = results["threads=1"]["first"]
        for label, result in results.items():
            rows.append(
                [
                    f"{name}: 1 file, {size / 1e6:,.0f} MB",
                    label,
                    fmt_float(result["seconds"], 3),
                    fmt_float(result["cpu"], 3),
                    fmt_float(result["main_cpu"], 3),
                    fmt_float(result["peak_mb"], 0),
                    fmt_rate(_rate(result)),
                    fmt_float(size / 1e6 / result["seconds"]),
                    fmt_ratio(_rate(result) / base),
                    fmt_float(result["first"], 3),
                    fmt_ratio(first_base / result["first"]),
                ]
            )
    return (
        (
            "One large uncompressed file, read_tfrecord to a table;\n"
            "first run s: a fresh process's first read (its table's pages all new; the best run may\n"
            "reuse pages the previous table freed, which glibc keeps for the main thread only);\n"
            "cpu s: CPU time of the process in its last run (the work done, whatever the load);\n"
            "main thread cpu s: the part done on the calling thread;\n"
            "peak MB includes the table (the file's decoded size)\n"
        )
        + ceiling_line(args, script)
        + format_table(
            [
                "file",
                "configuration",
                "seconds",
                "cpu s",
                "main thread cpu s",
                "peak MB",
                "records/s",
                "MB/s",
                "x threads=1",
                "first run s",
                "x threads=1 (first run)",
            ],
            rows,
        )
    )


def table_gzip(args: argparse.Namespace, script: str) -> str:
    n = max(1000, int(400_000 * args.scale))
    rows = []
    results = {}
    for threads in (1, 2):
        results[threads] = run_worker(
            script,
            {"kind": "gzip", "rows": n, "files": 2, "threads": threads, "repeat": args.repeat, "tmp": args.data_dir},
        )
    for threads, result in results.items():
        rows.append(
            [
                f"threads={threads}",
                fmt_float(result["seconds"], 3),
                fmt_float(result["cpu"], 3),
                fmt_float(result["main_cpu"], 3),
                fmt_ratio(_amdahl(result)),
                fmt_rate(_rate(result)),
                fmt_ratio(_rate(result) / _rate(results[1])),
            ]
        )
    return (
        (
            f"gzip write_tfrecord, {n:,} tabular rows into 2 shards; 2-core bound: cpu s / max(writing thread cpu s,\n"
            "cpu s / 2), the speed-up over one core that this split of the work allows on 2 free cores\n"
        )
        + ceiling_line(args, script)
        + format_table(
            [
                "compression threads",
                "seconds",
                "cpu s",
                "writing thread cpu s",
                "2-core bound",
                "rows/s",
                "x threads=1",
            ],
            rows,
        )
    )


def table_spark(args: argparse.Namespace) -> str:
    import time

    from pyspark.sql import SparkSession

    import tfsql
    import tfsql.spark

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # tasks import tfsql from this interpreter
    images = _datasets.ensure_dataset("images", args.data_dir, args.scale)
    one = _datasets.concatenated_file(images, 10)
    path = one.files[0]
    size = os.path.getsize(path)
    spark = SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false").getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    tfsql.spark.register(spark)
    rows = []
    try:
        expected = tfsql.read_tfrecord(path, columns=["label", "height", "width"])
        for option in ("128m", "all"):
            reader = spark.read.format("tfrecord").schema("label long, height long, width long")
            if option == "all":
                reader = reader.option("maxPartitionBytes", "all")
            df = reader.load(path).select("label", "height", "width")
            best = float("inf")
            for _ in range(args.repeat):
                start = time.perf_counter()
                got = df.collect()
                best = min(best, time.perf_counter() - start)
            same = [tuple(r) for r in got] == list(
                zip(*(expected.column(c).to_pylist() for c in expected.column_names))
            )
            label = "maxPartitionBytes=128 MiB (default)" if option == "128m" else "maxPartitionBytes=all (whole file)"
            rows.append([label, str(df.rdd.getNumPartitions()), f"{len(got):,}", fmt_float(best, 2), str(same)])
    finally:
        spark.stop()
    return f"Spark local[2] reading one {size / 1e9:.2f} GB uncompressed file (collect of 3 columns)\n" + format_table(
        ["configuration", "partitions", "rows", "seconds", "same rows as read_tfrecord"], rows
    )


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    _datasets.add_common_arguments(parser)
    parser.add_argument("--repeat", type=int, default=3, help="runs per configuration (best kept); default 3")
    parser.add_argument("--no-tensorflow", action="store_true", help="skip the TensorFlow rows")
    parser.add_argument("--tables", default="tf,single,gzip", help="comma-separated: tf, single, gzip, spark")
    parser.add_argument("--spark", action="store_true", help="also run the Spark table")
    args = parser.parse_args(argv[1:])
    script = str(Path(__file__).resolve())
    tables = args.tables.split(",") + (["spark"] if args.spark else [])
    load = os.getloadavg()
    print(
        f"# tfsql bench_split: python {sys.version.split()[0]}, {os.cpu_count()} cores, "
        f"load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}",
        flush=True,
    )
    builders = {
        "tf": lambda: table_vs_tensorflow(args, script),
        "single": lambda: table_single_file(args, script),
        "gzip": lambda: table_gzip(args, script),
        "spark": lambda: table_spark(args),
    }
    for name in tables:
        print("\n" + builders[name](), flush=True)
    load = os.getloadavg()
    print(f"\n# load average at the end: {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")


if __name__ == "__main__":
    if not worker_main(sys.argv, WORKERS):
        main(sys.argv)
