"""Writing Polars frames as TFRecord: ``df.tfrecord.write`` and ``lf.tfrecord.sink``.

:func:`write_frame` shares a DataFrame's buffers with Arrow and converts a slice at a
time, and
:func:`sink_frame` runs a LazyFrame on Polars' streaming engine; both hand the batches
to :func:`tfsql.write_tfrecord`. ``sink_parquet``'s ways of writing work too:
``pl.PartitionBy`` targets (:func:`partition_target`) and ``lazy=True``
(:func:`deferred`).

A :class:`polars.PartitionBy` becomes :func:`tfsql.write_tfrecord` options: its
``key`` columns (or expressions, computed first) become ``partition_by``, its
``max_rows_per_file`` and ``approximate_bytes_per_file`` the writer's
``max_rows_per_file`` and ``max_bytes_per_file``. Keys are written as hive
``key=value`` directories only, never inside the records (TFRecord readers, tfsql's and
Spark's, restore them from the directories), so ``include_key=True`` raises; Polars'
default ``None`` writes them into Parquet files too. A ``file_path_provider`` raises:
file names come from the writer (``filename_pattern=``).

Examples
--------
>>> import polars as pl
>>> lf = pl.LazyFrame({"a": [1, 1, 2], "b": [3, 4, 5]})
>>> lf2, path, options = partition_target(lf, pl.PartitionBy("out", key="a", max_rows_per_file=10), {})
>>> path, options
('out', {'partition_by': ['a'], 'max_rows_per_file': 10})
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Iterator

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc

from tfsql.writer import WriteResult, write_tfrecord

__all__ = ["write_frame", "sink_frame", "partition_target", "deferred", "WRITE_CHUNK_ROWS"]

#: Rows converted to Arrow at once by the writer namespaces.
WRITE_CHUNK_ROWS = 65_536
#: Bytes of string and binary values converted at once (a larger value alone).
WRITE_CHUNK_BYTES = 64 << 20

_NO_LIMIT = (1 << 64) - 1  # PartitionBy's approximate_bytes_per_file when "auto" / None


def partition_target(lf: Any, path: Any, options: dict[str, Any]) -> tuple[Any, Any, dict[str, Any]]:
    """``(frame, target directory, writer options)`` for a sink ``path`` that may be a
    :class:`polars.PartitionBy` (anything else passes through)."""
    partition_by_class = getattr(pl, "PartitionBy", None)
    if partition_by_class is None or not isinstance(path, partition_by_class):
        return lf, path, options
    inner = getattr(path, "_pl_partition_by", None)
    if inner is None:
        raise TypeError("this Polars' PartitionBy is not understood by tfsql; pass partition_by= and a directory")
    if inner.file_path_provider is not None:
        raise ValueError(
            "PartitionBy(file_path_provider=...) is not supported: tfsql names the files; "
            "pass filename_pattern= (e.g. 'train_{i}') to choose their names"
        )
    if inner.include_key:
        raise ValueError(
            "PartitionBy(include_key=True) is not supported: tfsql writes partition keys as hive "
            "key=value directories only (readers restore them as columns); leave include_key unset"
        )
    out = dict(options)
    for option in ("partition_by", "max_rows_per_file", "max_bytes_per_file"):
        if option in out:
            raise ValueError(f"{option}= and a pl.PartitionBy target both say how to split files: use one")
    keys = [pl.Expr._from_pyexpr(e) for e in (inner.key or [])]
    if keys:
        computed = [e for e in keys if not e.meta.is_column()]
        if computed:
            lf = lf.with_columns(computed)
        out["partition_by"] = [e.meta.output_name() for e in keys]
    if inner.max_rows_per_file not in (None, _NO_LIMIT):
        out["max_rows_per_file"] = int(inner.max_rows_per_file)
    if inner.approximate_bytes_per_file not in (None, _NO_LIMIT):
        out["max_bytes_per_file"] = int(inner.approximate_bytes_per_file)
    return lf, str(inner.base_path), out


def deferred(write: Callable[[], Any]) -> pl.LazyFrame:
    """A LazyFrame that runs ``write()`` (returning a :class:`tfsql.WriteResult`) when
    collected, and holds one row per written file: ``path``, ``rows``, ``bytes``
    (``sink_parquet(lazy=True)``'s frame is empty; collect either with
    ``pl.collect_all``)."""
    schema = {"path": pl.String, "rows": pl.Int64, "bytes": pl.Int64}

    def run() -> pl.DataFrame:
        result = write()
        return pl.DataFrame(
            {"path": result.paths, "rows": [f.rows for f in result.files], "bytes": [f.bytes for f in result.files]},
            schema=schema,
        )

    return pl.defer(run, schema=schema)


def _arrow_reader(schema: pl.Schema, frames: Iterable[pl.DataFrame]) -> pa.RecordBatchReader:
    """A lazy RecordBatchReader over Polars frames, converted a slice at a time.

    Each frame is exported through the Arrow C stream interface, which shares Polars'
    buffers (``DataFrame.to_arrow`` copies them, and ``DataFrame.slice`` can compact a
    frame's string views into a new buffer: each about once more the frame's size);
    its batches are cut into slices of at most :data:`WRITE_CHUNK_ROWS` rows (Arrow
    slices share buffers too), and a slice is converted to offset-based types (a copy
    of its own values only) just before the writer takes it. A slice also holds at most
    :data:`WRITE_CHUNK_BYTES` of string and binary values, or one row. So beyond the
    frame, what this costs is one slice's values at a time: for a frame holding huge
    strings, about once the largest."""
    from tfsql.writer.inputs import offset_based_batch, offset_based_schema

    check_storable(schema)
    arrow = offset_based_schema(pl.DataFrame(schema=schema).to_arrow().schema)

    def batches() -> Iterator[pa.RecordBatch]:
        for frame in frames:
            shared = pa.RecordBatchReader.from_stream(frame)
            del frame  # the batches keep what they need of its buffers
            for batch in shared:
                for start, stop in _slice_bounds(batch):
                    # (a row alone, whose strings may be huge, is converted without a copy)
                    yield offset_based_batch(batch.slice(start, stop - start), arrow)

    return pa.RecordBatchReader.from_batches(arrow, batches())


def check_storable(schema: pl.Schema) -> None:
    """Raise `tfsql.SchemaError` for a column no TFRecord feature can store as it is:
    a Polars ``Object`` column (Polars hands it to Arrow as 8-byte pointers, which would be
    written as those bytes), also inside a List, Array or Struct.

    Examples
    --------
    >>> check_storable(pl.Schema({"x": pl.Int64, "s": pl.List(pl.String)}))
    >>> check_storable(pl.Schema({"o": pl.List(pl.Object)}))
    Traceback (most recent call last):
    tfsql.errors.SchemaError: column 'o' holds Python objects (Polars Object), which no TFRecord feature can store: convert it first, e.g. pl.col('o').map_elements(str, return_dtype=pl.String) for their text or map_elements(pickle.dumps, return_dtype=pl.Binary) for their bytes, or drop it
    """
    from tfsql.errors import SchemaError

    for name, dtype in schema.items():
        if _holds_objects(dtype):
            raise SchemaError(
                f"column {name!r} holds Python objects (Polars Object), which no TFRecord feature can "
                f"store: convert it first, e.g. pl.col({name!r}).map_elements(str, return_dtype=pl.String) "
                "for their text or map_elements(pickle.dumps, return_dtype=pl.Binary) for their bytes, "
                "or drop it",
                feature=name,
            )


def _holds_objects(dtype: Any) -> bool:
    if dtype == pl.Object:
        return True
    inner = getattr(dtype, "inner", None)
    if inner is not None and _holds_objects(inner):
        return True
    return any(_holds_objects(f.dtype) for f in getattr(dtype, "fields", None) or ())


def _slice_bounds(batch: pa.RecordBatch) -> Iterator[tuple[int, int]]:
    """Row ranges ``[start, stop)`` cutting ``batch`` into slices of at most
    :data:`WRITE_CHUNK_ROWS` rows and :data:`WRITE_CHUNK_BYTES` of top-level string and
    binary values (a row over that alone).

    Examples
    --------
    >>> list(_slice_bounds(pa.record_batch({"s": ["x" * (40 << 20), "y", "z" * (40 << 20)]})))
    [(0, 2), (2, 3)]
    """
    sizes = np.zeros(batch.num_rows, dtype=np.int64)
    for column in batch.columns:
        sizes += _value_sizes(column)
    ends = np.cumsum(sizes)
    start = 0
    while start < batch.num_rows:
        # the rows whose values end within WRITE_CHUNK_BYTES of the slice's start
        base = ends[start - 1] if start else 0
        fit = int(np.searchsorted(ends, base + WRITE_CHUNK_BYTES, side="right"))
        stop = min(max(fit, start + 1), start + WRITE_CHUNK_ROWS, batch.num_rows)
        yield start, stop
        start = stop


def _value_sizes(column: pa.Array) -> np.ndarray | int:
    """Each row's bytes in a string or binary column (0 for nulls), read from its
    offsets or views without touching the values; 0 for other columns."""
    t = column.type
    if t in (pa.string_view(), pa.binary_view()):
        # each view is 16 bytes starting with its value's int32 length
        views = np.frombuffer(column.buffers()[1], dtype=np.int32)[::4]
        sizes = views[column.offset : column.offset + len(column)].astype(np.int64)
    elif pa.types.is_string(t) or pa.types.is_binary(t) or pa.types.is_large_string(t) or pa.types.is_large_binary(t):
        sizes = pc.binary_length(column).to_numpy(zero_copy_only=False).astype(np.int64)
    else:
        return 0
    if column.null_count:
        sizes[column.is_null().to_numpy(zero_copy_only=False)] = 0
    return sizes


def write_frame(df: pl.DataFrame, path: Any, *, progress: bool = False, **options: Any) -> WriteResult:
    """Write a DataFrame as TFRecord files with :func:`tfsql.write_tfrecord`.

    The frame is shared with Arrow (no copy) and converted ``65536`` rows at a time. Reading the files back
    gives the same rows; types may widen (integers and booleans to Int64, floats to
    Float32, Array to List, partition columns to Int64/String) unless
    ``scan_tfrecord(path, schema=df.schema)`` names them.

    Parameters
    ----------
    df : polars.DataFrame
    path : str or path-like
        Target directory.
    **options
        Any keyword option of :func:`tfsql.write_tfrecord` (``partition_by``,
        ``compression``, ``mode``, ``max_rows_per_file``, ``num_shards``...).

    Returns
    -------
    tfsql.WriteResult

    Examples
    --------
    >>> import tempfile, polars as pl
    >>> path = tempfile.mkdtemp() + "/out"
    >>> write_frame(pl.DataFrame({"x": [1, 2]}), path).rows
    2
    """
    reader = _arrow_reader(df.schema, [df])
    # The writer's bar counts rows once their bytes are in their file (compressed ones
    # included); the frame knows its rows, so the bar has a total.
    return write_tfrecord(_KnownRows(reader, df.height), path, progress=progress, **options)


class _KnownRows:
    """An Arrow stream whose row count is known before it is read (`num_rows`, which
    `tfsql.progress.input_rows` takes as the bar's total)."""

    def __init__(self, reader: pa.RecordBatchReader, num_rows: int) -> None:
        self.reader = reader
        self.num_rows = num_rows

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        return self.reader.__arrow_c_stream__(requested_schema)


def sink_frame(lf: pl.LazyFrame, path: Any, *, chunk_size: int = WRITE_CHUNK_ROWS, **options: Any) -> WriteResult:
    """Run a LazyFrame on Polars' streaming engine and write its result as TFRecord.

    Batches of about ``chunk_size`` rows go straight to :func:`tfsql.write_tfrecord`
    (``LazyFrame.collect_batches``), so memory stays bounded by the batch size and the
    open files, not by the result size.

    Parameters
    ----------
    lf : polars.LazyFrame
    path : str or path-like
        Target directory.
    chunk_size : int
        Rows per batch handed to the writer.
    **options
        Any keyword option of :func:`tfsql.write_tfrecord`.

    Returns
    -------
    tfsql.WriteResult

    Examples
    --------
    >>> import tempfile, polars as pl
    >>> path = tempfile.mkdtemp() + "/out"
    >>> sink_frame(pl.LazyFrame({"x": [1, 2, 3]}).filter(pl.col("x") > 1), path).rows
    2
    """
    schema = lf.collect_schema()
    frames = lf.collect_batches(chunk_size=chunk_size, maintain_order=True, lazy=True)
    return write_tfrecord(_arrow_reader(schema, frames), path, **options)
