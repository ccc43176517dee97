"""Polars front end: ``pl.scan_tfrecord`` and the ``.tfrecord`` writer namespaces.

``scan_tfrecord`` is a Polars IO plugin (``polars.io.plugins.register_io_source``)
over :func:`tfsql.dataset`: it decodes nothing itself, it translates what Polars asks
for into one :class:`tfsql.Scanner` per query and converts the Arrow batches.

Polars trusts an IO source completely (see ``docs/architecture.md``, Polars contract), so
the source

- outputs exactly the requested ``with_columns``, in that order (``select(pl.len())``
  asks for one column);
- applies the pushed predicate exactly, on every batch, after splitting it into
  AND-terms: the terms that read only hive partition columns are evaluated on a frame
  with one row per file, and the files they reject are never opened;
- honours ``n_rows``: with a predicate it means "the first n rows of the source, then
  filter", so no file is pruned then;
- casts every batch to the declared Polars schema.

Importing :mod:`tfsql` calls :func:`attach` when Polars is installed, which sets
``polars.scan_tfrecord`` and registers ``DataFrame.tfrecord.write`` and
``LazyFrame.tfrecord.sink``.

Examples
--------
>>> import tempfile, polars as pl, tfsql
>>> from tfsql.polars import scan_tfrecord
>>> path = tempfile.mkdtemp() + "/out"
>>> df = pl.DataFrame({"id": [1, 2, 3], "split": ["a", "b", "a"]})
>>> _ = write_frame(df, path, partition_by="split")
>>> scan_tfrecord(path).filter(pl.col("split") == "a").select("id").sort("id").collect()["id"].to_list()
[1, 3]
"""

from __future__ import annotations

import inspect
import warnings
from dataclasses import dataclass
from typing import Any, Iterable, Iterator, Mapping

import polars as pl
import pyarrow as pa
from polars.io.plugins import register_io_source

from tfsql._polars_predicates import combine, kept_files, references_only, split_conjuncts
from tfsql.scanner import DEFAULT_BATCH_BYTES, DEFAULT_BATCH_SIZE, Dataset, dataset
from tfsql.inference import DEFAULT_INFER_FILES, DEFAULT_INFER_SAMPLE
from tfsql.schema import offset_based_type
from tfsql.writer import WriteResult, write_tfrecord

__all__ = [
    "scan_tfrecord",
    "scan_dataset",
    "attach",
    "arrow_type",
    "write_frame",
    "sink_frame",
    "TFRecordFrameNamespace",
    "TFRecordLazyFrameNamespace",
]

#: The name ``explain()`` shows for the scan: ``PYTHON[tfrecord] SCAN``.
EXPLAIN_NAME = "tfrecord"

_WRITE_CHUNK_ROWS = 65_536  # rows converted to Arrow at once by the writer namespaces


# --------------------------------------------------------------------------------------
# Types
# --------------------------------------------------------------------------------------

_SIMPLE_TYPES: dict[Any, pa.DataType] = {
    pl.Boolean: pa.bool_(),
    pl.Int8: pa.int8(),
    pl.Int16: pa.int16(),
    pl.Int32: pa.int32(),
    pl.Int64: pa.int64(),
    pl.UInt8: pa.uint8(),
    pl.UInt16: pa.uint16(),
    pl.UInt32: pa.uint32(),
    pl.UInt64: pa.uint64(),
    pl.Float32: pa.float32(),
    pl.Float64: pa.float64(),
    pl.String: pa.string(),
    pl.Binary: pa.binary(),
    # read as strings; the batch is then cast to the Polars type
    pl.Categorical: pa.string(),
    pl.Enum: pa.string(),
}


