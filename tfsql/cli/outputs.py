"""Writing a result stream: csv / json (DuckDB's writers; a file or stdout), markdown, parquet,
tfrecord (a directory, or one file); output formats named by file extensions."""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from typing import Iterator

import pyarrow as pa

from tfsql._types import Mode, RecordType, WriteCompression
from tfsql.cli.errors import UsageError
from tfsql.cli.sqlscript import sql_literal
from tfsql.naming import TFRECORD_SUFFIXES


@dataclass
class WriteOptions:
    """Options of file outputs (``sql --format``, ``convert``)."""

    partition_by: list[str] = field(default_factory=list)
    compression: WriteCompression = None
    mode: Mode = "error"
    record_type: RecordType = "example"
    max_rows_per_file: int | None = None
    num_shards: int | None = None
    tfds: str | None = None


@dataclass
class Counter:
    """Rows and batches seen by :func:`counted`."""

    rows: int = 0


def counted(reader: pa.RecordBatchReader, counter: Counter, *, limit: int | None = None,
            progress=None) -> pa.RecordBatchReader:
    """Wrap a reader to count its rows (and stop after ``limit`` rows)."""

    def batches() -> Iterator[pa.RecordBatch]:
        try:
            for batch in reader:
                if limit is not None and counter.rows + batch.num_rows > limit:
                    batch = batch.slice(0, limit - counter.rows)
                counter.rows += batch.num_rows
                if progress is not None:
                    progress.update(batch.num_rows)
                if batch.num_rows:
                    yield batch
                if limit is not None and counter.rows >= limit:
                    return
        finally:
            reader.close()

    return pa.RecordBatchReader.from_batches(reader.schema, batches())


def write_arrow(reader: pa.RecordBatchReader, fmt: str, output: str | None,
                options: WriteOptions) -> int:
    """Write a stream as ``fmt`` to ``output`` (stdout for csv and json when None).

    Returns the bytes written (0 for stdout).
    """
    if fmt == "tfrecord":
        import tfsql

        if output is None:
            raise UsageError("--format tfrecord writes a directory: pass --output DIR")
        try:
            result = tfsql.write_tfrecord(
                reader, output, partition_by=options.partition_by or None, compression=options.compression,
                mode=options.mode, record_type=options.record_type, max_rows_per_file=options.max_rows_per_file,
                num_shards=options.num_shards, tfds=options.tfds,
            )
        except FileExistsError as exc:
            if options.mode != "error" or not ("already holds data" in str(exc) or "already exists" in str(exc)):
                raise
            # the writer's message names its Python keyword (mode='append'); say --mode
            exists = "already holds data" if "already holds data" in str(exc) else "already exists"
            raise FileExistsError(
                f"{output} {exists}; pass --mode append, overwrite, "
                f"overwrite_partitions or ignore, or choose another output"
            ) from None
        except ValueError as exc:
            if isinstance(exc, tfsql.TFSQLError):  # a data error, not a usage error
                raise
            raise UsageError(str(exc).replace("partition_by", "--partition-by")
                             .replace("max_rows_per_file", "--max-rows-per-file")
                             .replace("num_shards", "--num-shards")) from None
        return result.bytes
    if options.partition_by:
        raise UsageError(f"--partition-by works with tfrecord output only, not {fmt}")
    if output is None:
        if fmt == "parquet":
            raise UsageError("--format parquet writes a file: pass --output FILE")
        with tempfile.TemporaryDirectory(prefix="tfsql-") as scratch:
            path = os.path.join(scratch, f"result.{fmt}")
            _write_file(reader, fmt, path)
            with open(path, encoding="utf-8") as f:
                shutil.copyfileobj(f, sys.stdout)
            sys.stdout.flush()
        return 0
    _check_output_file(output, options.mode)
    _write_file(reader, fmt, output)
    return os.path.getsize(output)


def _check_output_file(path: str, mode: str) -> None:
    if mode not in ("error", "overwrite"):
        raise UsageError(f"--mode {mode} applies to tfrecord output; use error or overwrite for a single file")
    if os.path.isdir(path):
        raise UsageError(f"{path} is a directory; pass a file name for this output format")
    if os.path.exists(path) and mode == "error":
        raise FileExistsError(f"{path} already exists; pass --mode overwrite to replace it")


def _write_file(reader: pa.RecordBatchReader, fmt: str, path: str) -> None:
    if fmt == "markdown":
        from tfsql.cli.render import markdown_table

        with open(path, "w", encoding="utf-8") as f:
            f.write(markdown_table(reader.read_all()) + "\n")
        return
    if fmt == "parquet":
        import pyarrow.parquet as pq

        with pq.ParquetWriter(path, reader.schema) as writer:
            for batch in reader:
                writer.write_batch(batch)
        return
    import duckdb

    copy_options = {"csv": "FORMAT csv, HEADER", "json": "FORMAT json"}[fmt]
    with contextlib.closing(duckdb.connect()) as scratch:
        scratch.register("tfsql_result", reader)
        scratch.execute(f"COPY tfsql_result TO {sql_literal(path)} ({copy_options})")


def _write_options(args: argparse.Namespace) -> WriteOptions:
    return WriteOptions(
        partition_by=[c.strip() for c in (args.partition_by or "").split(",") if c.strip()],
        compression=None if args.compression in (None, "none") else args.compression,
        mode=args.mode,
        record_type=args.record_type,
        max_rows_per_file=getattr(args, "max_rows_per_file", None),
        num_shards=getattr(args, "num_shards", None),
        tfds=getattr(args, "tfds", None),
    )


def _format_from_extension(path: str | None) -> str | None:
    if not path:
        return None
    name = path.lower().rstrip("/")
    for suffixes, fmt in (((".parquet", ".pq"), "parquet"), ((".csv",), "csv"),
                          ((".json", ".jsonl", ".ndjson"), "json"), ((".md", ".markdown"), "markdown"),
                          (TFRECORD_SUFFIXES, "tfrecord")):
        if name.endswith(suffixes):
            return fmt
    return None
