"""Benchmark of scale (issue 34, items 7 and 9): one record with very many feature keys,
and very many small files, read by every front end; ratios against the DuckDB extension.

Run from the repository root (see README.md)::

    python tests/benchmarks/bench_scale.py            # small: 20,000 keys, 2,000 files
    python tests/benchmarks/bench_scale.py --full     # the issue's sizes: 1,000,000 of each
    python tests/benchmarks/bench_scale.py --keys 200000 --files 0
    nice python tests/benchmarks/bench_scale.py --keys 1000000 --files 100000  # medium

Cases, each front end in a fresh subprocess (its own peak RSS, see _measure.py):

- ``wide``: one Example whose features are ``f0 .. f<K-1>``, one int64 each (20 MB at
  K = 1,000,000), read whole: the extension (``SELECT * FROM tfrecord_scan``, fetched as
  Arrow; DuckDB's binding of that many columns grows faster than linearly, so its
  ``SELECT count(*)`` is shown too), ``tfsql.read_tfrecord``, Polars
  ``scan_tfrecord(...).collect()``;
- ``files``: N files of one small Example each in one directory: the extension's
  ``SELECT *`` (fetched as Arrow), ``count(*)`` and ``tfrecord_metadata``,
  ``tfsql.dataset(...).count_rows()``, ``read_tfrecord`` and Polars (listing, opening
  each file and its schema work included).

Printed: wall seconds, CPU seconds (every thread's), peak MB (above the RSS after
imports) and the ratio of each to the base row (the extension's ``count(*)`` for the
wide record, its ``SELECT *`` for many files), with the load average when each row
finished (the machine may be shared: CPU seconds vary less than wall seconds; nothing
asserts a time). A front end still running after ``--timeout`` seconds is stopped and
shown as such; ``--fronts`` runs some of them.

Measured (issue 34 item 7, the wide record; 2 cores shared with other jobs; CPU seconds
vary less with the load than wall seconds, and grow with it: the extension's count(*)
took 5.54 CPU s at load 4-6, 7.19 at load 7). "b806d9f -> fe22ceb" was the previous
round (the V2 build's column types made once per distinct type, the decoded batch's Arrow
hand-over in one allocation); "now" is branch polars34 (Polars takes the decoded struct
through the Arrow PyCapsule interface; a piece's builders made only when it holds a
record; no pyarrow ``nbytes`` or per-column tuples per batch; specs and Polars types read
in bulk)::

    keys       front end           b806d9f: s  CPU s    MB  fe22ceb: s  CPU s    MB   now: s  CPU s    MB  load
    100,000    extension count(*)      12.00   6.87     43        0.56   0.42     43     1.14   0.55     45   6.7
    100,000    read_tfrecord            3.53   1.74    177        1.96   1.43    155     2.12   1.00    161   6.7
    100,000    polars                   7.43   3.60    371        4.89   3.23    349     3.75   1.79    322   7.1
    1,000,000  extension count(*)     143.74  78.52    409        9.70   5.54    409    15.30   7.19    409   7.0
    1,000,000  read_tfrecord           46.41  23.90  2,019       35.29  18.40  1,654    31.78  14.54  1,431   7.0
    1,000,000  polars                  99.26  56.99  3,239       82.13  45.12  3,047    41.99  19.55  2,632   7.5

At a million keys ``read_tfrecord`` now takes 2.0x the extension's count(*) CPU time
(was 3.3x) and 3.5x its memory (4.0x); Polars 2.7x (8.2x) and 6.4x (7.5x). What is
left, measured at a million keys: opening the dataset (about 6 CPU s: inference's
per-column columns and the pa.Schema, ~1.2-1.8 us a field however it is built, the Arrow
C schema interface included: pyarrow imports a million-field C schema in 1.8 s; then the
column specs), pyarrow's import of the decoded struct (~2.3 us a column) and, for
Polars, its own import (4-6 us and ~2 KB a column) and its declared schema. Memory has a
floor above 2x: the pyarrow table of a million one-row columns is ~800 MB and the
dataset's schema and specs ~400 MB; a Polars frame alone is ~2 GB. The extension's
``SELECT *`` is DuckDB's binder (the v1 build takes as long) and does not finish at a
million keys.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _measure import fmt_float, fmt_ratio, format_table, measure, run_worker, worker_main  # noqa: E402
from tfrecord_files import frame  # noqa: E402
from wire import ld, varint  # noqa: E402


def _example(features: dict[str, int]) -> bytes:
    """An Example of int64 features, written by hand (protobuf's encoder would take
    minutes for a million keys)."""
    entries = b"".join(
        ld(1, ld(1, name.encode()) + ld(2, ld(3, ld(1, varint(value))))) for name, value in features.items()
    )
    return ld(1, entries)  # Example.features -> Features.feature (map entries)


def make_wide(directory: Path, keys: int) -> str:
    path = directory / f"wide-{keys}.tfrecord"
    if not path.exists():
        tmp = path.with_suffix(".tmp")
        tmp.write_bytes(frame(_example({f"f{i}": i for i in range(keys)})))
        tmp.rename(path)
    return str(path)


def make_files(directory: Path, files: int) -> str:
    root = directory / f"files-{files}"
    stamp = root / ".complete"
    if not stamp.exists():
        root.mkdir(parents=True, exist_ok=True)
        for i in range(files):
            (root / f"part-{i:07d}.tfrecord").write_bytes(frame(_example({"id": i, "label": i % 7})))
        stamp.write_text("")
    return str(root)


# -- the workers (one front end each, in a fresh process) -------------------------------


def _extension():
    import duckdb

    import tfsql

    return tfsql.load_extension(duckdb.connect(config={"allow_unsigned_extensions": "true"}))


def _arrow_shape(result) -> tuple[int, int]:
    table = result if hasattr(result, "num_columns") else result.read_all()
    return table.num_rows, table.num_columns


def _work(config: dict) -> dict:
    path, front = config["path"], config["front"]
    import polars  # noqa: F401  (imports and the extension's loading are not measured)

    import tfsql
    import tfsql.polars  # noqa: F401

    con = _extension() if front.startswith("extension") or front == "tfrecord_metadata" else None
    scan = f"tfrecord_scan('{path}')" if config["case"] == "wide" else f"tfrecord_scan('{path}/*.tfrecord')"

    def run() -> dict:
        cpu = time.process_time()  # every thread's (DuckDB's and the decode threads' too)
        result = shape()
        return {**result, "cpu": time.process_time() - cpu}

    def shape() -> dict:
        if front == "extension":
            rows, columns = _arrow_shape(con.sql(f"SELECT * FROM {scan}").arrow())
            return {"rows": rows, "columns": columns}
        if front == "extension count(*)":
            return {"rows": con.sql(f"SELECT count(*) FROM {scan}").fetchall()[0][0]}
        if front == "tfrecord_metadata":
            return {"rows": con.sql(f"SELECT count(*) FROM tfrecord_metadata('{path}/*.tfrecord')").fetchall()[0][0]}
        if front == "count_rows":
            return {"rows": tfsql.dataset(path).count_rows()}
        if front == "read_tfrecord":
            table = tfsql.read_tfrecord(path)
            return {"rows": table.num_rows, "columns": table.num_columns}
        if front == "polars":
            collected = tfsql.scan_tfrecord(path).collect()
            return {"rows": collected.height, "columns": collected.width}
        raise ValueError(front)

    return measure(run, repeat=config["repeat"])


FRONTS = {
    "wide": ["extension", "extension count(*)", "read_tfrecord", "polars"],
    "files": ["extension", "extension count(*)", "tfrecord_metadata", "count_rows", "read_tfrecord", "polars"],
}


#: The row the ratios divide by: the extension's SELECT * for many files; for the wide
#: record its count(*) (its SELECT * does not finish at a million keys: DuckDB's binder).
BASE = {"wide": "extension count(*)", "files": "extension"}


def _load() -> str:
    return f"{os.getloadavg()[0]:.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data-dir", default="./bench-data")
    parser.add_argument("--full", action="store_true", help="1,000,000 keys and 1,000,000 files")
    parser.add_argument("--keys", type=int, default=None, help="feature keys of the wide record (default 20,000)")
    parser.add_argument("--files", type=int, default=None, help="small files (default 2,000)")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=1800, help="seconds a front end may take (default 1800)")
    parser.add_argument(
        "--fronts",
        default=None,
        help="comma-separated front ends to run (default: all; e.g. 'extension count(*),read_tfrecord,polars' "
        "at a million keys, where the extension's SELECT * does not finish)",
    )
    args = parser.parse_args()
    keys = args.keys if args.keys is not None else (1_000_000 if args.full else 20_000)
    files = args.files if args.files is not None else (1_000_000 if args.full else 2_000)
    directory = Path(args.data_dir) / "scale"
    directory.mkdir(parents=True, exist_ok=True)
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    cases = []
    if keys:
        cases.append(("wide", f"one record, {keys:,} keys", make_wide(directory, keys)))
    if files:
        start = time.perf_counter()
        cases.append(("files", f"{files:,} files", make_files(directory, files)))
        print(f"(files ready in {time.perf_counter() - start:.1f} s)")
    for case, title, path in cases:
        results = []  # (front, result or the error's last line, load when it ended)
        fronts = FRONTS[case] if args.fronts is None else [f for f in FRONTS[case] if f in args.fronts.split(",")]
        for front in fronts:
            config = {"kind": "work", "case": case, "front": front, "path": path, "repeat": args.repeat}
            try:
                results.append((front, run_worker(__file__, config, timeout=args.timeout), _load()))
            except RuntimeError as exc:
                results.append((front, str(exc).strip().splitlines()[-1][:60], _load()))
        base = next((r for f, r, _ in results if f == BASE[case] and isinstance(r, dict)), None)
        rows = []
        for front, result, load in results:
            if not isinstance(result, dict):
                rows.append([front, "failed", "", "", "", "", "", load, result])
                continue
            rows.append(
                [
                    front,
                    fmt_float(result["seconds"], 2),
                    fmt_float(result["cpu"], 2),
                    fmt_float(result["peak_mb"], 0),
                    fmt_ratio(result["seconds"] / base["seconds"]) if base and base["seconds"] else "n/a",
                    fmt_ratio(result["cpu"] / base["cpu"]) if base and base["cpu"] else "n/a",
                    fmt_ratio(result["peak_mb"] / base["peak_mb"]) if base and base["peak_mb"] else "n/a",
                    load,
                    f"{result.get('rows', '')} x {result['columns']}" if "columns" in result else str(result["rows"]),
                ]
            )
        print(f"\n{title}")
        headers = [
            "front end",
            "seconds",
            "CPU s",
            "peak MB",
            "time / base",
            "CPU / base",
            "memory / base",
            "load",
            "rows x columns",
        ]
        print(format_table(headers, rows))
    print(f"\nload average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    if not worker_main(sys.argv, {"work": _work}):
        main()