def arrow_type(dtype: Any) -> pa.DataType:
    """The Arrow type tfsql decodes a column into for a Polars (or Arrow) type.

    ``pl.Array(inner, n)`` becomes a fixed-size list (the scanner checks that every
    record holds ``n`` values), ``pl.List`` a list, ``pl.String`` / ``pl.Categorical``
    / ``pl.Enum`` a string. Arrow types pass through.

    Examples
    --------
    >>> import polars as pl
    >>> arrow_type(pl.Array(pl.Float32, 3))
    FixedSizeListType(fixed_size_list<item: float>[3])
    >>> arrow_type(pl.List(pl.String))
    ListType(list<item: string>)
    """
    if isinstance(dtype, pa.DataType):
        return dtype
    if isinstance(dtype, type) and issubclass(dtype, pl.DataType):
        dtype = dtype()
    if not isinstance(dtype, pl.DataType):
        raise TypeError(f"expected a Polars or pyarrow data type, not {dtype!r}")
    if isinstance(dtype, pl.Array):
        return pa.list_(arrow_type(dtype.inner), dtype.size)
    if isinstance(dtype, pl.List):
        return pa.list_(arrow_type(dtype.inner))
    simple = _SIMPLE_TYPES.get(dtype.base_type())
    if simple is not None:
        return simple
    try:  # dates, times, durations, decimals: Polars' own Arrow export
        return pl.Series([], dtype=dtype).to_arrow().type
    except Exception:
        raise TypeError(f"Polars type {dtype} has no Arrow equivalent tfsql can read") from None


def _arrow_schema(schema: Any, what: str) -> pa.Schema | None:
    """A pa.Schema from a Polars schema, a pa.Schema or a dict of Polars/Arrow types."""
    if schema is None or isinstance(schema, pa.Schema):
        return schema
    if isinstance(schema, (pl.Schema, Mapping)):
        return pa.schema([pa.field(name, arrow_type(dtype)) for name, dtype in schema.items()])
    raise TypeError(f"{what} must be a dict of name -> Polars or pyarrow type, a pl.Schema or a pa.Schema, "
                    f"not {type(schema).__name__}")


def _polars_dtypes(schema: Any) -> dict[str, pl.DataType]:
    """The Polars types a user named in a schema (classes instantiated)."""
    if not isinstance(schema, (pl.Schema, Mapping)):
        return {}
    out = {}
    for name, dtype in schema.items():
        if isinstance(dtype, type) and issubclass(dtype, pl.DataType):
            dtype = dtype()
        if isinstance(dtype, pl.DataType):
            out[name] = dtype
    return out


def _polars_schema(schema: pa.Schema, overrides: Mapping[str, pl.DataType]) -> pl.Schema:
    """The Polars schema of Arrow ``schema`` (user-given Polars types win)."""
    mapped = pl.from_arrow(schema.empty_table()).schema if len(schema) else pl.Schema()
    return pl.Schema([(name, overrides.get(name, dtype)) for name, dtype in mapped.items()])


# --------------------------------------------------------------------------------------
# The scan
# --------------------------------------------------------------------------------------


