"""``pl.scan_tfrecord`` and ``pl.read_tfrecord``: ``scan_parquet``'s options plus TFRecord's
own, opening a :func:`tfsql.dataset` and scanning it through the IO source of
:mod:`tfsql.polars.source`.

The TFRecord options are the reading options of :mod:`tfsql.options` that the spec
offers Polars (``Option.polars``): their defaults are the spec's (:class:`tfsql.ReadOptions`)
and they reach :func:`tfsql.dataset` as given. Those Polars spells as ``scan_parquet``
parameters (``Option.parquet_name``) are written here with Polars' types; the others'
keyword parameters, numpydoc entries and hand-off by name are generated from the spec
between ``generated:`` marker lines (`tfsql.option_python`). The Parquet options are translated by
:mod:`tfsql.polars.parquet_options`. ``read_tfrecord`` takes ``scan_tfrecord``'s
parameters (but ``cache``) and ``read_parquet``'s own; it hands the former on by name.

Examples
--------
>>> import tempfile, polars as pl, tfsql
>>> path = tempfile.mkdtemp() + "/out"
>>> _ = tfsql.write_tfrecord(pl.DataFrame({"id": [1, 2, 3]}), path)
>>> scan_tfrecord(path, infer_bytes=1 << 10).filter(pl.col("id") > 1).collect()["id"].to_list()
[2, 3]
>>> read_tfrecord(path, max_record_bytes=1 << 20).height
3
"""

from __future__ import annotations

from typing import Any, Callable, Literal, Mapping, Sequence

import polars as pl

# generated: polars imports (from tfsql/options.py by python -m tfsql.option_header --write)
from tfsql.option_values import Lists, OnCorrupt, ReadCompression, RecordType

# end generated: polars imports
from tfsql.options import ReadOptions
from tfsql.polars import parquet_options as opts
from tfsql.polars.source import scan_dataset
from tfsql.polars.types import SchemaLike, arrow_schema, polars_dtypes
from tfsql.opening import dataset

__all__ = ["scan_tfrecord", "read_tfrecord"]

#: Every reading option at its default: the defaults of the TFRecord parameters below.
_DEFAULT = ReadOptions()


