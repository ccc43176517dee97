"""Benchmark of the core decoder (issue 2): decode every column of each dataset.

Run from the repository root (see README.md)::

    python tests/benchmarks/bench_core.py [--data-dir ./bench-data] [--scale 1] [--datasets tabular,vectors,images]

For each dataset (tabular, vectors, images) it prints one table. Every row runs in a
fresh subprocess (honest peak RSS) and keeps the best of ``--repeat`` runs:

- ``tfsql threads=1``: ``tfsql.dataset(dir, threads=1).to_table()`` (files -> Table);
- ``tfsql threads=default``: the same with the default thread count;
- ``tfsql threads=1 (files -> batches, dropped)``: ``to_batches()`` with nothing kept,
  which is what the TensorFlow rows do (so their peak memory compares);
- ``tfsql in-memory, 1 thread``: the files already in memory, framed (both CRCs) and
  decoded into Arrow batches block by block (65,536 records / 16 MiB, as the scanner's
  read chunks give the decoder), batches dropped: file IO excluded;
- ``pure-Python reference``: the same two measurements with ``TFSQL_PURE_PYTHON=1`` on
  the first ``--reference-records`` records of one file (it is ~100x slower);
- ``TF serial`` / ``TF interleave``: TensorFlow's two fastest pipelines on 2 cores,
  ``TFRecordDataset(files).batch(4096).map(parse_example)`` and
  ``from_tensor_slices(files).interleave(TFRecordDataset(f).batch(4096), cycle_length=2,
  num_parallel_calls=2).map(parse_example, num_parallel_calls=2).prefetch(2)`` with
  ``tf.io.parse_example`` and ``FixedLenFeature`` specs (only when TensorFlow imports).

Columns: records/s; MB/s of TFRecord file bytes; peak RSS above the RSS before the
measured work (MiB); ``x ref`` = records/s over the pure-Python reference's (files rows
against its files row, in-memory rows against its in-memory row); ``x TF`` = records/s
over the better TensorFlow pipeline's.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Callable

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
    tensorflow_available,
    worker_main,
)

TF_BATCH = 4096


# --------------------------------------------------------------------------------------
# Workers (each runs in its own process)
# --------------------------------------------------------------------------------------


def scan_run(config: dict) -> Callable[[], dict]:
    """The files-to-Arrow run of a ``scan`` config: ``path``, ``threads``, ``stream``
    (batches dropped) and ``columns`` (None: all) as `tfsql.dataset` takes them."""
    import tfsql
    from tfsql._codec import codec

    columns = config.get("columns")
    ds = tfsql.dataset(config["path"], threads=config["threads"])

    def run() -> dict:
        scanner = ds if columns is None else ds.scanner(columns=columns)
        if config.get("stream"):  # batch by batch, nothing kept (as the TF pipelines do)
            rows = sum(batch.num_rows for batch in scanner.to_batches())
        else:
            rows = scanner.to_table().num_rows
        return {"rows": rows, "backend": codec.__name__}

    return run


def _scan_worker(config: dict) -> dict:
    return measure(scan_run(config), repeat=config["repeat"])


def in_memory_run(config: dict) -> Callable[[], dict]:
    """The in-memory run of an ``in_memory`` config: frame + decode the files of
    ``path``, already read into memory, one thread, block by block; ``columns`` (None:
    all) projects the decoded schema.

    Blocks hold at most 65,536 records and 16 MiB of payload: what the scanner hands the
    decoder, since it reads files in 16 MiB chunks and a block never spans two chunks.
    (Larger blocks are slower on big values: every output buffer above glibc's mmap
    threshold is a fresh mapping that page-faults in.)
    """
    import tfsql
    from tfsql._codec import codec
    from tfsql.decoding import BlockDecoder
    from tfsql.framing import DEFAULT_CHUNK_BYTES, RecordBlock
    from tfsql.schema import column_specs

    import numpy as np
    import pyarrow as pa

    schema = tfsql.infer_schema(config["path"])
    if config.get("columns") is not None:
        schema = pa.schema([schema.field(name) for name in config["columns"]])
    decoder = BlockDecoder(column_specs(schema, codec.EXAMPLE), codec.EXAMPLE)
    buffers = [(f, Path(f).read_bytes()) for f in tfsql.dataset(config["path"]).files]

    def run() -> dict:
        rows = 0
        for path, buf in buffers:
            pos = 0
            while pos < len(buf):
                offsets, lengths, end, status = codec.scan_frames(buf, pos, 65536, DEFAULT_CHUNK_BYTES, True)
                if status != codec.FRAME_OK:
                    raise RuntimeError(f"{path}: frame status {status} at byte {end}")
                block = RecordBlock(
                    memoryview(buf), np.frombuffer(offsets, np.uint64), np.frombuffer(lengths, np.uint64), rows, 0, path
                )
                rows += decoder.decode(block).num_rows
                pos = end
        return {"rows": rows, "backend": codec.__name__}

    return run


def _in_memory_worker(config: dict) -> dict:
    return measure(in_memory_run(config), repeat=config["repeat"])


def _tf_worker(config: dict) -> dict:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf

    features = {
        name: tf.io.FixedLenFeature(list(shape), getattr(tf, dtype))
        for name, (dtype, shape) in _datasets.SPECS[config["dataset"]].tf_features.items()
    }
    files = config["files"]
    first = next(iter(features))

    def parse(records):
        return tf.io.parse_example(records, features)

    def pipeline() -> "tf.data.Dataset":
        if config["pipeline"] == "serial":
            return tf.data.TFRecordDataset(files).batch(TF_BATCH).map(parse)
        return (
            tf.data.Dataset.from_tensor_slices(files)
            .interleave(lambda f: tf.data.TFRecordDataset(f).batch(TF_BATCH), cycle_length=2, num_parallel_calls=2)
            .map(parse, num_parallel_calls=2)
            .prefetch(2)
        )

    def run() -> dict:
        rows = 0
        for batch in pipeline():
            rows += int(batch[first].shape[0])
        return {"rows": rows}

    return measure(run, repeat=config["repeat"])


WORKERS = {"scan": _scan_worker, "in_memory": _in_memory_worker, "tf": _tf_worker}


# --------------------------------------------------------------------------------------
# The driver
# --------------------------------------------------------------------------------------

PURE = {"TFSQL_PURE_PYTHON": "1"}
NATIVE = {"TFSQL_PURE_PYTHON": "0"}


def _row(label: str, result: dict | None, nbytes: int, ref_rate: float | None, tf_rate: float | None) -> list[str]:
    if result is None:
        return [label, "n/a", "n/a", "n/a", "n/a", "n/a", "n/a", "n/a"]
    rate = result["rows"] / result["seconds"]
    peak = result.get("peak_mb")
    return [
        label,
        fmt_int(result["rows"]),
        fmt_float(result["seconds"], 3),
        fmt_rate(rate),
        fmt_float(nbytes / 1e6 / result["seconds"]),
        fmt_float(peak) if peak is not None else "-",
        fmt_ratio(rate / ref_rate) if ref_rate else "n/a",
        fmt_ratio(rate / tf_rate) if tf_rate else "n/a",
    ]


def bench_dataset(name: str, args: argparse.Namespace, script: str) -> str:
    """Measure every configuration on dataset ``name``; return its printed table."""
    data = _datasets.ensure_dataset(name, args.data_dir, args.scale)
    subset = _datasets.subset_dataset(data, args.reference_records[name])
    path, nbytes = str(data.path), data.bytes
    repeat = args.repeat

    native = {
        "t1": run_worker(script, {"kind": "scan", "path": path, "threads": 1, "repeat": repeat}, env=NATIVE),
        "tdef": run_worker(script, {"kind": "scan", "path": path, "threads": None, "repeat": repeat}, env=NATIVE),
        "stream": run_worker(
            script, {"kind": "scan", "path": path, "threads": 1, "stream": True, "repeat": repeat}, env=NATIVE
        ),
        "mem": run_worker(script, {"kind": "in_memory", "path": path, "repeat": repeat}, env=NATIVE),
    }
    reference = {
        "t1": run_worker(script, {"kind": "scan", "path": str(subset.path), "threads": 1, "repeat": 1}, env=PURE),
        "mem": run_worker(script, {"kind": "in_memory", "path": str(subset.path), "repeat": 1}, env=PURE),
    }
    for runs, expected in ((native, "tfsql._native"), (reference, "tfsql._reference")):
        for label, result in runs.items():
            if result["backend"] != expected:
                raise RuntimeError(f"the {label!r} run used {result['backend']}, not {expected}")
    tf_results: dict[str, dict | None] = {"serial": None, "interleave": None}
    if tensorflow_available() and not args.no_tensorflow:
        for pipeline in tf_results:
            tf_results[pipeline] = run_worker(
                script,
                {"kind": "tf", "dataset": name, "files": data.files, "pipeline": pipeline, "repeat": repeat},
            )
    from tfsql.options import default_threads

    tf_rates = [r["rows"] / r["seconds"] for r in tf_results.values() if r]
    tf_best = max(tf_rates) if tf_rates else None
    ref_files = reference["t1"]["rows"] / reference["t1"]["seconds"]
    ref_mem = reference["mem"]["rows"] / reference["mem"]["seconds"]
    sub_bytes = subset.bytes

    rows = [
        _row("tfsql threads=1 (files -> Table)", native["t1"], nbytes, ref_files, tf_best),
        _row(
            f"tfsql threads=default({default_threads()}) (files -> Table)", native["tdef"], nbytes, ref_files, tf_best
        ),
        _row("tfsql threads=1 (files -> batches, dropped)", native["stream"], nbytes, ref_files, tf_best),
        _row(
            "tfsql in-memory, 1 thread (frame+CRC+decode)", {**native["mem"], "peak_mb": None}, nbytes, ref_mem, tf_best
        ),
        _row(f"pure-Python ref threads=1 (first {subset.rows:,})", reference["t1"], sub_bytes, ref_files, tf_best),
        _row(
            f"pure-Python ref in-memory (first {subset.rows:,})",
            {**reference["mem"], "peak_mb": None},
            sub_bytes,
            ref_mem,
            tf_best,
        ),
        _row("TF TFRecordDataset.batch(4096).map(parse)", tf_results["serial"], nbytes, ref_files, tf_best),
        _row(
            "TF interleave(2).batch(4096).map(parse, 2).prefetch", tf_results["interleave"], nbytes, ref_files, tf_best
        ),
    ]
    spec = _datasets.SPECS[name]
    title = (
        f"{name}: {data.rows:,} Examples ({spec.description}), {len(data.files)} files, "
        f"{nbytes / 1e6:,.1f} MB; best of {repeat} (reference: 1 run)"
    )
    headers = ["configuration", "records", "seconds", "records/s", "MB/s", "peak MB", "x ref", "x TF"]
    return title + "\n" + format_table(headers, rows)


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    _datasets.add_common_arguments(parser)
    parser.add_argument("--datasets", default="tabular,vectors,images", help="comma-separated subset")
    parser.add_argument("--repeat", type=int, default=3, help="runs per configuration (best kept); default 3")
    parser.add_argument("--no-tensorflow", action="store_true", help="skip the TensorFlow rows")
    parser.add_argument(
        "--reference-records",
        default="tabular=30000,vectors=10000,images=2000",
        help="records the pure-Python reference decodes, per dataset",
    )
    args = parser.parse_args(argv[1:])
    args.reference_records = {k: int(v) for k, v in (item.split("=") for item in args.reference_records.split(","))}
    script = str(Path(__file__).resolve())
    from tfsql._codec import load_codec

    native = load_codec(pure_python=False)
    print(
        f"# tfsql bench_core: python {sys.version.split()[0]}, {os.cpu_count()} cores, "
        f"hardware CRC={native.hardware_crc()}, TensorFlow "
        f"{'available' if tensorflow_available() and not args.no_tensorflow else 'n/a'}",
        flush=True,
    )
    for name in args.datasets.split(","):
        print("\n" + bench_dataset(name, args, script), flush=True)


if __name__ == "__main__":
    if not worker_main(sys.argv, WORKERS):
        main(sys.argv)