def scan_tfrecord(
    source: Any,
    *,
    schema: Mapping[str, Any] | pl.Schema | pa.Schema | None = None,
    record_type: str = "example",
    hive_partitioning: bool | None = None,
    hive_schema: Mapping[str, Any] | pl.Schema | pa.Schema | None = None,
    include_file_paths: str | None = None,
    n_rows: int | None = None,
    compression: str | None = "infer",
    verify_checksums: bool = True,
    on_corrupt: str = "raise",
    infer_sample: int | None = DEFAULT_INFER_SAMPLE,
    infer_files: int | None = DEFAULT_INFER_FILES,
    lists: str = "auto",
    glob: bool = True,
    filesystem: Any = None,
    batch_size: int = DEFAULT_BATCH_SIZE,
    batch_bytes: int = DEFAULT_BATCH_BYTES,
    threads: int | None = None,
) -> pl.LazyFrame:
    """Lazily read TFRecord files of ``tf.train.Example`` (or SequenceExample, raw) records.

    Files are listed and the schema inferred now; records are read when the query
    runs, decoding only the columns it uses, skipping files its partition filters
    reject and stopping at its row limit. Read eagerly with ``scan_tfrecord(...).collect()``
    or ``pl.from_arrow(tfsql.read_tfrecord(...))``.

    Parameters
    ----------
    source : str, path, or list of them
        Files, directories (read recursively), globs and fsspec URLs, as for
        :func:`tfsql.dataset`.
    schema : dict of name -> type, pl.Schema or pa.Schema, optional
        Skip inference and read these features with these types. Types may be Polars
        (``pl.Int32``, ``pl.List(pl.Float32)``, ``pl.Array(pl.Float32, 128)``,
        ``pl.String``, ``pl.Binary``, ``pl.Boolean``, ``pl.Categorical`` ...) or
        pyarrow types. Values are range-checked on read. Types of hive partition
        columns go in ``hive_schema``.
    record_type : {"example", "sequence_example", "bytes"}
        ``"bytes"`` reads each record as one Binary column ``record``.
    hive_partitioning : bool or None
        None discovers ``key=value`` directories; False ignores them; True requires them.
    hive_schema : dict, pl.Schema or pa.Schema, optional
        Types of partition columns (default Int64 when every value is an integer,
        else String).
    include_file_paths : str, optional
        Add a String column of this name holding each row's file.
    n_rows : int, optional
        Read at most this many rows (the first ones, in file order; a later
        ``filter`` applies to these rows, as with ``pl.scan_parquet``).
    compression : {"infer", None, "gzip", "zlib"}
        ``"infer"`` detects gzip and zlib per file.
    verify_checksums : bool
        Check each record's data CRC.
    on_corrupt : {"raise", "skip"}
        ``"skip"`` drops corrupt records with a warning.
    infer_sample, infer_files : int or None
        Inference reads the first ``infer_sample`` records of up to ``infer_files`` files.
    lists : {"auto", "always"}
        ``"always"`` infers List columns even where every record holds one value.
    glob : bool
        False treats ``*?[`` in paths literally.
    filesystem : fsspec filesystem, optional
        For plain paths on another filesystem.
    batch_size, batch_bytes : int
        Upper bounds of each batch in rows and record bytes (Polars' own batch size
        hint is honoured below ``batch_size``).
    threads : int, optional
        Decode threads (default: cores, at most 8).

    Returns
    -------
    polars.LazyFrame

    Raises
    ------
    FileNotFoundError
        Nothing matches ``source``.
    tfsql.SchemaError
        A feature holds two kinds, or a value does not fit ``schema`` (when collected).

    Examples
    --------
    >>> import tempfile, polars as pl, tfsql
    >>> from tfsql.polars import scan_tfrecord
    >>> path = tempfile.mkdtemp() + "/out"
    >>> _ = tfsql.write_tfrecord(pl.DataFrame({"id": [1, 2, 3], "emb": [[0.5, 1.0]] * 3}), path)
    >>> lf = scan_tfrecord(path, schema={"id": pl.Int32, "emb": pl.Array(pl.Float32, 2)})
    >>> dict(lf.collect_schema())
    {'id': Int32, 'emb': Array(Float32, shape=(2,))}
    >>> lf.filter(pl.col("id") > 1).select(pl.len()).collect().item()
    2
    """
    if n_rows is not None and (not isinstance(n_rows, int) or isinstance(n_rows, bool) or n_rows < 0):
        raise ValueError(f"n_rows must be a non-negative integer, not {n_rows!r}")
    ds = dataset(
        source,
        schema=_arrow_schema(schema, "schema"),
        record_type=record_type,
        compression=compression,
        verify_checksums=verify_checksums,
        on_corrupt=on_corrupt,
        hive_partitioning=hive_partitioning,
        hive_schema=_arrow_schema(hive_schema, "hive_schema"),
        include_file_paths=include_file_paths,
        infer_sample=infer_sample,
        infer_files=infer_files,
        lists=lists,
        filesystem=filesystem,
        glob=glob,
        batch_size=batch_size,
        batch_bytes=batch_bytes,
        threads=threads,
    )
    overrides = {**_polars_dtypes(schema), **_polars_dtypes(hive_schema)}
    return scan_dataset(ds, n_rows=n_rows, polars_types=overrides)


