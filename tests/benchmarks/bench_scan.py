"""Benchmark of the multi-file scanner (issue 3).

Run from the repository root (see README.md)::

    python tests/benchmarks/bench_scan.py [--data-dir ./bench-data] [--scale 1]

Prints three tables; every row runs in a fresh subprocess:

1. ``tabular``, all columns to a Table: ``threads=1`` against ``threads=2`` (best of
   ``--repeat``), with the speed-up.
2. ``images``, streamed batch by batch (``to_batches``, default threads, nothing kept):
   peak RSS with 2, 4, 8 and 16 files of the same size (the extra files are hard links
   to the generated ones), which should stay flat.
3. A hive-partitioned copy of ``tabular`` (``bucket=0..7/``, one file each): the full
   scan against ``filter=pc.field("bucket") == 3`` (prunes 7 of 8 files before opening
   them) and ``count_rows`` with that filter (record headers only).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _datasets  # noqa: E402
from _measure import (  # noqa: E402
    fmt_float,
    fmt_int,
    fmt_rate,
    fmt_ratio,
    format_table,
    measure,
    run_worker,
    worker_main,
)

FILE_COUNTS = (2, 4, 8, 16)


# --------------------------------------------------------------------------------------
# Workers (each runs in its own process)
# --------------------------------------------------------------------------------------


def _filter(config: dict):
    import pyarrow.compute as pc

    if config.get("bucket") is None:
        return None
    return pc.field("bucket") == config["bucket"]


def _table_worker(config: dict) -> dict:
    import tfsql

    ds = tfsql.dataset(config["path"], threads=config.get("threads"))

    def run() -> dict:
        table = ds.to_table(filter=_filter(config))
        return {"rows": table.num_rows}

    return measure(run, repeat=config["repeat"])


def _stream_worker(config: dict) -> dict:
    import tfsql

    ds = tfsql.dataset(config["path"], threads=config.get("threads"))

    def run() -> dict:
        rows = 0
        for batch in ds.to_batches():
            rows += batch.num_rows
        return {"rows": rows}

    return measure(run, repeat=config["repeat"])


def _count_worker(config: dict) -> dict:
    import tfsql

    ds = tfsql.dataset(config["path"])
    return measure(lambda: {"rows": ds.count_rows(filter=_filter(config))}, repeat=config["repeat"])


WORKERS = {"table": _table_worker, "stream": _stream_worker, "count": _count_worker}


# --------------------------------------------------------------------------------------
# The driver
# --------------------------------------------------------------------------------------


def _rates(result: dict, nbytes: int) -> tuple[str, str, str]:
    seconds = result["seconds"]
    return fmt_float(seconds, 3), fmt_rate(result["rows"] / seconds), fmt_float(nbytes / 1e6 / seconds)


def bench_threads(args: argparse.Namespace, script: str) -> str:
    data = _datasets.ensure_dataset("tabular", args.data_dir, args.scale)
    results = {
        threads: run_worker(
            script, {"kind": "table", "path": str(data.path), "threads": threads, "repeat": args.repeat}
        )
        for threads in (1, 2)
    }
    base = results[1]["seconds"]
    rows = [
        [
            f"threads={t}",
            fmt_int(r["rows"]),
            *_rates(r, data.bytes),
            fmt_float(r["peak_mb"]),
            fmt_ratio(base / r["seconds"]),
        ]
        for t, r in results.items()
    ]
    title = (
        f"multi-file scan, tabular: {data.rows:,} Examples, {len(data.files)} files, {data.bytes / 1e6:,.1f} MB, "
        f"all columns -> Table; best of {args.repeat}"
    )
    headers = ["configuration", "records", "seconds", "records/s", "MB/s", "peak MB", "x threads=1"]
    return title + "\n" + format_table(headers, rows)


def bench_file_growth(args: argparse.Namespace, script: str) -> str:
    data = _datasets.ensure_dataset("images", args.data_dir, args.scale)
    rows = []
    first_peak = None
    for n in FILE_COUNTS:
        layout = _datasets.linked_files(data, n)
        result = run_worker(script, {"kind": "stream", "path": str(layout.path), "threads": None, "repeat": 1})
        first_peak = first_peak or result["peak_mb"]
        rows.append(
            [
                f"{n} files",
                fmt_int(result["rows"]),
                fmt_float(layout.bytes / 1e6, 0),
                *_rates(result, layout.bytes),
                fmt_float(result["peak_mb"]),
                fmt_ratio(result["peak_mb"] / first_peak),
            ]
        )
    title = (
        f"streaming scan, images: files of {data.bytes / len(data.files) / 1e6:,.1f} MB each "
        f"(hard links to the generated files), to_batches() with default threads, batches dropped; 1 run each"
    )
    headers = [
        "files",
        "records",
        "file MB",
        "seconds",
        "records/s",
        "MB/s",
        "peak MB",
        f"peak / {FILE_COUNTS[0]} files",
    ]
    return title + "\n" + format_table(headers, rows)


def bench_partition_pruning(args: argparse.Namespace, script: str) -> str:
    data = _datasets.ensure_dataset("tabular", args.data_dir, args.scale)
    layout = _datasets.hive_layout(data, key="bucket")
    path = str(layout.path)
    full = run_worker(script, {"kind": "table", "path": path, "bucket": None, "repeat": args.repeat})
    pruned = run_worker(script, {"kind": "table", "path": path, "bucket": 3, "repeat": args.repeat})
    counted = run_worker(script, {"kind": "count", "path": path, "bucket": 3, "repeat": args.repeat})
    file_bytes = layout.bytes
    bucket_bytes = os.path.getsize(next(f for f in layout.files if "bucket=3" in f))
    rows = [
        [
            "full scan -> Table",
            fmt_int(full["rows"]),
            *_rates(full, file_bytes),
            fmt_float(full["peak_mb"]),
            fmt_ratio(1.0),
        ],
        [
            "filter bucket == 3 -> Table",
            fmt_int(pruned["rows"]),
            *_rates(pruned, bucket_bytes),
            fmt_float(pruned["peak_mb"]),
            fmt_ratio(full["seconds"] / pruned["seconds"]),
        ],
        [
            "count_rows(filter bucket == 3)",
            fmt_int(counted["rows"]),
            *_rates(counted, bucket_bytes),
            fmt_float(counted["peak_mb"]),
            fmt_ratio(full["seconds"] / counted["seconds"]),
        ],
    ]
    title = (
        f"partition pruning, tabular as hive bucket=0..{len(layout.files) - 1}/ (one file each, "
        f"{file_bytes / 1e6:,.1f} MB), default threads; best of {args.repeat}; MB/s over the bytes of the files read"
    )
    headers = ["configuration", "records", "seconds", "records/s", "MB/s", "peak MB", "speed-up vs full"]
    return title + "\n" + format_table(headers, rows)


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    _datasets.add_common_arguments(parser)
    parser.add_argument("--repeat", type=int, default=3, help="runs per configuration (best kept); default 3")
    args = parser.parse_args(argv[1:])
    script = str(Path(__file__).resolve())
    print(f"# tfsql bench_scan: python {sys.version.split()[0]}, {os.cpu_count()} cores", flush=True)
    for section in (bench_threads, bench_file_growth, bench_partition_pruning):
        print("\n" + section(args, script), flush=True)


if __name__ == "__main__":
    if not worker_main(sys.argv, WORKERS):
        main(sys.argv)