def scan_tfrecord(
    source: Any,
    *,
    n_rows: int | None = None,
    row_index_name: str | None = None,
    row_index_offset: int = 0,
    parallel: Literal["auto", "none"] = "auto",
    use_statistics: bool = True,
    hive_partitioning: bool | None = _DEFAULT.hive_partitioning,
    glob: bool = _DEFAULT.glob,
    hidden_file_prefix: str | Sequence[str] | None = _DEFAULT.hidden_file_prefix,
    schema: SchemaLike | None = _DEFAULT.schema,
    hive_schema: SchemaLike | None = _DEFAULT.hive_schema,
    try_parse_hive_dates: bool = True,
    low_memory: bool = False,
    cache: bool = True,
    storage_options: Mapping[str, Any] | None = None,
    credential_provider: Callable[[], Any] | Literal["auto"] | None = "auto",
    include_file_paths: str | None = _DEFAULT.include_file_paths,
    missing_columns: Literal["insert", "raise"] = "raise",
    extra_columns: Literal["ignore", "raise"] = "raise",
    cast_options: Any = None,
    decryption: None = None,
    schema_overrides: SchemaLike | None = None,
    # generated: scan parameters (from tfsql/options.py by python -m tfsql.option_header --write)
    record_type: RecordType = _DEFAULT.record_type,
    compression: ReadCompression = _DEFAULT.compression,
    verify_checksums: bool = _DEFAULT.verify_checksums,
    on_corrupt: OnCorrupt = _DEFAULT.on_corrupt,
    infer_sample: int | None = _DEFAULT.infer_sample,
    infer_files: int | None = _DEFAULT.infer_files,
    infer_bytes: int | None = _DEFAULT.infer_bytes,
    lists: Lists = _DEFAULT.lists,
    filesystem: Any = _DEFAULT.filesystem,
    batch_size: int = _DEFAULT.batch_size,
    batch_bytes: int = _DEFAULT.batch_bytes,
    threads: int | None = _DEFAULT.threads,
    max_record_bytes: int = _DEFAULT.max_record_bytes,
    split_bytes: int | None = _DEFAULT.split_bytes,
    # end generated: scan parameters
    _progress: Any = None,
) -> pl.LazyFrame:
    """Lazily read TFRecord files of ``tf.train.Example`` (or SequenceExample, raw) records.

    Files are listed and the schema inferred now; records are read when the query
    runs, decoding only the columns it uses, skipping files its partition filters
    reject and stopping at its row limit. :func:`read_tfrecord` (``pl.read_tfrecord``)
    reads eagerly.

    The options are ``pl.scan_parquet``'s, with its names, defaults and meaning where
    TFRecord gives them one, then TFRecord's own (from ``schema_overrides`` on: those of
    :func:`tfsql.dataset`, with its defaults). Polars' own batch size hint is honoured
    below ``batch_size``.

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
    .. generated: scan docs (from tfsql/options.py by python -m tfsql.option_header --write)
    record_type : {"example", "sequence_example", "bytes"}
        Spark-TFRecord's ``"Example"``, ``"SequenceExample"``, ``"ByteArray"`` work too.
        ``"bytes"`` reads each record as one binary column ``record``.
    compression : {"infer", None, "gzip", "zlib"}
        ``"infer"`` detects gzip and zlib by their magic bytes, per file.
    verify_checksums : bool
        Check each record's data CRC (the length CRC is always checked).
    on_corrupt : {"raise", "skip"} or callable
        ``"skip"`` drops records whose data CRC fails (and the rest of a file after a
        bad length or truncation) with a warning for each; a callable is called with
        each :class:`~tfsql.errors.CorruptRecordError` instead of the warning.
    infer_sample : int or None
        Inference reads the first ``infer_sample`` records of each sampled file (None:
        all). See :mod:`tfsql.inference`.
    infer_files : int or None
        Inference samples up to ``infer_files`` files, spread over the list (None: all).
    infer_bytes : int or None
        A file's inference sample also ends once it holds this many record bytes
        (default 4 MiB; None: no byte bound; ignored with ``infer_sample=None``).
    lists : {"auto", "always"}
        ``"always"`` infers list columns even where every record holds one value.
    filesystem : fsspec filesystem, optional
        For plain paths on another filesystem.
    batch_size : int
        Rows per batch at most.
    batch_bytes : int
        Bytes per batch at most, of both the records read and the Arrow columns decoded
        from them (a batch of many columns holds fewer rows).
    threads : int, optional
        Decode threads (default: cores, at most 8); 1 decodes in the calling thread.
    max_record_bytes : int
        A record whose header claims more bytes (default 2 GiB) is reported as corrupt
        (:class:`~tfsql.errors.CorruptRecordError`) before memory is allocated for it.
    split_bytes : int or None
        With several threads, an uncompressed file of at least twice this size is read
        as byte ranges of this size on several threads at once (see :mod:`tfsql.splits`;
        output order is kept). None (the default): a local file of 4 MiB or more is
        still read by the decode threads in pieces of about a batch, smaller ones a
        batch at a time.
    .. end generated: scan docs

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
    opts.reject_meaningless(parallel=parallel, decryption=decryption)
    if n_rows is not None and (not isinstance(n_rows, int) or isinstance(n_rows, bool) or n_rows < 0):
        raise ValueError(f"n_rows must be a non-negative integer, not {n_rows!r}")
    if row_index_name is not None and (not isinstance(row_index_offset, int) or row_index_offset < 0):
        raise ValueError(f"row_index_offset must be a non-negative integer, not {row_index_offset!r}")
    if schema is not None and schema_overrides is not None:
        raise ValueError("schema= fixes every column's type; schema_overrides= changes some inferred ones: pass one")
    options = dict(  # every reading option of the spec Polars offers, by name
        # generated: scan options (from tfsql/options.py by python -m tfsql.option_header --write)
        schema=schema,
        record_type=record_type,
        compression=compression,
        verify_checksums=verify_checksums,
        on_corrupt=on_corrupt,
        hive_partitioning=hive_partitioning,
        hive_schema=hive_schema,
        include_file_paths=include_file_paths,
        infer_sample=infer_sample,
        infer_files=infer_files,
        infer_bytes=infer_bytes,
        lists=lists,
        missing_columns=missing_columns,
        filesystem=filesystem,
        glob=glob,
        batch_size=batch_size,
        batch_bytes=batch_bytes,
        threads=threads,
        max_record_bytes=max_record_bytes,
        split_bytes=split_bytes,
        hidden_file_prefix=hidden_file_prefix,
        # end generated: scan options
    )
    options.update(  # the values Polars' own parameters and types decide
        schema=arrow_schema(schema, "schema"),
        hive_schema=arrow_schema(hive_schema, "hive_schema"),
        filesystem=opts.filesystem_for(source, filesystem, storage_options, credential_provider),
        threads=opts.threads_for(threads, parallel, low_memory),
    )
    ds = dataset(source, **options)
    if options["schema"] is not None:
        opts.check_cast_options(cast_options, ds.data_schema)
        opts.check_columns(
            ds,
            extra_columns,
            infer_sample=infer_sample,
            infer_files=infer_files,
            infer_bytes=infer_bytes,
        )
    ds = opts.apply_overrides(ds, arrow_schema(schema_overrides, "schema_overrides"))
    if try_parse_hive_dates:
        ds = opts.parse_hive_dates(ds, hive_partitioning, hive_schema)
    if _progress is not None:  # read_tfrecord(progress=True)'s bar: the bytes of the files
        _progress.total = sum(ds.discovered.files[i].size for i in ds.file_indices)
        ds = ds.with_options(progress=_progress)
    overrides = {**polars_dtypes(schema), **polars_dtypes(schema_overrides), **polars_dtypes(hive_schema)}
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
    hive_partitioning: bool | None = _DEFAULT.hive_partitioning,
    glob: bool = _DEFAULT.glob,
    schema: SchemaLike | None = _DEFAULT.schema,
    hive_schema: SchemaLike | None = _DEFAULT.hive_schema,
    try_parse_hive_dates: bool = True,
    low_memory: bool = False,
    storage_options: Mapping[str, Any] | None = None,
    credential_provider: Callable[[], Any] | Literal["auto"] | None = "auto",
    use_pyarrow: bool = False,
    pyarrow_options: Mapping[str, Any] | None = None,
    memory_map: bool = True,
    include_file_paths: str | None = _DEFAULT.include_file_paths,
    missing_columns: Literal["insert", "raise"] = "raise",
    decryption: None = None,
    hidden_file_prefix: str | Sequence[str] | None = _DEFAULT.hidden_file_prefix,
    extra_columns: Literal["ignore", "raise"] = "raise",
    cast_options: Any = None,
    schema_overrides: SchemaLike | None = None,
    # generated: read parameters (from tfsql/options.py by python -m tfsql.option_header --write)
    record_type: RecordType = _DEFAULT.record_type,
    compression: ReadCompression = _DEFAULT.compression,
    verify_checksums: bool = _DEFAULT.verify_checksums,
    on_corrupt: OnCorrupt = _DEFAULT.on_corrupt,
    infer_sample: int | None = _DEFAULT.infer_sample,
    infer_files: int | None = _DEFAULT.infer_files,
    infer_bytes: int | None = _DEFAULT.infer_bytes,
    lists: Lists = _DEFAULT.lists,
    filesystem: Any = _DEFAULT.filesystem,
    batch_size: int = _DEFAULT.batch_size,
    batch_bytes: int = _DEFAULT.batch_bytes,
    threads: int | None = _DEFAULT.threads,
    max_record_bytes: int = _DEFAULT.max_record_bytes,
    split_bytes: int | None = _DEFAULT.split_bytes,
    # end generated: read parameters
    progress: bool = False,
) -> pl.DataFrame:
    """Read TFRecord files into a Polars DataFrame: ``pl.read_tfrecord``, the eager twin of
    :func:`scan_tfrecord` as ``pl.read_parquet`` is of ``pl.scan_parquet``.

    For an Arrow table use :func:`tfsql.read_tfrecord`.

    Parameters
    ----------
    source : str, path, or list of them
        As for :func:`scan_tfrecord`.
    columns : str, list of str or list of int, optional
        Select these columns (names, or positions in the file schema; one name alone as
        ``pl.read_parquet`` takes it); only their features are decoded.
    use_pyarrow, pyarrow_options, memory_map : bool, dict, bool
        Parquet only: their defaults are accepted, anything else raises.
    progress : bool
        Show a progress bar of the bytes read on stderr.
    n_rows, row_index_name, ..., split_bytes
        Every other parameter is :func:`scan_tfrecord`'s, with its meaning and default
        (the TFRecord options are those of :mod:`tfsql.options`, including
        ``infer_bytes``, ``max_record_bytes`` and ``split_bytes``).

    Returns
    -------
    polars.DataFrame

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
    from tfsql.progress import read_bar

    opts.reject_meaningless(use_pyarrow=use_pyarrow, pyarrow_options=pyarrow_options, memory_map=memory_map)
    bar = read_bar("reading", total=None) if progress else None
    try:
        scan = dict(  # scan_tfrecord's parameters, by name (the row index is added after `columns`)
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
            # generated: read options (from tfsql/options.py by python -m tfsql.option_header --write)
            record_type=record_type,
            compression=compression,
            verify_checksums=verify_checksums,
            on_corrupt=on_corrupt,
            infer_sample=infer_sample,
            infer_files=infer_files,
            infer_bytes=infer_bytes,
            lists=lists,
            filesystem=filesystem,
            batch_size=batch_size,
            batch_bytes=batch_bytes,
            threads=threads,
            max_record_bytes=max_record_bytes,
            split_bytes=split_bytes,
            # end generated: read options
        )
        return _read(bar, source, columns, row_index_name, row_index_offset, scan)
    finally:
        if bar is not None:
            bar.close()


def _read(
    bar: Any, source: Any, columns: Any, row_index_name: str | None, row_index_offset: int, options: dict[str, Any]
) -> pl.DataFrame:
    lf = scan_tfrecord(source, _progress=bar, **options)
    if isinstance(columns, str):  # one column, as pl.read_parquet(columns="id") takes it
        columns = [columns]
    if columns is not None:
        names = lf.collect_schema().names()
        picked = [names[c] if isinstance(c, int) and not isinstance(c, bool) else c for c in columns]
        lf = lf.select(picked)
    if row_index_name is not None:
        lf = lf.with_row_index(row_index_name, offset=row_index_offset)
    df = lf.collect()
    if bar is not None and (bar.total is None or bar.n < bar.total):  # nothing opened, pruned files, a row limit
        bar.total = bar.n
        bar.refresh()
    return df