def scan_dataset(
    ds: Dataset, *, n_rows: int | None = None, polars_types: Mapping[str, pl.DataType] | None = None
) -> pl.LazyFrame:
    """A LazyFrame over an opened :class:`tfsql.Dataset` (what :func:`scan_tfrecord` returns).

    ``polars_types`` overrides the Polars type of columns (e.g. ``pl.Categorical`` for
    a string feature); each batch is cast to it.

    Examples
    --------
    >>> import tempfile, pyarrow as pa, tfsql
    >>> path = tempfile.mkdtemp() + "/out"
    >>> _ = tfsql.write_tfrecord(pa.table({"x": [1, 2]}), path)
    >>> scan_dataset(tfsql.dataset(path)).collect()["x"].to_list()
    [1, 2]
    """
    source = TFRecordSource(ds, _polars_schema(ds.schema, polars_types or {}), n_rows=n_rows)
    options = {
        "validate_schema": True,  # a batch off the declared schema is our bug: fail loudly
        "is_pure": True,  # the same scan twice in a plan may be read once
        "explain_name": EXPLAIN_NAME,
        "explain_detail": source.describe(),
    }
    accepted = inspect.signature(register_io_source).parameters  # older Polars lack some
    return register_io_source(
        source, schema=source.schema, **{k: v for k, v in options.items() if k in accepted}
    )


@dataclass(frozen=True)
class ScanPlan:
    """What one call of the IO source reads (derived from Polars' request).

    Attributes
    ----------
    columns : list of str
        The output columns, in order.
    decode : list of str
        The columns the scanner produces: ``columns`` plus those the residual predicate
        reads.
    residual : polars.Expr or None
        The predicate applied to each batch (the pushed predicate minus the terms that
        selected files).
    files : list of int or None
        Positions (in ``Dataset.files``) of the files the partition terms keep; None:
        every file.
    limit : int or None
        Raw rows to read (before ``residual``).
    no_files : bool
        The partition terms rejected every file: read nothing.
    """

    columns: list[str]
    decode: list[str]
    residual: pl.Expr | None
    files: list[int] | None
    limit: int | None
    no_files: bool = False


