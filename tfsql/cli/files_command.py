"""``tfsql files PATH``: the TFRecord files a path names, with their size, compression,
partition values, split and record count: the DuckDB extension's ``tfrecord_metadata``.

Record counts come from valid index sidecars (``tfsql index``); ``--count`` walks the
record headers of the other files (decompressing compressed ones).
"""

from __future__ import annotations

import argparse
import json

from tfsql.cli.console import Console
from tfsql.cli.errors import EXIT_OK, UsageError
from tfsql.cli.render import format_table


def metadata_rows(path: str, count: bool) -> list[dict]:
    """``tfrecord_metadata(path, count := count)`` through `tfsql.connect()`, as dicts.

    Examples
    --------
    >>> import os, tempfile, pyarrow as pa, tfsql
    >>> out = os.path.join(tempfile.mkdtemp(), "d")
    >>> _ = tfsql.write_tfrecord(pa.table({"x": [1, 2, 3]}), out)
    >>> [(r["compression"], r["records"]) for r in metadata_rows(out, count=True)]
    [('none', 3)]
    """
    import tfsql
    from tfsql.duckdb.extension import ExtensionNotAvailable

    try:
        con = tfsql.connect()
    except ExtensionNotAvailable:
        raise UsageError(
            "tfsql files reads tfrecord_metadata from tfsql's DuckDB extension, which this "
            "installation does not have (see tfsql extension-path); tfsql count --per-file "
            "counts records without it"
        ) from None
    try:
        relation = con.sql("SELECT * FROM tfrecord_metadata(?, count := ?) ORDER BY file", params=[path, count])
        names = relation.columns
        return [dict(zip(names, row)) for row in relation.fetchall()]
    finally:
        con.close()


def cmd_files(args: argparse.Namespace, console: Console) -> int:
    """``tfsql files PATH [--count] [--json]``."""
    rows = metadata_rows(args.path, args.count)
    if args.json:
        for row in rows:
            console.out(json.dumps(row))
        return EXIT_OK

    def partitions(row: dict) -> str:
        return "/".join(f"{k}={v}" for k, v in (row["partitions"] or {}).items())

    table = [
        [
            row["file"],
            f"{row['size']:,}",
            row["compression"],
            partitions(row),
            row["split"] or "",
            "" if row["records"] is None else f"{row['records']:,} ({row['records_source']})",
        ]
        for row in rows
    ]
    console.out(format_table(["file", "bytes", "compression", "partitions", "split", "records"], table))
    known = [row["records"] for row in rows if row["records"] is not None]
    total = f"{sum(known):,} records" if len(known) == len(rows) else "records: --count counts them all"
    console.out(f"\n{len(rows)} file{'' if len(rows) == 1 else 's'}, {sum(r['size'] for r in rows):,} bytes, {total}")
    return EXIT_OK
