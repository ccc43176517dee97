"""Benchmark of the writer (issue 4).

Run from the repository root (see README.md)::

    python tests/benchmarks/bench_write.py [--data-dir ./bench-data] [--scale 1]

Prints two tables; every row runs in a fresh subprocess that first builds the input:

1. Write throughput of the ``tabular`` data (1,000,000 rows as an in-memory Arrow
   table): ``tfsql.write_tfrecord`` (no compression, gzip) against
   ``pyarrow.parquet.write_table`` (snappy) and, when TensorFlow imports,
   ``tf.io.TFRecordWriter`` writing pre-serialized ``tf.train.Example`` records, then the
   same including the Example construction and serialization from the table's columns
   (what a TensorFlow user pays; 1 run, it is slow). Best of ``--repeat`` (output
   removed between runs, outside the timing). MB/s is over the table's Arrow bytes.
2. Streaming: ``tfsql.write_tfrecord`` of a generator of 65,536-row batches made on the
   fly (1,000,000 and 10,000,000 rows), with rows/s and the peak RSS above the RSS
   before writing: it stays flat because memory holds one batch, not the input.

Output goes to a temporary directory under ``--data-dir``, deleted afterwards.
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

import _datasets  # noqa: E402
from _measure import (  # noqa: E402
    fmt_float,
    fmt_int,
    fmt_rate,
    fmt_ratio,
    format_table,
    measure,
    peak_rss_mb,
    reset_peak_rss,
    rss_mb,
    run_worker,
    tensorflow_available,
    worker_main,
)

SPEC = _datasets.SPECS["tabular"]


# --------------------------------------------------------------------------------------
# Workers (each runs in its own process)
# --------------------------------------------------------------------------------------


def _input_table(rows: int):
    import pyarrow as pa

    return pa.Table.from_batches(list(_datasets.generate_batches(SPEC, rows)))


def _dir_bytes(path: str) -> int:
    return sum(p.stat().st_size for p in Path(path).rglob("*") if p.is_file())


def _timed_writes(config: dict, write) -> dict:
    """Run ``write(table, out_dir)`` ``repeat`` times, each into a fresh directory
    (all removed at the end, outside the timing)."""
    table = _input_table(config["rows"])
    scratch = tempfile.mkdtemp(prefix="_write-", dir=config["data_dir"])
    outputs: list[str] = []

    def run() -> dict:
        out = os.path.join(scratch, f"run{len(outputs)}")
        write(table, out)
        outputs.append(out)
        return {"rows": table.num_rows, "arrow_bytes": table.nbytes}

    try:
        result = measure(run, repeat=config["repeat"])
        result["out_bytes"] = _dir_bytes(outputs[-1])
        return result
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _tfsql_worker(config: dict) -> dict:
    import tfsql

    return _timed_writes(config, lambda table, out: tfsql.write_tfrecord(table, out, compression=config["compression"]))


def _parquet_worker(config: dict) -> dict:
    import pyarrow.parquet as pq

    def write(table, out: str) -> None:
        os.makedirs(out)
        pq.write_table(table, os.path.join(out, "part-0.parquet"), compression="snappy")

    return _timed_writes(config, write)


def _tf_examples(table, tf) -> "list":
    """The rows of ``table`` as ``tf.train.Example`` objects, built the usual way."""
    columns = {name: table.column(name).to_pylist() for name in table.column_names}
    ints = [n for n, (dtype, _) in SPEC.tf_features.items() if dtype == "int64"]
    floats = [n for n, (dtype, _) in SPEC.tf_features.items() if dtype == "float32"]
    strings = [n for n, (dtype, _) in SPEC.tf_features.items() if dtype == "string"]
    examples = []
    for i in range(table.num_rows):
        feature = {}
        for name in ints:
            feature[name] = tf.train.Feature(int64_list=tf.train.Int64List(value=[columns[name][i]]))
        for name in floats:
            feature[name] = tf.train.Feature(float_list=tf.train.FloatList(value=[columns[name][i]]))
        for name in strings:
            feature[name] = tf.train.Feature(bytes_list=tf.train.BytesList(value=[columns[name][i].encode()]))
        examples.append(tf.train.Example(features=tf.train.Features(feature=feature)))
    return examples


def _tf_worker(config: dict) -> dict:
    """``tf.io.TFRecordWriter``; with ``serialize`` the timing includes building and
    serializing the Examples, else they are serialized before the timing starts."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf

    pre_serialized: list[bytes] = []
    if not config["serialize"]:
        pre_serialized = [e.SerializeToString() for e in _tf_examples(_input_table(config["rows"]), tf)]

    def write(table, out: str) -> None:
        os.makedirs(out)
        if config["serialize"]:
            records = [example.SerializeToString() for example in _tf_examples(table, tf)]
        else:
            records = pre_serialized
        with tf.io.TFRecordWriter(os.path.join(out, "part-0.tfrecord")) as writer:
            for record in records:
                writer.write(record)

    return _timed_writes(config, write)