class TFRecordSource:
    """The callable registered with ``register_io_source``: Polars calls it with
    ``(with_columns, predicate, n_rows, batch_size)`` and iterates the DataFrames it
    yields.
    """

    def __init__(self, ds: Dataset, schema: pl.Schema, *, n_rows: int | None = None) -> None:
        self._dataset = ds
        self.schema = schema
        self._n_rows = n_rows
        self._partition_names = list(ds.partition_schema.names)
        self._partitions: tuple[pa.Table, pl.DataFrame] | None = None

    def describe(self) -> str:
        """One line for ``explain()``: files, partition keys, row cap."""
        n = len(self._dataset.files)
        text = f"{n} file{'' if n == 1 else 's'}"
        if self._partition_names:
            text += f"; hive partitions: {', '.join(self._partition_names)}"
        if self._n_rows is not None:
            text += f"; n_rows={self._n_rows}"
        return text

    # ------------------------------------------------------------------ planning
    def _partition_values(self) -> tuple[pa.Table, pl.DataFrame]:
        """Partition values, one row per file: as Arrow and as Polars (declared types)."""
        if self._partitions is None:
            table = self._dataset.partition_values
            frame = pl.from_arrow(table)
            frame = frame.cast({name: self.schema[name] for name in frame.columns})
            self._partitions = (table, frame)
        return self._partitions

    def plan(self, with_columns: list[str] | None, predicate: pl.Expr | None, n_rows: int | None) -> ScanPlan:
        """Translate one Polars request into scanner arguments (see :class:`ScanPlan`)."""
        columns = list(self.schema.names()) if with_columns is None else list(with_columns)
        limit = _smaller(self._n_rows, n_rows)
        residual, files, no_files = predicate, None, False
        # With a row limit the predicate applies to the first rows of the whole source,
        # so no file may be skipped.
        if predicate is not None and limit is None and self._partition_names:
            terms = split_conjuncts(predicate)
            on_files = [references_only(t, self._partition_names) for t in terms]
            if any(on_files):
                table, frame = self._partition_values()
                kept = kept_files(frame, [t for t, f in zip(terms, on_files) if f])
                residual = combine([t for t, f in zip(terms, on_files) if not f])
                if not kept:
                    no_files = True
                elif len(kept) < table.num_rows:
                    files = kept
        decode = list(columns)
        if residual is not None:
            decode += [name for name in dict.fromkeys(residual.meta.root_names()) if name not in columns]
        return ScanPlan(columns, decode, residual, files, limit, no_files)

    # ------------------------------------------------------------------ reading
    def __call__(
        self,
        with_columns: list[str] | None,
        predicate: pl.Expr | None,
        n_rows: int | None,
        batch_size: int | None,
    ) -> Iterator[pl.DataFrame]:
        plan = self.plan(with_columns, predicate, n_rows)
        return self._read(plan, batch_size)

    def _read(self, plan: ScanPlan, batch_size: int | None) -> Iterator[pl.DataFrame]:
        if plan.no_files or plan.limit == 0:
            return
        bound = self._dataset.options.batch_size
        source = self._dataset if plan.files is None else self._dataset.select_files(plan.files)
        scanner = source.scanner(
            columns=plan.decode,
            batch_size=bound if batch_size is None else max(1, min(batch_size, bound)),
            limit=plan.limit,
        )
        target = {name: self.schema[name] for name in plan.decode}
        batches = scanner.to_batches()
        try:
            for batch in batches:
                if batch.num_columns:
                    frame = pl.from_arrow(batch, rechunk=False)
                else:  # records without features: from_arrow would drop the row count
                    frame = pl.DataFrame(height=batch.num_rows)
                mismatched = {n: t for n, t in target.items() if frame.schema[n] != t}
                if mismatched:
                    frame = frame.cast(mismatched)
                if plan.residual is not None:
                    frame = frame.filter(plan.residual)
                if len(plan.decode) != len(plan.columns):
                    frame = frame.select(plan.columns)
                if frame.height:
                    yield frame
        finally:
            batches.close()


def _smaller(a: int | None, b: int | None) -> int | None:
    if a is None:
        return b
    if b is None:
        return a
    return min(a, b)


# --------------------------------------------------------------------------------------
# Writing: the .tfrecord namespaces
# --------------------------------------------------------------------------------------


def _arrow_reader(schema: pl.Schema, frames: Iterable[pl.DataFrame]) -> pa.RecordBatchReader:
    """A lazy RecordBatchReader over Polars frames, converted one at a time."""
    exported = pl.DataFrame(schema=schema).to_arrow().schema
    arrow = pa.schema([f.with_type(offset_based_type(f.type)) for f in exported])

    def batches() -> Iterator[pa.RecordBatch]:
        for frame in frames:
            table = frame.to_arrow()
            if table.schema != arrow:
                table = table.cast(arrow)
            yield from table.to_batches()

    return pa.RecordBatchReader.from_batches(arrow, batches())


