"""Benchmark: DuckDB SQL over TFRecord (``tfrecord_scan``) next to ``read_parquet`` on the same data.

The tabular set: 4 int64 columns, 4 float32 columns and 2 short strings, written as
TFRecord (uncompressed) and as Parquet (snappy), the same number of files each. Every
query runs ``--repeat`` times per format; the table shows the best time.

Usage::

    python tests/benchmarks/bench_duckdb.py                # 500k rows, 8 files
    python tests/benchmarks/bench_duckdb.py --rows 2000000 --files 16
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

import tfsql
from tfsql.duckdb import connect

QUERIES = [
    ("count(*)", "SELECT count(*) FROM {src}"),
    ("sum(x) WHERE label = 3", "SELECT sum(x) FROM {src} WHERE label = 3"),
    ("aggregate over all columns",
     "SELECT sum(label), sum(a), sum(b), sum(c), sum(x), sum(y), sum(z), sum(w), "
     "max(s1), max(s2) FROM {src}"),
    ("SELECT * to Arrow", "SELECT * FROM {src}"),
]


def make_table(rows: int, seed: int = 0) -> pa.Table:
    rng = np.random.default_rng(seed)
    words = np.array([f"w{i:03d}" for i in range(500)])
    return pa.table({
        "label": rng.integers(0, 10, rows),
        "a": rng.integers(0, 1 << 40, rows),
        "b": rng.integers(-1000, 1000, rows),
        "c": np.arange(rows, dtype=np.int64),
        "x": rng.random(rows, dtype=np.float32),
        "y": rng.standard_normal(rows, dtype=np.float32),
        "z": rng.random(rows, dtype=np.float32) * 100,
        "w": rng.random(rows, dtype=np.float32) - 0.5,
        "s1": pa.array(words[rng.integers(0, 500, rows)]),
        "s2": pa.array(np.char.add("id-", (np.arange(rows) % 100_000).astype(str))),
    })


def write_data(table: pa.Table, root: str, files: int) -> tuple[str, str]:
    tfrecord_dir = os.path.join(root, "tfrecord")
    parquet_dir = os.path.join(root, "parquet")
    if not os.path.exists(tfrecord_dir):
        tfsql.write_tfrecord(table, tfrecord_dir, num_shards=files)
    if not os.path.exists(parquet_dir):
        os.makedirs(parquet_dir)
        per_file = -(-table.num_rows // files)
        for k in range(files):
            pq.write_table(table.slice(k * per_file, per_file), os.path.join(parquet_dir, f"part-{k}.parquet"))
    return tfrecord_dir, parquet_dir


def best_time(run, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=500_000)
    parser.add_argument("--files", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--dir", help="keep the generated data here (default: a temporary directory)")
    args = parser.parse_args()

    root = args.dir or tempfile.mkdtemp(prefix="bench_duckdb_")
    os.makedirs(root, exist_ok=True)
    table = make_table(args.rows)
    tfrecord_dir, parquet_dir = write_data(table, root, args.files)
    tfrecord_mb = sum(os.path.getsize(os.path.join(tfrecord_dir, f)) for f in os.listdir(tfrecord_dir)) / 1e6
    parquet_mb = sum(os.path.getsize(os.path.join(parquet_dir, f)) for f in os.listdir(parquet_dir)) / 1e6

    from tfsql._codec import codec

    con = connect()
    sources = {
        "tfrecord_scan": f"tfrecord_scan('{tfrecord_dir}')",
        "read_parquet": f"read_parquet('{parquet_dir}/*.parquet')",
    }
    import duckdb

    print(f"duckdb {duckdb.__version__}, codec {codec.__name__}, {args.rows:,} rows, {args.files} files; "
          f"TFRecord {tfrecord_mb:.1f} MB, Parquet {parquet_mb:.1f} MB; best of {args.repeat}")
    header = f"{'query':<28} {'tfrecord_scan':>14} {'read_parquet':>13} {'ratio':>7} {'TFRecord rows/s':>16}"
    print(header)
    print("-" * len(header))
    for label, template in QUERIES:
        results = {}
        timings = {}
        for name, src in sources.items():
            query = template.format(src=src)
            if label.startswith("SELECT *"):
                def run(query=query):
                    relation = con.sql(query)
                    fetch = getattr(relation, "to_arrow_table", None) or relation.fetch_arrow_table
                    results[name] = fetch().num_rows
            else:
                def run(query=query):
                    results[name] = con.sql(query).fetchall()
            timings[name] = best_time(run, args.repeat)
        if not label.startswith("SELECT *") and not label.startswith("aggregate"):
            assert results["tfrecord_scan"] == results["read_parquet"], (label, results)
        t, p = timings["tfrecord_scan"], timings["read_parquet"]
        print(f"{label:<28} {t * 1000:>12.1f}ms {p * 1000:>11.1f}ms {t / p:>6.1f}x {args.rows / t:>16,.0f}")


if __name__ == "__main__":
    main()
