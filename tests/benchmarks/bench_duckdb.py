"""Benchmark: DuckDB SQL over TFRecord, three ways, next to ``read_parquet`` on the same data.

- ``native``: the extension's ``tfrecord_scan`` (tfsql.duckdb_extension) on a DuckDB connection,
  the v1 build (DuckDB's stable C API);
- ``v2``: the same through the V2 build (DuckDB 2's V2 C API: filter pushdown prunes the
  partitions), when there is one for this DuckDB; the last column is its time over v1's;
- ``arrow``: a `tfsql.Dataset` registered on the connection (``con.register(name,
  tfsql.dataset(path))``: DuckDB scans the Python reader's Arrow stream);
- ``connect``: ``tfsql.connect()``, DuckDB with the build it loads by default;
- ``parquet``: ``read_parquet`` of the same rows (snappy, the same number of files).

The tabular set: 4 int64 columns, 4 float32 columns and 2 short strings, plus a
``bucket`` partition column (10 hive partitions) for the partition-filter rows. Queries:
``count(*)``, a filtered aggregate, a full aggregate over every column, and a filter on
one of the 10 partitions (with the full scan's time to show the pruning), each with 1 and
2 DuckDB threads. ``read_tfrecord`` of the full aggregate's columns is the decoding
baseline. Every cell is the best of ``--repeat`` runs; ratios are against read_parquet.

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
from tfsql.duckdb.extension import v2_extension_path

QUERIES = [
    ("count(*)", "SELECT count(*) FROM {src}"),
    ("sum(x) WHERE label = 3", "SELECT sum(x) FROM {src} WHERE label = 3"),
    (
        "aggregate over all columns",
        "SELECT sum(label), sum(a), sum(b), sum(c), sum(x), sum(y), sum(z), sum(w), max(s1), max(s2) FROM {src}",
    ),
    ("partition filter (1 of 10)", "SELECT count(*), sum(x) FROM {part} WHERE bucket = 3"),
    ("same, no filter", "SELECT count(*), sum(x) FROM {part}"),
]
AGGREGATE_COLUMNS = ["label", "a", "b", "c", "x", "y", "z", "w", "s1", "s2"]


def make_table(rows: int, seed: int = 0) -> pa.Table:
    rng = np.random.default_rng(seed)
    words = np.array([f"w{i:03d}" for i in range(500)])
    return pa.table(
        {
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
        }
    )


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


def write_partitioned(table: pa.Table, root: str) -> tuple[str, str]:
    """The same rows with a ``bucket`` column (0..9), hive-partitioned, as TFRecord and Parquet."""
    tfrecord_dir = os.path.join(root, "tfrecord_by_10_buckets")
    parquet_dir = os.path.join(root, "parquet_by_10_buckets")
    with_bucket = table.append_column("bucket", pa.array(np.arange(table.num_rows) % 10))
    if not os.path.exists(tfrecord_dir):
        tfsql.write_tfrecord(with_bucket, tfrecord_dir, partition_by="bucket")
    if not os.path.exists(parquet_dir):
        pq.write_to_dataset(with_bucket, parquet_dir, partition_cols=["bucket"])
    return tfrecord_dir, parquet_dir


def load_build(api: str):
    """A DuckDB connection with build ``api`` ("v1" or "v2") of the extension loaded."""
    import duckdb

    before = os.environ.get("TFSQL_DUCKDB_API")
    os.environ["TFSQL_DUCKDB_API"] = api
    try:
        return tfsql.load_extension(duckdb.connect(config={"allow_unsigned_extensions": "true"}))
    finally:
        if before is None:
            os.environ.pop("TFSQL_DUCKDB_API", None)
        else:
            os.environ["TFSQL_DUCKDB_API"] = before


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=500_000)
    parser.add_argument("--files", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--dir", help="keep the generated data here (default: a temporary directory)")
    args = parser.parse_args()

    import duckdb

    root = args.dir or tempfile.mkdtemp(prefix="bench_duckdb_")
    os.makedirs(root, exist_ok=True)
    table = make_table(args.rows)
    tfrecord_dir, parquet_dir = write_data(table, root, args.files)
    tfrecord_part, parquet_part = write_partitioned(table, root)
    tfrecord_mb = sum(os.path.getsize(os.path.join(tfrecord_dir, f)) for f in os.listdir(tfrecord_dir)) / 1e6
    parquet_mb = sum(os.path.getsize(os.path.join(parquet_dir, f)) for f in os.listdir(parquet_dir)) / 1e6

    native = load_build("v1")
    v2 = load_build("v2") if v2_extension_path(duckdb.__version__) is not None else None
    arrow = connect()
    arrow.register("arrow_flat", tfsql.dataset(tfrecord_dir))
    arrow.register("arrow_part", tfsql.dataset(tfrecord_part))
    front = connect()
    ways = {
        "native": (native, f"tfrecord_scan('{tfrecord_dir}')", f"tfrecord_scan('{tfrecord_part}')"),
        **({"v2": (v2, f"tfrecord_scan('{tfrecord_dir}')", f"tfrecord_scan('{tfrecord_part}')")} if v2 else {}),
        "arrow": (arrow, "arrow_flat", "arrow_part"),
        "connect": (front, f"tfrecord_scan('{tfrecord_dir}')", f"tfrecord_scan('{tfrecord_part}')"),
        "parquet": (
            native,
            f"read_parquet('{parquet_dir}/*.parquet')",
            f"read_parquet('{parquet_part}/**/*.parquet', hive_partitioning := true)",
        ),
    }
    print(
        f"duckdb {duckdb.__version__}, {args.rows:,} rows, {args.files} files; TFRecord {tfrecord_mb:.1f} MB, "
        f"Parquet {parquet_mb:.1f} MB; best of {args.repeat} (ms; ratio to read_parquet)"
    )
    header = f"{'query':<28} {'thr':>3} " + " ".join(f"{name:>16}" for name in ways) + (" v2/v1" if v2 else "")
    print(header)
    print("-" * len(header))
    for threads in (1, 2):
        for con in (native, arrow, front) + ((v2,) if v2 else ()):
            con.execute(f"SET threads = {threads}")
        for label, template in QUERIES:
            timings, results = {}, {}
            for name, (con, flat, part) in ways.items():
                query = template.format(src=flat, part=part)

                def run(con=con, query=query, name=name):
                    results[name] = con.sql(query).fetchall()

                timings[name] = best_time(run, args.repeat)
            reference = repr(results["parquet"])
            if label.startswith("aggregate"):  # float sums depend on the order of addition
                reference = None
            for name in ways:
                assert reference is None or repr(results[name]) == reference, (label, name, results)
            base = timings["parquet"]
            cells = " ".join(f"{timings[n] * 1000:>8.1f} {timings[n] / base:>6.1f}x" for n in ways)
            if v2:
                cells += f" {timings['v2'] / timings['native']:>5.2f}"
            print(f"{label:<28} {threads:>3} {cells}")
        decode = best_time(
            lambda: tfsql.read_tfrecord(tfrecord_dir, columns=AGGREGATE_COLUMNS, threads=threads), args.repeat
        )
        print(
            f"{'read_tfrecord, same columns':<28} {threads:>3} {decode * 1000:>8.1f} ms "
            f"(the decoding baseline of the full aggregate)"
        )


if __name__ == "__main__":
    main()
