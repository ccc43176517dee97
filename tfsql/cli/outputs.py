"""Writing a result stream: csv / json (DuckDB's writers; a file or stdout), markdown, parquet,
tfrecord (a directory, or one file); output formats named by file extensions.

Every output is written under a temporary name and renamed on success: a file output is
written as a hidden ``.NAME.tfsql-<uuid>`` in the target's directory (`staged_file`),
TFRecord output is staged by `tfsql.write_tfrecord` itself. An error or Ctrl-C leaves
nothing under the final name (and an existing file as it was), so the rerun works.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import sys
import tempfile
import uuid
from dataclasses import dataclass
from typing import Any, Iterator

import pyarrow as pa

from tfsql.cli.errors import UsageError
from tfsql.cli.options import given_or_default
from tfsql.naming import TFRECORD_SUFFIXES
from tfsql.options import MODES, WRITE_OPTIONS
from tfsql.staging import removed_at_exit

#: How the CLI words a target that stops a mode='error' write (WriteConflictError.reason).
_EXISTS = {"target_exists": "already exists", "target_holds_data": "already holds data"}


@dataclass
class Written:
    """What :func:`write_arrow` wrote: bytes and files (0 and 0 for stdout)."""

    bytes: int
    files: int


@dataclass
class Counter:
    """Rows and batches seen by :func:`counted`."""

    rows: int = 0


def counted(
    reader: pa.RecordBatchReader, counter: Counter, *, limit: int | None = None, progress=None
) -> pa.RecordBatchReader:
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


def write_arrow(reader: pa.RecordBatchReader, fmt: str, output: str | None, options: dict[str, Any]) -> Written:
    """Write a stream as ``fmt`` to ``output`` (stdout for csv and json when None);
    ``options``: :func:`tfsql.write_tfrecord` keyword arguments (see
    :func:`tfsql.cli.options.writer_options`).

    Returns the bytes and the files written (0 and 0 for stdout).
    """
    mode = given_or_default(options, "mode", writing=True)
    if fmt == "tfrecord":
        import tfsql

        if output is None:
            raise UsageError("--format tfrecord writes a directory: pass --output DIR")
        try:
            result = tfsql.write_tfrecord(reader, output, **options)
        except tfsql.WriteConflictError as exc:
            exists = _EXISTS.get(exc.reason or "")
            if mode != "error" or exists is None:
                raise
            # the writer's message names its Python keyword (mode='append'); say --mode
            *others, last = [m for m in MODES if m != "error"]
            raise FileExistsError(
                f"{output} {exists}; pass --mode {', '.join(others)} or {last}, or choose another output"
            ) from None
        except ValueError as exc:
            if isinstance(exc, tfsql.TFSQLError):  # a data error, not a usage error
                raise
            raise UsageError(_as_flags(str(exc))) from None
        return Written(result.bytes, len(result.files))
    if options.get("partition_by"):
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
        return Written(0, 0)
    _check_output_file(output, mode)
    with staged_file(output) as staging:
        _write_file(reader, fmt, staging)
    return Written(os.path.getsize(output), 1)


@contextlib.contextmanager
def staged_file(path: str) -> Iterator[str]:
    """A temporary path beside ``path`` to write to; renamed to ``path`` when the block
    ends normally, removed when it raises (``KeyboardInterrupt`` included) or the
    process ends at a second Ctrl-C.

    Examples
    --------
    >>> import os, tempfile
    >>> out = os.path.join(tempfile.mkdtemp(), "out.csv")
    >>> with staged_file(out) as staging:
    ...     _ = open(staging, "w").write("a\\n1\\n")
    ...     os.path.basename(staging).startswith(".out.csv.tfsql-"), os.path.exists(out)
    (True, False)
    >>> open(out).read()
    'a\\n1\\n'
    """
    directory, name = os.path.split(os.path.abspath(path))
    staging = os.path.join(directory, f".{name}.tfsql-{uuid.uuid4().hex}")
    with removed_at_exit(staging):
        try:
            yield staging
            os.replace(staging, path)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(staging)


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

    from tfsql.duckdb.sqltext import quote_string

    copy_options = {"csv": "FORMAT csv, HEADER", "json": "FORMAT json"}[fmt]
    with contextlib.closing(duckdb.connect()) as scratch:
        scratch.register("tfsql_result", reader)
        scratch.execute(f"COPY tfsql_result TO {quote_string(path)} ({copy_options})")


# The writer's messages name its keywords; the CLI's user knows the flags. Only
# keywords with an underscore are replaced: single words (mode, tfds) occur in prose.
_KEYWORDS = re.compile(
    r"\b(" + "|".join(name for name, option in WRITE_OPTIONS.items() if option.cli and "_" in name) + r")\b"
)


def _as_flags(message: str) -> str:
    """A writer message with its keywords spelled as the CLI's flags.

    >>> _as_flags("num_shards and max_rows_per_file cannot be combined")
    '--num-shards and --max-rows-per-file cannot be combined'
    """
    return _KEYWORDS.sub(lambda m: WRITE_OPTIONS[m.group(1)].cli or m.group(1), message)


def _format_from_extension(path: str | None) -> str | None:
    if not path:
        return None
    name = path.lower().rstrip("/")
    for suffixes, fmt in (
        ((".parquet", ".pq"), "parquet"),
        ((".csv",), "csv"),
        ((".json", ".jsonl", ".ndjson"), "json"),
        ((".md", ".markdown"), "markdown"),
        (TFRECORD_SUFFIXES, "tfrecord"),
    ):
        if name.endswith(suffixes):
            return fmt
    return None
