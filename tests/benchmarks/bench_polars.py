"""Benchmark: ``pl.scan_tfrecord`` next to ``pl.scan_parquet`` on the same tabular data.

Writes a tabular dataset (ids, labels, float features, a category string) with
``tfsql.write_tfrecord`` into a temporary directory, the same table as Parquet next to
it, then times three queries on each format and prints a table with the ratio::

    python tests/benchmarks/bench_polars.py            # 200,000 rows
    python tests/benchmarks/bench_polars.py 2000000 --engine streaming --repeat 5

Each time is the best of ``--repeat`` runs (the files are in the page cache after the
first run, so this measures decoding, not the disk).
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from typing import Callable

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

import tfsql
from tfsql.polars import scan_tfrecord

N_FEATURES = 8
FILES = 4


def make_table(rows: int, seed: int = 0) -> pa.Table:
    rng = np.random.default_rng(seed)
    columns = {
        "id": pa.array(np.arange(rows, dtype=np.int64)),
        "label": pa.array(rng.integers(0, 10, rows, dtype=np.int64)),
        "category": pa.array(rng.choice(["red", "green", "blue", "yellow"], rows)),
    }
    for k in range(N_FEATURES):
        columns[f"f{k}"] = pa.array(rng.random(rows, dtype=np.float32))
    return pa.table(columns)


def write_data(table: pa.Table, root: str) -> tuple[str, str]:
    tf_dir = os.path.join(root, "tfrecord")
    pq_dir = os.path.join(root, "parquet")
    per_file = -(-table.num_rows // FILES)
    tfsql.write_tfrecord(table, tf_dir, max_rows_per_file=per_file)
    os.makedirs(pq_dir)
    for i in range(FILES):
        pq.write_table(table.slice(i * per_file, per_file), os.path.join(pq_dir, f"part-{i}.parquet"))
    return tf_dir, pq_dir


def best_of(repeat: int, run: Callable[[], pl.DataFrame]) -> tuple[float, int]:
    best, rows = float("inf"), -1
    for _ in range(repeat):
        start = time.perf_counter()
        rows = run().height
        best = min(best, time.perf_counter() - start)
    return best, rows


def dir_bytes(path: str) -> int:
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, files in os.walk(path) for f in files)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rows", type=int, nargs="?", default=200_000, help="rows (default 200000)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per query; the best is shown")
    parser.add_argument("--engine", default="in-memory", choices=["in-memory", "streaming"])
    args = parser.parse_args()

    root = tempfile.mkdtemp(prefix="tfsql-bench-polars-")
    try:
        table = make_table(args.rows)
        start = time.perf_counter()
        tf_dir, pq_dir = write_data(table, root)
        print(
            f"{args.rows:,} rows, {len(table.schema)} columns, {FILES} files per format; "
            f"wrote in {time.perf_counter() - start:.2f}s; "
            f"TFRecord {dir_bytes(tf_dir) / 1e6:.1f} MB, Parquet {dir_bytes(pq_dir) / 1e6:.1f} MB; "
            f"engine={args.engine}, best of {args.repeat}"
        )
        schema = {name: table.schema.field(name).type for name in table.schema.names}
        scans = {
            "tfrecord": lambda: scan_tfrecord(tf_dir),
            "tfrecord+schema": lambda: scan_tfrecord(tf_dir, schema=schema),
            "parquet": lambda: pl.scan_parquet(pq_dir + "/*.parquet"),
        }
        queries = {
            "select(one column)": lambda lf: lf.select("f3"),
            "full read": lambda lf: lf,
            "filter f0>0.9, 2 cols": lambda lf: lf.filter(pl.col("f0") > 0.9).select("id", "label"),
            "group_by label": lambda lf: lf.group_by("label").agg(pl.col("f1").mean()),
            "select(pl.len())": lambda lf: lf.select(pl.len()),
        }
        header = f"{'query':<24}{'tfrecord s':>12}{'+schema s':>12}{'parquet s':>12}{'ratio':>8}{'rows':>10}"
        print(header)
        print("-" * len(header))
        for name, query in queries.items():
            times = {}
            rows = {}
            for scan_name, scan in scans.items():
                times[scan_name], rows[scan_name] = best_of(
                    args.repeat, lambda: query(scan()).collect(engine=args.engine)
                )
            assert len(set(rows.values())) == 1, f"{name}: row counts differ {rows}"
            ratio = times["tfrecord"] / times["parquet"]
            print(
                f"{name:<24}{times['tfrecord']:>12.4f}{times['tfrecord+schema']:>12.4f}"
                f"{times['parquet']:>12.4f}{ratio:>7.1f}x{rows['parquet']:>10,}"
            )
        print("ratio = tfrecord (inferred schema, inference included) / parquet")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
