"""Benchmark of header-only counting (issue 16): ``count_rows`` reads 12 bytes a record.

Run from the repository root (see README.md)::

    python tests/benchmarks/bench_count.py [--data-dir ./bench-data] [--scale 1] [--repeat 5]

On the ``images`` dataset (20,000 records of 20-60 KB in 8 plain files; page cache warm
after the first run) it prints, measured in one process (best of ``--repeat``):

- ``count_rows()`` of the dataset: positioned reads of each record's header only
  (``tfsql.framing.count_plain_records``);
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

    import os

    import tfsql
    from tfsql import _reference
    from tfsql.cli import main as cli_main
    from tfsql.framing import FrameReader
    from tfsql.options import DEFAULT_MAX_RECORD_BYTES

    data = _datasets.ensure_dataset("images", args.data_dir, args.scale)
    files = data.files
    ds = tfsql.dataset(data.path, record_type="bytes")

    def framed() -> int:
        total = 0
        for path in files:
            with open(path, "rb", buffering=0) as raw:
                reader = FrameReader(raw, path=path, verify=False)
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
                total += _reference.count_headers(fd, 0, os.fstat(fd).st_size, DEFAULT_MAX_RECORD_BYTES)[0]
            finally:
                os.close(fd)
        return total

    framed()  # warm the page cache
    runs = {
        "framing (baseline)": _best(framed, args.repeat),
        "count_rows()": _best(ds.count_rows, args.repeat),
        "tfsql count": _best(cli, args.repeat),
        "pure-Python header loop": _best(reference, args.repeat),
    }
    base_seconds = runs["framing (baseline)"][0]
    rows = []
    for name, (seconds, count) in runs.items():
        assert count == data.rows, (name, count, data.rows)
        rows.append([name, fmt_float(seconds * 1e3, 2), fmt_rate(count / seconds), fmt_ratio(base_seconds / seconds)])
    print(f"# images: {data.rows:,} records, {len(files)} files, {data.bytes / 1e6:,.0f} MB; best of {args.repeat}")
    print(format_table(["count", "ms", "records/s", "vs framing"], rows))


if __name__ == "__main__":
    main()