def _stream_worker(config: dict) -> dict:
    import tfsql

    generating = 0.0

    def timed_batches():
        nonlocal generating
        batches = _datasets.generate_batches(SPEC, config["rows"], seed=1)
        while True:
            start = time.perf_counter()
            batch = next(batches, None)
            generating += time.perf_counter() - start
            if batch is None:
                return
            yield batch

    out = tempfile.mkdtemp(prefix="_stream-", dir=config["data_dir"])
    try:
        reset_peak_rss()
        baseline = rss_mb()
        start = time.perf_counter()
        result = tfsql.write_tfrecord(timed_batches(), os.path.join(out, "data"))
        seconds = time.perf_counter() - start
        return {
            "rows": result.rows,
            "seconds": seconds,
            "generating": generating,
            "out_bytes": result.bytes,
            "files": len(result.files),
            "peak_mb": max(0.0, peak_rss_mb() - baseline),
        }
    finally:
        shutil.rmtree(out, ignore_errors=True)


WORKERS = {
    "tfsql": _tfsql_worker,
    "parquet": _parquet_worker,
    "tf": _tf_worker,
    "stream": _stream_worker,
}


# --------------------------------------------------------------------------------------
# The driver
# --------------------------------------------------------------------------------------


def bench_in_memory(args: argparse.Namespace, script: str, rows: int) -> str:
    common = {"rows": rows, "data_dir": args.data_dir}
    repeat = args.repeat
    configs = [
        ("tfsql.write_tfrecord, no compression", {"kind": "tfsql", "compression": None, "repeat": repeat}),
        ("tfsql.write_tfrecord, gzip", {"kind": "tfsql", "compression": "gzip", "repeat": repeat}),
        ("pyarrow.parquet.write_table, snappy", {"kind": "parquet", "repeat": repeat}),
    ]
    use_tf = tensorflow_available() and not args.no_tensorflow
    tf_configs = [
        ("TF TFRecordWriter, pre-serialized Examples", {"kind": "tf", "serialize": False, "repeat": repeat}),
        ("TF build+serialize Examples + TFRecordWriter", {"kind": "tf", "serialize": True, "repeat": 1}),
    ]
    results = [(label, run_worker(script, {**common, **c})) for label, c in configs]
    results += [(label, run_worker(script, {**common, **c}) if use_tf else None) for label, c in tf_configs]
    parquet_rate = results[2][1]["rows"] / results[2][1]["seconds"]
    tf_full = results[4][1]
    tf_rate = tf_full["rows"] / tf_full["seconds"] if tf_full else None
    table_rows = []
    for label, r in results:
        if r is None:
            table_rows.append([label, *["n/a"] * 8])
            continue
        rate = r["rows"] / r["seconds"]
        table_rows.append(
            [
                label,
                fmt_int(r["rows"]),
                fmt_float(r["seconds"], 3),
                fmt_rate(rate),
                fmt_float(r["arrow_bytes"] / 1e6 / r["seconds"]),
                fmt_float(r["out_bytes"] / 1e6),
                fmt_float(r["peak_mb"]),
                fmt_ratio(rate / parquet_rate),
                fmt_ratio(rate / tf_rate) if tf_rate else "n/a",
            ]
        )
    arrow_mb = results[0][1]["arrow_bytes"] / 1e6
    title = (
        f"write throughput, tabular: {rows:,} rows ({SPEC.description}) from an in-memory Arrow table "
        f"({arrow_mb:,.1f} MB); best of {repeat} (TF build+serialize: 1 run)"
    )
    headers = ["writer", "rows", "seconds", "rows/s", "Arrow MB/s", "out MB", "peak MB", "x Parquet", "x TF+serialize"]
    return title + "\n" + format_table(headers, table_rows)


def bench_streaming(args: argparse.Namespace, script: str, sizes: list[int]) -> str:
    rows = []
    first_peak = None
    for n in sizes:
        r = run_worker(script, {"kind": "stream", "rows": n, "data_dir": args.data_dir})
        first_peak = first_peak or r["peak_mb"]
        rows.append(
            [
                fmt_int(n),
                fmt_float(r["seconds"], 2),
                fmt_float(r["generating"], 2),
                fmt_rate(n / r["seconds"]),
                fmt_rate(n / (r["seconds"] - r["generating"])),
                fmt_float(r["out_bytes"] / 1e6, 0),
                fmt_float(r["peak_mb"]),
                fmt_ratio(r["peak_mb"] / first_peak),
            ]
        )
    title = (
        f"streaming write, tabular: tfsql.write_tfrecord(generator of {SPEC.batch_rows:,}-row batches made on the fly), "
        "no compression; 1 run each"
    )
    headers = [
        "rows",
        "seconds",
        "of which generating",
        "rows/s",
        "rows/s excl. generating",
        "out MB",
        "peak MB",
        "peak / first",
    ]
    return title + "\n" + format_table(headers, rows)


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    _datasets.add_common_arguments(parser)
    parser.add_argument("--repeat", type=int, default=3, help="runs per configuration (best kept); default 3")
    parser.add_argument("--no-tensorflow", action="store_true", help="skip the TensorFlow rows")
    args = parser.parse_args(argv[1:])
    os.makedirs(args.data_dir, exist_ok=True)
    script = str(Path(__file__).resolve())
    rows = SPEC.scaled_rows(args.scale)
    print(
        f"# tfsql bench_write: python {sys.version.split()[0]}, {os.cpu_count()} cores, TensorFlow "
        f"{'available' if tensorflow_available() and not args.no_tensorflow else 'n/a'}",
        flush=True,
    )
    print("\n" + bench_in_memory(args, script, rows), flush=True)
    print("\n" + bench_streaming(args, script, [rows, 10 * rows]), flush=True)


if __name__ == "__main__":
    if not worker_main(sys.argv, WORKERS):
        main(sys.argv)
