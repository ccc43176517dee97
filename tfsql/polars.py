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

Once both :mod:`tfsql` and Polars are imported (in either order, see
:mod:`tfsql._polars_hook`), :func:`attach` has set ``polars.scan_tfrecord`` and
``polars.read_tfrecord`` and registered ``DataFrame.tfrecord.write`` and
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
from typing import Any, Callable, Iterable, Iterator, Literal, Mapping, Sequence, Union, overload

import polars as pl
import pyarrow as pa
from polars.io.plugins import register_io_source

from tfsql._polars_predicates import combine, kept_files, references_only, split_conjuncts
from tfsql.scanner import DEFAULT_BATCH_BYTES, DEFAULT_BATCH_SIZE, Dataset, dataset
from tfsql._types import Lists, OnCorrupt, ReadCompression, RecordType
from tfsql.inference import DEFAULT_INFER_FILES, DEFAULT_INFER_SAMPLE
from tfsql.writer import WriteResult, write_tfrecord

__all__ = [
    "scan_tfrecord",
    "read_tfrecord",
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
    mapped = _frame(schema.empty_table()).schema if len(schema) else pl.Schema()
    return pl.Schema([(name, overrides.get(name, dtype)) for name, dtype in mapped.items()])


# --------------------------------------------------------------------------------------
# The scan
# --------------------------------------------------------------------------------------


SchemaLike = Union[Mapping[str, Any], pl.Schema, pa.Schema]


def scan_tfrecord(
    source: Any,
    *,
    n_rows: int | None = None,
    row_index_name: str | None = None,
    row_index_offset: int = 0,
    parallel: Literal["auto", "none"] = "auto",
    use_statistics: bool = True,
    hive_partitioning: bool | None = None,
    glob: bool = True,
    hidden_file_prefix: str | Sequence[str] | None = None,
    schema: SchemaLike | None = None,
    hive_schema: SchemaLike | None = None,
    try_parse_hive_dates: bool = True,
    low_memory: bool = False,
    cache: bool = True,
    storage_options: Mapping[str, Any] | None = None,
    credential_provider: Callable[[], Any] | Literal["auto"] | None = "auto",
    include_file_paths: str | None = None,
    missing_columns: Literal["insert", "raise"] = "raise",
    extra_columns: Literal["ignore", "raise"] = "raise",
    cast_options: Any = None,
    decryption: None = None,
    schema_overrides: SchemaLike | None = None,
    record_type: RecordType = "example",
    compression: ReadCompression = "infer",
    verify_checksums: bool = True,
    on_corrupt: OnCorrupt = "raise",
    infer_sample: int | None = DEFAULT_INFER_SAMPLE,
    infer_files: int | None = DEFAULT_INFER_FILES,
    lists: Lists = "auto",
    filesystem: Any = None,
    batch_size: int = DEFAULT_BATCH_SIZE,
    batch_bytes: int = DEFAULT_BATCH_BYTES,
    threads: int | None = None,
    _progress: Any = None,
) -> pl.LazyFrame:
    """Lazily read TFRecord files of ``tf.train.Example`` (or SequenceExample, raw) records.

    Files are listed and the schema inferred now; records are read when the query
    runs, decoding only the columns it uses, skipping files its partition filters
    reject and stopping at its row limit. :func:`read_tfrecord` (``pl.read_tfrecord``)
    reads eagerly.

    The options are ``pl.scan_parquet``'s, with its names, defaults and meaning where
    TFRecord gives them one, then TFRecord's own (from ``schema_overrides`` on).

    Parameters
    ----------
    source : str, path, or list of them
        Files, directories (read recursively), globs and fsspec URLs, as for
        :func:`tfsql.dataset`.
    n_rows : int, optional
        Read at most this many rows (the first ones, in file order; a later
        ``filter`` applies to these rows, as with ``pl.scan_parquet``).
    row_index_name, row_index_offset : str, int
        Add a first column of this name numbering the rows from ``row_index_offset``
        (as ``LazyFrame.with_row_index``).
    parallel : {"auto", "none"}
        ``"none"`` decodes in the calling thread; Parquet's ``"columns"``,
        ``"row_groups"`` and ``"prefiltered"`` have no TFRecord meaning and raise.
    use_statistics : bool
        Accepted for compatibility: TFRecord files carry no statistics, so both values
        read the same.
    hive_partitioning : bool or None
        None discovers ``key=value`` directories; False ignores them; True requires them.
    glob : bool
        False treats ``*?[`` in paths literally.
    hidden_file_prefix : str or list of str, optional
        Skip listed files whose name starts with these prefixes (``_*`` and ``.*``
        files are always skipped).
    schema : dict of name -> type, pl.Schema or pa.Schema, optional
        Skip inference and read these features with these types. Types may be Polars
        (``pl.Int32``, ``pl.List(pl.Float32)``, ``pl.Array(pl.Float32, 128)``,
        ``pl.String``, ``pl.Binary``, ``pl.Boolean``, ``pl.Categorical`` ...) or
        pyarrow types. Values are range-checked on read. Types of hive partition
        columns go in ``hive_schema``.
    hive_schema : dict, pl.Schema or pa.Schema, optional
        Types of partition columns (default Int64 when every value is an integer,
        else String, or a date: see ``try_parse_hive_dates``).
    try_parse_hive_dates : bool
        Partition values that are all dates (``dt=2024-01-01``) read as Date, all
        datetimes as Datetime("us").
    low_memory : bool
        Decode in the calling thread (one batch in memory at a time) unless
        ``threads`` is given.
    cache : bool
        Let Polars read this scan once when a query uses it several times.
    storage_options : dict, optional
        Options of the fsspec filesystem of a URL source (``{"anon": True}``; Polars'
        ``aws_access_key_id`` etc. are translated to s3fs/gcsfs/adlfs names).
    credential_provider : callable, "auto" or None
        A function returning ``(credentials, expiry)`` (Polars' convention), whose
        credentials join ``storage_options``; "auto" and None leave credentials to
        fsspec.
    include_file_paths : str, optional
        Add a String column of this name holding each row's file.
    missing_columns : {"raise", "insert"}
        With ``schema=``: a feature in none of the records the inference sample would
        read raises a :class:`tfsql.SchemaError` (a misspelt name would otherwise read
        as an all-null column); ``"insert"`` reads it as null.
    extra_columns : {"raise", "ignore"}
        With ``schema=``: features of those sampled records that ``schema`` does not
        name raise; ``"ignore"`` reads only the schema's features.
    cast_options : pl.ScanCastOptions, optional
        None allows every range-checked cast from TFRecord's int64 / float32 values to
        the types of ``schema``; a ``ScanCastOptions`` forbids other integer types and,
        unless ``float_cast="upcast"``, Float64.
    decryption : None
        Parquet only; anything else raises.
    schema_overrides : dict, pl.Schema or pa.Schema, optional
        Infer the schema, but read these features with these types.
    record_type : {"example", "sequence_example", "bytes"}
        ``"bytes"`` reads each record as one Binary column ``record``.
    compression : {"infer", None, "gzip", "zlib"}
        ``"infer"`` detects gzip and zlib per file.
    verify_checksums : bool
        Check each record's data CRC.
    on_corrupt : {"raise", "skip"} or callable
        ``"skip"`` drops corrupt records with a warning.
    infer_sample, infer_files : int or None
        Inference reads the first ``infer_sample`` records of up to ``infer_files`` files.
    lists : {"auto", "always"}
        ``"always"`` infers List columns even where every record holds one value.
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
        A feature holds two kinds, ``schema`` names a feature no sampled record has, or
        a value does not fit ``schema`` (when collected).

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
    >>> scan_tfrecord(path, row_index_name="i", schema_overrides={"id": pl.UInt8}).select("i", "id").collect().rows()
    [(0, 1), (1, 2), (2, 3)]
    """
    from tfsql import _polars_options as opts

    opts.reject_meaningless(parallel=parallel, decryption=decryption)
    if n_rows is not None and (not isinstance(n_rows, int) or isinstance(n_rows, bool) or n_rows < 0):
        raise ValueError(f"n_rows must be a non-negative integer, not {n_rows!r}")
    if row_index_name is not None and (not isinstance(row_index_offset, int) or row_index_offset < 0):
        raise ValueError(f"row_index_offset must be a non-negative integer, not {row_index_offset!r}")
    if schema is not None and schema_overrides is not None:
        raise ValueError("schema= fixes every column's type; schema_overrides= changes some inferred ones: pass one")
    arrow_schema = _arrow_schema(schema, "schema")
    ds = dataset(
        source,
        schema=arrow_schema,
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
        filesystem=opts.filesystem_for(source, filesystem, storage_options, credential_provider),
        glob=glob,
        batch_size=batch_size,
        batch_bytes=batch_bytes,
        threads=opts.threads_for(threads, parallel, low_memory),
        hidden_file_prefix=hidden_file_prefix,
    )
    if arrow_schema is not None:
        opts.check_cast_options(cast_options, ds.data_schema)
        opts.check_columns(ds, missing_columns, extra_columns, infer_sample=infer_sample, infer_files=infer_files)
    ds = opts.apply_overrides(ds, _arrow_schema(schema_overrides, "schema_overrides"))
    if try_parse_hive_dates:
        ds = opts.parse_hive_dates(ds, hive_partitioning, hive_schema)
    if _progress is not None:  # read_tfrecord(progress=True)'s bar: the bytes of the files
        _progress.total = sum(ds._found.files[i].size for i in ds._file_indices)
        ds = ds.with_options(progress=_progress)
    overrides = {**_polars_dtypes(schema), **_polars_dtypes(schema_overrides), **_polars_dtypes(hive_schema)}
    lf = scan_dataset(ds, n_rows=n_rows, polars_types=overrides, cache=cache)
    if row_index_name is not None:
        lf = lf.with_row_index(row_index_name, offset=row_index_offset)
    return lf


def read_tfrecord(
    source: Any,
    *,
    columns: Sequence[int] | Sequence[str] | None = None,
    n_rows: int | None = None,
    row_index_name: str | None = None,
    row_index_offset: int = 0,
    parallel: Literal["auto", "none"] = "auto",
    use_statistics: bool = True,
    hive_partitioning: bool | None = None,
    glob: bool = True,
    schema: SchemaLike | None = None,
    hive_schema: SchemaLike | None = None,
    try_parse_hive_dates: bool = True,
    low_memory: bool = False,
    storage_options: Mapping[str, Any] | None = None,
    credential_provider: Callable[[], Any] | Literal["auto"] | None = "auto",
    use_pyarrow: bool = False,
    pyarrow_options: Mapping[str, Any] | None = None,
    memory_map: bool = True,
    include_file_paths: str | None = None,
    missing_columns: Literal["insert", "raise"] = "raise",
    decryption: None = None,
    hidden_file_prefix: str | Sequence[str] | None = None,
    extra_columns: Literal["ignore", "raise"] = "raise",
    cast_options: Any = None,
    schema_overrides: SchemaLike | None = None,
    record_type: RecordType = "example",
    compression: ReadCompression = "infer",
    verify_checksums: bool = True,
    on_corrupt: OnCorrupt = "raise",
    infer_sample: int | None = DEFAULT_INFER_SAMPLE,
    infer_files: int | None = DEFAULT_INFER_FILES,
    lists: Lists = "auto",
    filesystem: Any = None,
    batch_size: int = DEFAULT_BATCH_SIZE,
    batch_bytes: int = DEFAULT_BATCH_BYTES,
    threads: int | None = None,
    progress: bool = False,
) -> pl.DataFrame:
    """Read TFRecord files into a Polars DataFrame: ``pl.read_tfrecord``, the eager twin of
    :func:`scan_tfrecord` as ``pl.read_parquet`` is of ``pl.scan_parquet``.

    ``columns`` (names, or positions in the file schema) selects columns; only their
    features are decoded. ``progress=True`` shows a progress bar of the bytes read on
    stderr. ``use_pyarrow``, ``pyarrow_options``, ``memory_map`` and ``decryption``
    exist for Parquet only (their defaults are accepted, anything else raises). Every
    other option is :func:`scan_tfrecord`'s (for an Arrow table use
    :func:`tfsql.read_tfrecord`).

    Examples
    --------
    >>> import tempfile, polars as pl, tfsql
    >>> from tfsql.polars import read_tfrecord
    >>> path = tempfile.mkdtemp() + "/out"
    >>> _ = tfsql.write_tfrecord(pl.DataFrame({"id": [1, 2, 3], "name": ["a", "b", "c"]}), path)
    >>> read_tfrecord(path, columns=["name"], n_rows=2)["name"].to_list()
    ['a', 'b']
    >>> read_tfrecord(path, columns=[0], row_index_name="row", row_index_offset=10).rows()
    [(10, 1), (11, 2), (12, 3)]
    """
    from tfsql import _polars_options as opts
    from tfsql.progress import read_bar

    opts.reject_meaningless(use_pyarrow=use_pyarrow, pyarrow_options=pyarrow_options, memory_map=memory_map)
    bar = read_bar("reading", total=None) if progress else None
    try:
        return _read(bar, source, columns, row_index_name, row_index_offset, dict(
            n_rows=n_rows,
            parallel=parallel,
            use_statistics=use_statistics,
            hive_partitioning=hive_partitioning,
            glob=glob,
            hidden_file_prefix=hidden_file_prefix,
            schema=schema,
            hive_schema=hive_schema,
            try_parse_hive_dates=try_parse_hive_dates,
            low_memory=low_memory,
            storage_options=storage_options,
            credential_provider=credential_provider,
            include_file_paths=include_file_paths,
            missing_columns=missing_columns,
            extra_columns=extra_columns,
            cast_options=cast_options,
            decryption=decryption,
            schema_overrides=schema_overrides,
            record_type=record_type,
            compression=compression,
            verify_checksums=verify_checksums,
            on_corrupt=on_corrupt,
            infer_sample=infer_sample,
            infer_files=infer_files,
            lists=lists,
            filesystem=filesystem,
            batch_size=batch_size,
            batch_bytes=batch_bytes,
            threads=threads,
        ))
    finally:
        if bar is not None:
            bar.close()


def _read(bar: Any, source: Any, columns: Any, row_index_name: str | None, row_index_offset: int,
          options: dict[str, Any]) -> pl.DataFrame:
    lf = scan_tfrecord(source, _progress=bar, **options)
    if columns is not None:
        names = lf.collect_schema().names()
        picked = [names[c] if isinstance(c, int) and not isinstance(c, bool) else c for c in columns]
        lf = lf.select(picked)
    if row_index_name is not None:
        lf = lf.with_row_index(row_index_name, offset=row_index_offset)
    df = lf.collect()
    if bar is not None and bar.total is not None and bar.n < bar.total:  # pruned files, a row limit
        bar.total = bar.n
        bar.refresh()
    return df


def scan_dataset(
    ds: Dataset,
    *,
    n_rows: int | None = None,
    polars_types: Mapping[str, pl.DataType] | None = None,
    cache: bool = True,
) -> pl.LazyFrame:
    """A LazyFrame over an opened :class:`tfsql.Dataset` (what :func:`scan_tfrecord` returns).

    ``polars_types`` overrides the Polars type of columns (e.g. ``pl.Categorical`` for
    a string feature); each batch is cast to it. ``cache=False`` tells Polars the
    scan is not pure, so a query using it twice reads it twice.

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
        "is_pure": cache,  # the same scan twice in a plan may be read once
        "explain_name": EXPLAIN_NAME,
        "explain_detail": source.describe(),
    }
    accepted = inspect.signature(register_io_source).parameters  # older Polars lack some
    supported: dict[str, Any] = {k: v for k, v in options.items() if k in accepted}
    return register_io_source(source, schema=source.schema, **supported)


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
            frame = _frame(table)
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
                    frame = _frame(batch, rechunk=False)
                else:  # records without features: from_arrow would drop the row count
                    frame = pl.DataFrame(height=batch.num_rows)
                mismatched: dict[Any, Any] = {n: t for n, t in target.items() if frame.schema[n] != t}
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


def _frame(data: pa.Table | pa.RecordBatch, *, rechunk: bool = True) -> pl.DataFrame:
    """``pl.from_arrow`` of a table or batch (always a DataFrame; typed as one)."""
    frame = pl.from_arrow(data, rechunk=rechunk)
    assert isinstance(frame, pl.DataFrame)
    return frame


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
    from tfsql.writer.inputs import offset_based_batch, offset_based_schema

    arrow = offset_based_schema(pl.DataFrame(schema=schema).to_arrow().schema)

    def batches() -> Iterator[pa.RecordBatch]:
        for frame in frames:
            for batch in frame.to_arrow().to_batches():
                yield offset_based_batch(batch, arrow)

    return pa.RecordBatchReader.from_batches(arrow, batches())


def write_frame(df: pl.DataFrame, path: Any, *, progress: bool = False, **options: Any) -> WriteResult:
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
    frames = df.iter_slices(_WRITE_CHUNK_ROWS)
    if not progress:
        return write_tfrecord(_arrow_reader(df.schema, frames), path, **options)
    from tfsql.progress import counted_batches, write_bar

    with write_bar("writing", total=df.height) as bar:  # the frame knows its rows: a bar with a total
        return write_tfrecord(_arrow_reader(df.schema, counted_batches(frames, bar)), path, **options)


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

    @overload
    def sink(
        self, path: Any, *, chunk_size: int = ..., lazy: Literal[False] = ..., **options: Any
    ) -> WriteResult: ...

    @overload
    def sink(self, path: Any, *, chunk_size: int = ..., lazy: Literal[True], **options: Any) -> pl.LazyFrame: ...

    def sink(
        self, path: Any, *, chunk_size: int = _WRITE_CHUNK_ROWS, lazy: bool = False, **options: Any
    ) -> WriteResult | pl.LazyFrame:
        """Stream the query's result into TFRecord files; options as :func:`tfsql.write_tfrecord`.

        ``path`` may be a ``pl.PartitionBy`` (see :mod:`tfsql._polars_sink`).
        ``lazy=True`` writes nothing now and returns a LazyFrame that writes when
        collected (alone or in ``pl.collect_all``) and lists the files written.
        """
        from tfsql._polars_sink import deferred, partition_target

        lf, target, options = partition_target(self._lf, path, options)
        if lazy:
            from tfsql.writer import check_write_options

            check_write_options(**options)
            return deferred(lambda: sink_frame(lf, target, chunk_size=chunk_size, **options))
        return sink_frame(lf, target, chunk_size=chunk_size, **options)


# --------------------------------------------------------------------------------------
# Attaching to polars
# --------------------------------------------------------------------------------------


def attach() -> None:
    """Set ``polars.scan_tfrecord`` and ``polars.read_tfrecord`` and register the
    ``.tfrecord`` namespaces.

    Called when both tfsql and Polars are imported, in either order (see
    :mod:`tfsql._polars_hook`); calling it again does nothing.
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
    for name, function in (("scan_tfrecord", scan_tfrecord), ("read_tfrecord", read_tfrecord)):
        existing = getattr(pl, name, None)
        if existing is None or _is_ours(existing):
            setattr(pl, name, function)
        else:
            warnings.warn(
                f"polars.{name} already exists (from {getattr(existing, '__module__', '?')}); "
                f"tfsql leaves it alone: use tfsql.polars.{name}",
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


# Importing this module means Polars is imported: attach (see tfsql._polars_hook).
attach()