def write_frame(df: pl.DataFrame, path: Any, **options: Any) -> WriteResult:
    """Write a DataFrame as TFRecord files with :func:`tfsql.write_tfrecord`.

    The frame is converted to Arrow ``65536`` rows at a time. Reading the files back
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
    return write_tfrecord(_arrow_reader(df.schema, df.iter_slices(_WRITE_CHUNK_ROWS)), path, **options)


def sink_frame(lf: pl.LazyFrame, path: Any, *, chunk_size: int = _WRITE_CHUNK_ROWS, **options: Any) -> WriteResult:
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


class TFRecordFrameNamespace:
    """``df.tfrecord``: ``df.tfrecord.write(path, **options)`` (see :func:`write_frame`).

    Examples
    --------
    >>> import tempfile, polars as pl, tfsql
    >>> path = tempfile.mkdtemp() + "/out"
    >>> pl.DataFrame({"x": [1, 2]}).tfrecord.write(path, compression="gzip").rows
    2
    """

    def __init__(self, df: pl.DataFrame) -> None:
        self._df = df

    def write(self, path: Any, **options: Any) -> WriteResult:
        """Write the frame as TFRecord files; options as :func:`tfsql.write_tfrecord`."""
        return write_frame(self._df, path, **options)


class TFRecordLazyFrameNamespace:
    """``lf.tfrecord``: ``lf.tfrecord.sink(path, **options)`` (see :func:`sink_frame`).

    Examples
    --------
    >>> import tempfile, polars as pl, tfsql
    >>> path = tempfile.mkdtemp() + "/out"
    >>> pl.LazyFrame({"x": [1, 2]}).tfrecord.sink(path, partition_by="x").rows
    2
    """

    def __init__(self, lf: pl.LazyFrame) -> None:
        self._lf = lf

    def sink(self, path: Any, *, chunk_size: int = _WRITE_CHUNK_ROWS, **options: Any) -> WriteResult:
        """Stream the query's result into TFRecord files; options as :func:`tfsql.write_tfrecord`."""
        return sink_frame(self._lf, path, chunk_size=chunk_size, **options)


# --------------------------------------------------------------------------------------
# Attaching to polars
# --------------------------------------------------------------------------------------


def attach() -> None:
    """Set ``polars.scan_tfrecord`` and register the ``.tfrecord`` namespaces.

    Called by ``import tfsql`` when Polars is installed; calling it again does nothing.
    An attribute of the same name that another package put on Polars is left alone
    with a :class:`UserWarning` (use ``tfsql.scan_tfrecord`` / :func:`write_frame`
    then).

    Examples
    --------
    >>> import polars as pl, tfsql
    >>> attach()
    >>> pl.scan_tfrecord is tfsql.polars.scan_tfrecord
    True
    """
    existing = getattr(pl, "scan_tfrecord", None)
    if existing is None or _is_ours(existing):
        pl.scan_tfrecord = scan_tfrecord
    else:
        warnings.warn(
            f"polars.scan_tfrecord already exists (from {getattr(existing, '__module__', '?')}); "
            "tfsql leaves it alone: use tfsql.scan_tfrecord",
            UserWarning,
            stacklevel=2,
        )
    _register(pl.DataFrame, "tfrecord", TFRecordFrameNamespace, pl.api.register_dataframe_namespace)
    _register(pl.LazyFrame, "tfrecord", TFRecordLazyFrameNamespace, pl.api.register_lazyframe_namespace)


def _is_ours(obj: Any) -> bool:
    # a reloaded tfsql.polars defines new objects with the same module and name
    return getattr(obj, "__module__", None) == __name__


def _register(cls: type, name: str, namespace: type, register: Any) -> None:
    existing = getattr(cls, name, None)
    if existing is None or _is_ours(existing):
        if existing is not namespace:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # "overriding existing custom namespace" (ours)
                register(name)(namespace)
        return
    warnings.warn(
        f"polars.{cls.__name__}.{name} already exists (from {getattr(existing, '__module__', '?')}); "
        f"tfsql leaves it alone: use tfsql.polars.{'write_frame' if cls is pl.DataFrame else 'sink_frame'}",
        UserWarning,
        stacklevel=3,
    )
