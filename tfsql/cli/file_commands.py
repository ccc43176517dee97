"""The commands on TFRecord files: ``schema``, ``head``, ``count``, ``convert`` and ``demo``
(``verify`` has its own module, :mod:`tfsql.cli.verify`)."""

from __future__ import annotations

import argparse
import json
import os
import time

from tfsql.cli.console import Console
from tfsql.cli.errors import EXIT_OK, UsageError
from tfsql.cli.formats import source_format as detect_source_format
from tfsql.cli.inputs import _file_size, _open_dataset, _open_files
from tfsql.cli.options import convert_input_options, dataset_options, given_or_default, writer_options
from tfsql.cli.outputs import Counter, _format_from_extension, counted, write_arrow
from tfsql.cli.render import feature_kind, format_table, format_value, type_name


def cmd_schema(args: argparse.Namespace, console: Console) -> int:
    """``tfsql schema PATH``."""
    ds = _open_dataset(args.path, args)
    record_type = given_or_default(dataset_options(args), "record_type")
    partition_names = set(ds.partition_schema.names)
    columns = [
        {
            "name": f.name,
            "type": type_name(f.type) + ("" if f.nullable else " not null"),
            "feature": "hive partition"
            if f.name in partition_names
            else ("raw record" if record_type == "bytes" else feature_kind(f.type)),
            "partition": f.name in partition_names,
        }
        for f in ds.schema
    ]
    if args.json:
        console.out(json.dumps({"record_type": record_type, "files": len(ds.files), "columns": columns}, indent=2))
        return EXIT_OK
    console.out(format_table(["column", "type", "feature"], [[c["name"], c["type"], c["feature"]] for c in columns]))
    n = len(ds.files)
    console.out(
        f"\n{len(columns)} columns ({len(partition_names)} from partition directories), "
        f"{n} file{'' if n == 1 else 's'}, record type {record_type}"
    )
    return EXIT_OK


def cmd_head(args: argparse.Namespace, console: Console) -> int:
    """``tfsql head PATH -n 5``."""
    if args.n < 0:
        raise UsageError("-n must be >= 0")
    ds = _open_dataset(args.path, args)
    columns = [c.strip() for c in args.columns.split(",")] if args.columns else None
    if columns:
        unknown = [c for c in columns if c not in ds.schema.names]
        if unknown:
            raise UsageError(f"no column {unknown[0]!r}; the columns are {', '.join(ds.schema.names)}")
    table = ds.head(args.n, columns=columns)
    if args.format != "table":
        write_arrow(table.to_reader(), args.format, None, {})
        return EXIT_OK
    names = table.column_names
    width = max((len(n) for n in names), default=0)
    for i, record in enumerate(table.to_pylist()):
        console.out(f"{'' if i == 0 else chr(10)}-- record {i} --")
        for name in names:
            console.out(f"{name.ljust(width)}  {format_value(record[name], max_chars=args.max_chars)}")
    if table.num_rows == 0:
        console.note("(no records)")
    return EXIT_OK


def cmd_count(args: argparse.Namespace, console: Console) -> int:
    """``tfsql count PATH``: record headers only, no decoding."""
    started = time.perf_counter()
    ds = _open_files(args.path, args)
    fragments = ds.get_fragments()
    total = nbytes = 0
    rows: list[tuple[int, str]] = []
    with console.progress(total=len(fragments), unit=" files", desc="count") as bar:
        for fragment in fragments:
            n = fragment.count_rows()
            total += n
            nbytes += _file_size(fragment.path)
            rows.append((n, fragment.path))
            bar.update(1)
    if args.per_file:
        width = len(f"{total:,}")
        for n, path in rows:
            console.out(f"{n:>{width},}  {path}")
        console.out(f"{total:>{width},}  total")
    else:
        console.out(str(total))
    console.summary(
        files=len(fragments), records=total, nbytes=nbytes, seconds=time.perf_counter() - started, verb="counted"
    )
    return EXIT_OK


def cmd_convert(args: argparse.Namespace, console: Console) -> int:
    """``tfsql convert SRC DST``."""
    import pyarrow.dataset as pads

    import tfsql

    started = time.perf_counter()
    source_format = detect_source_format(args.src, args.source_format)
    total = None  # rows, for the progress bar, when cheap to know
    target_format = args.to or _format_from_extension(args.dst) or "tfrecord"
    written = writer_options(args)
    if source_format == "tfrecord":
        ds = tfsql.dataset(args.src, **convert_input_options(args))
        n_files, reader = len(ds.files), ds.scanner().to_reader()
    else:
        if not os.path.exists(args.src) and not any(ch in args.src for ch in "*?["):
            raise FileNotFoundError(f"no such file or directory: {args.src}")
        source = pads.dataset(args.src, format=source_format, partitioning="hive")
        n_files, reader = len(source.files), source.scanner().to_reader()
        if source_format == "parquet" and console.shows_progress:
            total = source.count_rows()  # from the files' footers: cheap
    if target_format != "tfrecord" and written.get("compression") is not None:
        raise UsageError(f"--compression applies to tfrecord output, not {target_format}")
    counter = Counter()
    with console.progress(unit=" rows", unit_scale=True, desc="convert", total=total) as bar:
        output = write_arrow(counted(reader, counter, progress=bar), target_format, args.dst, written)
    read = f"{n_files:,} {source_format} file{'' if n_files == 1 else 's'}"
    console.summary(
        files=output.files,
        records=counter.rows,
        nbytes=output.bytes,
        seconds=time.perf_counter() - started,
        verb=f"converted {read} -> {target_format} {args.dst}:",
    )
    return EXIT_OK


def cmd_demo(args: argparse.Namespace, console: Console) -> int:
    """``tfsql demo [DIR]``."""
    from tfsql.demo import run_demo

    run_demo(args.directory, rows=args.rows, seed=args.seed, echo=console.out)
    return EXIT_OK
