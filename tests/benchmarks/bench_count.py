"""Benchmark of header-only counting (issue 16): ``count_rows`` reads 12 bytes a record.

Run from the repository root (see README.md)::

    python tests/benchmarks/bench_count.py [--data-dir ./bench-data] [--scale 1] [--repeat 5]

On the ``images`` dataset (20,000 records of 20-60 KB in 8 plain files) and the
``tabular`` one (1,000,000 records of ~230 bytes; page cache warm after the first run)
it prints, measured in one process (best of ``--repeat``):

- ``count_rows()`` of the dataset: positioned reads of the record headers only
  (``tfsql.framing.count_plain_records``; after a record under 4 KiB a read takes
  64 KiB, so small records cost a fraction of a read each);
- ``count_rows()`` with index sidecars (``tfsql index``, :mod:`tfsql.record_index`):
  hard links to the files, each with its ``.<name>.idx``; the files are not read
  beyond one header each;
- ``tfsql count`` run in the same process (``tfsql.cli.main``), summary line off;
- the baseline: framing every record as the previous ``count_rows`` did (the files read
  in chunks and each header found in memory, data CRCs not checked);
- the pure-Python header loop (``tfsql._reference.count_headers``), for scale.

The table gives records/s and the ratio to the baseline.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import _datasets  # noqa: E402
from _measure import fmt_float, fmt_rate, fmt_ratio, format_table  # noqa: E402


def _best(fn, repeat: int) -> tuple[float, int]:
    best, result = float("inf"), 0
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return best, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    _datasets.add_common_arguments(parser)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    import tfsql
    from tfsql import _reference
    from tfsql.cli import main as cli_main
    from tfsql.framing import FrameReader
    from tfsql.options import DEFAULT_MAX_RECORD_BYTES

    for name in ("images", "tabular"):
        data = _datasets.ensure_dataset(name, args.data_dir, args.scale)
        indexed = _datasets.indexed_copy(data)
        print(_table(data, indexed, args.repeat, tfsql, _reference, cli_main, DEFAULT_MAX_RECORD_BYTES, FrameReader))
        print()


def _table(data, indexed, repeat, tfsql, _reference, cli_main, max_record_bytes, frame_reader) -> str:
    import os

    files = data.files
    ds = tfsql.dataset(data.path, record_type="bytes")

    def framed() -> int:
        total = 0
        for path in files:
            with open(path, "rb", buffering=0) as raw:
                reader = frame_reader(raw, path=path, verify=False)
                total += sum(len(block) for block in reader.blocks(max_records=1 << 20, max_bytes=-1))
        return total

    def cli() -> int:
        with contextlib.redirect_stdout(io.StringIO()) as out:
            cli_main(["count", "-q", str(data.path)])
        return int(out.getvalue().split()[0].replace(",", ""))

    def reference() -> int:
        total = 0
        for path in files:
            fd = os.open(path, os.O_RDONLY)
            try:
                total += _reference.count_headers(fd, 0, os.fstat(fd).st_size, max_record_bytes)[0]
            finally:
                os.close(fd)
        return total

    framed()  # warm the page cache
    runs = {
        "framing (baseline)": _best(framed, repeat),
        "count_rows()": _best(ds.count_rows, repeat),
        "count_rows() with index sidecars": _best(tfsql.dataset(indexed.path, record_type="bytes").count_rows, repeat),
        "tfsql count": _best(cli, repeat),
    }
    if data.rows <= 100_000:
        runs["pure-Python header loop"] = _best(reference, repeat)
    base_seconds = runs["framing (baseline)"][0]
    rows = []
    for label, (seconds, count) in runs.items():
        assert count == data.rows, (label, count, data.rows)
        rows.append([label, fmt_float(seconds * 1e3, 2), fmt_rate(count / seconds), fmt_ratio(base_seconds / seconds)])
    load = os.getloadavg()[0]
    return (
        f"# {data.name}: {data.rows:,} records, {len(files)} files, {data.bytes / 1e6:,.0f} MB; best of {repeat}; "
        f"load average {load:.1f}\n"
    ) + format_table(["count", "ms", "records/s", "vs framing"], rows)


if __name__ == "__main__":
    main()
