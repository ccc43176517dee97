"""``tfsql.dataset()``: the one scanner every front end goes through.

:class:`Dataset` subclasses :class:`pyarrow.dataset.Dataset` in Python (as lance does),
so DuckDB scans it with projection and filter pushdown after ``con.register(name, ds)``;
Polars, ``read_tfrecord``, Spark and the CLI call its :class:`Scanner`.

A scan:

1. prunes files with the filter's partition terms (no file is opened for a pruned
   partition),
2. reads each remaining file in chunks and frames its records (CRC-checked),
3. decodes only the needed features (the requested columns plus those the filter
   reads) on worker threads with the GIL released, in file order,
4. appends partition columns and the file path column, applies the filter exactly
   (DuckDB and Polars trust the scanner), keeps the requested columns,
5. stops early at a row limit, or when the consumer abandons the stream.

Examples
--------
>>> import tempfile, pyarrow as pa, pyarrow.compute as pc, tfsql
>>> out = tempfile.mkdtemp()
>>> _ = tfsql.write_tfrecord(pa.table({"x": [1, 2, 3], "split": ["a", "b", "a"]}), out, partition_by=["split"])
>>> ds = tfsql.dataset(out)
>>> ds.schema
x: int64
split: string
>>> ds.to_table(filter=pc.field("split") == "a").column("x").to_pylist()
[1, 3]
>>> ds.count_rows()
3
"""

from __future__ import annotations

import contextlib
import copy
import os
import warnings
from dataclasses import dataclass, replace
from typing import Any, Generator, Iterator, Mapping, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as pads

from tfsql._codec import codec
from tfsql._types import Lists, OnCorrupt, ReadCompression, RecordType
from tfsql.buffers import BufferPool
from tfsql.decode import BlockDecoder, empty_batch, fixed_row_bits, rows_within
from tfsql.discovery import Discovered, FileInfo, discover
from tfsql.errors import TFSQLError
from tfsql.inference import (
    DEFAULT_INFER_BYTES,
    DEFAULT_INFER_FILES,
    DEFAULT_INFER_SAMPLE,
    infer_data_schema,
    sample_indices,
)
from tfsql.parallel import ordered_map
from tfsql.layouts import Layout, detect_layout
from tfsql.partitioning import Partitioning
from tfsql.records import (
    DEFAULT_MAX_RECORD_BYTES,
    FrameReader,
    count_plain_records,
    detect_compression,
    normalize_compression,
    open_decompressed,
)
from tfsql.record_index import indexed_count
from tfsql.splits import RangeReader, piece_bytes, plan_pieces, plan_ranges
from tfsql.schema import (
    RAW_COLUMN,
    ColumnSpec,
    column_specs,
    normalize_schema,
    parse_record_type,
    schema_with_partitions,
)
from tfsql.tfds import apply_features, features_schema

__all__ = ["dataset", "Dataset", "Scanner", "Fragment", "ScanOptions"]

DEFAULT_BATCH_SIZE = 65536
DEFAULT_BATCH_BYTES = 16 << 20


def default_threads() -> int:
    """Decode threads: the machine's cores, at most 8."""
    return max(1, min(8, os.cpu_count() or 1))


@dataclass(frozen=True)
class ScanOptions:
    """Options shared by every scan of a dataset (see :func:`dataset`)."""

    record_type: int = codec.EXAMPLE
    compression: str | None = "infer"
    verify_checksums: bool = True
    on_corrupt: Any = "raise"
    include_file_paths: str | None = None
    batch_size: int = DEFAULT_BATCH_SIZE
    batch_bytes: int = DEFAULT_BATCH_BYTES
    threads: int = 0  # 0: default_threads()
    max_record_bytes: int = DEFAULT_MAX_RECORD_BYTES
    split_bytes: int | None = None  # None: never split a file
    progress: Any = None  # a tqdm bar that file reads advance (tfsql.progress)

    @property
    def decode_threads(self) -> int:
        return self.threads or default_threads()


def dataset(
    source: Any,
    *,
    schema: pa.Schema | Mapping[str, Any] | None = None,
    record_type: RecordType = "example",
    compression: ReadCompression = "infer",
    verify_checksums: bool = True,
    on_corrupt: OnCorrupt = "raise",
    hive_partitioning: bool | None = None,
    hive_schema: pa.Schema | Mapping[str, Any] | None = None,
    include_file_paths: str | None = None,
    infer_sample: int | None = DEFAULT_INFER_SAMPLE,
    infer_files: int | None = DEFAULT_INFER_FILES,
    infer_bytes: int | None = DEFAULT_INFER_BYTES,
    lists: Lists = "auto",
    filesystem: Any = None,
    glob: bool = True,
    batch_size: int = DEFAULT_BATCH_SIZE,
    batch_bytes: int = DEFAULT_BATCH_BYTES,
    threads: int | None = None,
    max_record_bytes: int = DEFAULT_MAX_RECORD_BYTES,
    split_bytes: int | None = None,
    hidden_file_prefix: str | Sequence[str] | None = None,
) -> "Dataset":
    """Open TFRecord files as a dataset: discovered, partitioned, schema resolved.

    Parameters
    ----------
    source : str, path, or list of them
        Files, directories (read recursively), globs (``*``, ``?``, ``[...]``, ``**``)
        and fsspec URLs (``s3://``, ``gs://``, ``memory://``...). Hidden and bookkeeping
        files (``_*``, ``.*``, ``_SUCCESS``, ``*.crc``) are skipped. TFDS dataset
        directories (their JSON metadata is skipped, the schema comes from
        ``features.json``) and TFX ``Split-<name>/`` directories get a ``split``
        column that prunes like a partition column (:mod:`tfsql.layouts`).
    schema : pyarrow.Schema or dict of name -> pyarrow type, optional
        Skip inference: read these columns, cast (range-checked) to these types.
        ``list<list<...>>`` columns read SequenceExample feature lists.
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
    hive_partitioning : bool or None
        None discovers ``key=value`` directories; False ignores them; True requires them.
    hive_schema : pyarrow.Schema or dict, optional
        Types of partition columns (default: int64 when every value is an integer,
        else string).
    include_file_paths : str, optional
        Add a string column of this name holding each row's file.
    infer_sample, infer_files : int or None
        Inference reads the first ``infer_sample`` records of up to ``infer_files``
        files spread over the list (None: all). See :mod:`tfsql.inference`.
    infer_bytes : int or None
        A file's inference sample also ends once it holds this many record bytes
        (default 4 MiB; None: no byte bound; ignored with ``infer_sample=None``).
    lists : {"auto", "always"}
        ``"always"`` infers list columns even where every record holds one value.
    filesystem : fsspec filesystem, optional
        For plain paths on another filesystem.
    glob : bool
        False treats ``*?[`` in paths literally.
    batch_size, batch_bytes : int
        Bounds of each batch: rows, and bytes of both the records read and the Arrow
        columns decoded from them (a batch of many columns holds fewer rows).
    threads : int, optional
        Decode threads (default: cores, at most 8); 1 decodes in the calling thread.
    max_record_bytes : int
        A record whose header claims more bytes (default 2 GiB) is reported as corrupt
        (:class:`~tfsql.errors.CorruptRecordError`) before memory is allocated for it.
    split_bytes : int or None
        With several threads, an uncompressed file of at least twice this size is read
        as byte ranges of this size on several threads at once (see
        :mod:`tfsql.splits`; output order is kept); None (the default) reads every file
        whole.
    hidden_file_prefix : str or list of str, optional
        Also skip files found in directories or by globs whose name starts with one of
        these prefixes.

    Returns
    -------
    Dataset

    Examples
    --------
    >>> import tempfile, pyarrow as pa, tfsql
    >>> path = tempfile.mkdtemp()
    >>> _ = tfsql.write_tfrecord(pa.table({"id": [1, 2], "emb": [[0.5, 1.0], [2.0]]}), path)
    >>> tfsql.dataset(path).schema.types
    [DataType(int64), ListType(list<item: float>)]
    >>> tfsql.dataset(path, schema={"id": pa.int8()}).to_table().to_pylist()
    [{'id': 1}, {'id': 2}]
    """
    rtype = parse_record_type(record_type)
    options = ScanOptions(
        record_type=rtype,
        compression=normalize_compression(compression),
        verify_checksums=bool(verify_checksums),
        on_corrupt=on_corrupt if callable(on_corrupt) else _check_choice("on_corrupt", on_corrupt, ("raise", "skip")),
        include_file_paths=include_file_paths,
        batch_size=_positive("batch_size", batch_size),
        batch_bytes=_positive("batch_bytes", batch_bytes),
        threads=0 if threads is None else _positive("threads", threads),
        max_record_bytes=_positive("max_record_bytes", max_record_bytes),
        split_bytes=None if split_bytes is None else _positive("split_bytes", split_bytes, or_none=True),
    )
    infer_sample = None if infer_sample is None else _positive("infer_sample", infer_sample, or_none=True)
    infer_files = None if infer_files is None else _positive("infer_files", infer_files, or_none=True)
    infer_bytes = None if infer_bytes is None else _positive("infer_bytes", infer_bytes, or_none=True)
    found, layout = detect_layout(discover(source, filesystem=filesystem, glob=glob, hidden_file_prefix=hidden_file_prefix))
    if layout is not None:
        hive_schema = layout.without_split(hive_schema)
    partitioning = Partitioning.discover(found.files, hive_partitioning=hive_partitioning, hive_schema=hive_schema)
    user_schema = normalize_schema(schema)
    stats: dict = {}
    if rtype == codec.RAW:
        data_schema = user_schema if user_schema is not None else pa.schema([pa.field(RAW_COLUMN, pa.binary())])
        if len(data_schema) != 1:
            raise ValueError("record_type='bytes' reads one column; schema= must name exactly one binary column")
    elif user_schema is not None:
        data_schema = user_schema
    elif (described := _tfds_features(found, layout)) is not None and described[1]:
        data_schema = described[0]
    else:
        chosen = [i for i in range(len(found.files)) if found.files[i].size > 0]
        chosen = [chosen[j] for j in sample_indices(len(chosen), infer_files)]
        data_schema, stats = infer_data_schema(
            [found.files[i].display() for i in chosen],
            lambda j: open_frame_reader(found, found.files[chosen[j]], options),
            record_type=rtype,
            infer_sample=infer_sample,
            lists=lists,
            infer_bytes=infer_bytes,
        )
        if described is not None:
            data_schema = apply_features(data_schema, described[0])
    if layout is not None:
        partitioning = layout.add_split_column(partitioning, data_schema)
    column_specs(data_schema, rtype)  # validate early: unsupported types, lists of lists
    # Features inference saw without a kind were reported then (they carry no values);
    # the scan does not report them again as missing from the sample.
    kindless = {key for key, st in stats.items() if set(st.kinds) <= {codec.KIND_NONE}}
    return Dataset(found, partitioning, data_schema, options, schema_inferred=user_schema is None,
                   reported_unknown=kindless)


def _tfds_features(found: Discovered, layout: Layout | None) -> tuple[pa.Schema, bool] | None:
    """The columns a TFDS directory's ``features.json`` describes (see `tfsql.tfds`)."""
    if layout is None or layout.kind != "tfds" or layout.directory is None:
        return None
    return features_schema(found.filesystem, layout.directory)


def _positive(name: str, value: int, *, or_none: bool = False) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        also = " or None (all of them)" if or_none else ""
        raise ValueError(f"{name} must be a positive integer{also}, not {value!r}")
    return value


def _check_choice(name: str, value: str, choices: Sequence[str]) -> str:
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, choices))}, not {value!r}")
    return value


def open_raw(found: Discovered, file: FileInfo) -> Any:
    """Open one file of a dataset as a binary stream of its stored bytes."""
    if found.is_local:
        return open(file.path, "rb", buffering=0)
    return found.filesystem.open(file.path, "rb")


def _counted(raw: Any, options: ScanOptions) -> Any:
    """``raw``, counting its reads on the scan's progress bar when it has one."""
    if options.progress is None:
        return raw
    from tfsql.progress import CountingFile

    return CountingFile(raw, options.progress)


def open_frame_reader(found: Discovered, file: FileInfo, options: ScanOptions) -> FrameReader:
    """Open one file of a dataset for framing (decompressing as the options say)."""
    raw = _counted(open_raw(found, file), options)
    try:
        stream = open_decompressed(raw, options.compression, path=file.display())
    except BaseException:
        raw.close()
        raise
    return FrameReader(
        stream,
        path=file.display(),
        verify=options.verify_checksums,
        on_corrupt=options.on_corrupt,
        max_record_bytes=options.max_record_bytes,
        stream_size=_raw_size(raw, file) if stream is raw else None,
    )


def _raw_size(raw: Any, file: FileInfo) -> int | None:
    """The size of an open file now (it may have changed since discovery)."""
    try:
        return os.fstat(raw.fileno()).st_size
    except (AttributeError, OSError, ValueError, NotImplementedError):
        return file.size or None


def count_file_records(found: Discovered, file: FileInfo, options: ScanOptions) -> int:
    """The number of records in one file. An uncompressed local file is counted from
    its index sidecar when it has a consistent one (:mod:`tfsql.record_index`), else
    from its record headers alone (12 bytes read per record); other files are framed. With
    ``on_corrupt`` other than ``"raise"`` data CRCs are checked, so that records a scan
    would skip are not counted."""
    if options.on_corrupt == "raise" and found.is_local and hasattr(codec, "count_headers"):
        with open(file.path, "rb", buffering=0) as raw:
            stream = open_decompressed(raw, options.compression, path=file.display())
            if stream is raw:
                indexed = indexed_count(file.path, raw.fileno())  # a consistent `tfsql index` sidecar
                if indexed is not None:
                    return indexed
                return count_plain_records(
                    raw.fileno(),
                    path=file.display(),
                    size=os.fstat(raw.fileno()).st_size,
                    max_record_bytes=options.max_record_bytes,
                )
    header_only = replace(options, verify_checksums=False) if options.on_corrupt == "raise" else options
    with contextlib.closing(open_frame_reader(found, file, header_only)) as reader:
        return sum(len(block) for block in reader.blocks(max_records=1 << 20, max_bytes=-1))


def _referenced_columns(expression: pc.Expression, schema: pa.Schema, *, role: str = "filter") -> list[str]:
    """The columns of ``schema`` that ``expression`` (a ``"filter"``, or a
    ``"projection"`` of any type) reads.

    pyarrow has no public API for an expression's field references, so each column
    whose name occurs in the expression's text is dropped in turn from an empty table
    and the expression evaluated: a failure means it is referenced.
    """

    def evaluate(table: pa.Table) -> None:
        if role == "filter":
            table.filter(expression)
        else:
            pads.dataset(table).to_table(columns={"_": expression})

    text = str(expression)
    empty = schema.empty_table()
    try:
        evaluate(empty)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError) as exc:
        raise ValueError(f"{role} {expression} does not apply to the dataset's schema: {exc}") from None
    needed = []
    for name in schema.names:
        if name not in text:
            continue
        try:
            evaluate(empty.drop_columns([name]))
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, KeyError):
            needed.append(name)
    return needed


def _constant_column(value: pa.Scalar, n: int) -> pa.Array:
    return pa.array([value.as_py()], value.type).take(np.zeros(n, dtype=np.int32))


class Dataset(pads.Dataset):
    """A TFRecord dataset: files, partition values, a schema and scan options.

    Build one with :func:`tfsql.dataset`. Every method of
    :class:`pyarrow.dataset.Dataset` is overridden (an inherited one would touch the
    unset C++ dataset): reading methods work, the rest raise ``NotImplementedError``
    saying what to do instead.
    """

    def __init__(
        self,
        found: Discovered,
        partitioning: Partitioning | None,
        data_schema: pa.Schema,
        options: ScanOptions,
        *,
        file_indices: Sequence[int] | None = None,
        filter: pc.Expression | None = None,
        schema_inferred: bool = False,
        reported_unknown: set | None = None,
        byte_range: tuple[int, int] | None = None,
    ) -> None:
        # pyarrow's Dataset.__init__ forbids instantiation; it is deliberately not called.
        self._found = found
        self._partitioning = partitioning
        self._data_schema = data_schema
        self._options = options
        self._file_indices = list(range(len(found.files))) if file_indices is None else list(file_indices)
        self._filter = filter
        # Features found while scanning that an inferred schema lacks are reported once.
        self._schema_inferred = schema_inferred and options.record_type != codec.RAW
        self._reported_unknown = set() if reported_unknown is None else reported_unknown
        self._byte_range = byte_range  # one file's byte range (tfsql.splits)
        self._schema = schema_with_partitions(
            data_schema,
            partitioning.schema if partitioning is not None else None,
            options.include_file_paths,
        )

    # ------------------------------------------------------------------ properties
    @property
    def schema(self) -> pa.Schema:
        """Data columns, then partition columns, then the file path column."""
        return self._schema

    @property
    def data_schema(self) -> pa.Schema:
        """The columns decoded from the records."""
        return self._data_schema

    @property
    def partition_schema(self) -> pa.Schema:
        """The hive partition columns (empty when the files are not partitioned)."""
        return self._partitioning.schema if self._partitioning is not None else pa.schema([])

    @property
    def files(self) -> list[str]:
        """The files this dataset reads, as messages name them."""
        return [self._found.files[i].display() for i in self._file_indices]

    @property
    def options(self) -> ScanOptions:
        """The scan options this dataset was opened with."""
        return self._options

    @property
    def partition_values(self) -> pa.Table:
        """One row per file (in :attr:`files` order) holding its partition values."""
        if self._partitioning is None:
            return pa.Table.from_batches([empty_batch(len(self._file_indices))])
        return self._partitioning.values.take(self._file_indices)

    def select_files(self, positions: Sequence[int]) -> "Dataset":
        """A dataset over some of this dataset's files (``positions`` index :attr:`files`),
        keeping schema, partition values and options.

        Examples
        --------
        >>> import tempfile, pyarrow as pa, tfsql
        >>> path = tempfile.mkdtemp()
        >>> _ = tfsql.write_tfrecord(pa.table({"x": [1, 2], "k": [1, 2]}), path, partition_by=["k"])
        >>> tfsql.dataset(path).select_files([1]).to_table().to_pylist()
        [{'x': 2, 'k': 2}]
        """
        return self._derive(file_indices=[self._file_indices[p] for p in positions])

    @property
    def partition_expression(self) -> pc.Expression:
        return pc.scalar(True)

    @property
    def _scan_options(self):
        # pyarrow.dataset.dataset([ds, ...]) reads this before building a C++
        # UnionDataset from the children's C++ datasets, which a tfsql Dataset does not
        # have (the union would crash the process): refuse clearly instead.
        raise TypeError(
            "pyarrow.dataset.dataset() cannot combine tfsql datasets; pass every source to "
            "one tfsql.dataset([...]) call instead"
        )

    def _get_fragments(self, *args, **kwargs):
        # pyarrow's C++ fragment listing; would dereference the unset C++ dataset.
        raise TypeError("tfsql.Dataset has no C++ fragments; use get_fragments()")

    def _scanner_options(self, *args, **kwargs):
        # Builds C++ scan options from the unset C++ dataset; tfsql's scanner is the way in.
        raise TypeError("tfsql.Dataset has no C++ scan options; use dataset.scanner(...)")

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        """The Arrow PyCapsule stream of a full scan, so that anything taking an Arrow
        stream reads the dataset: ``pl.DataFrame(ds)``,
        ``pyarrow.dataset.write_dataset(ds, ...)``, ``tfsql.write_tfrecord(ds, ...)``.
        (pyarrow functions that need a C++ dataset, such as
        ``pyarrow.dataset.Scanner.from_dataset``, cannot take a tfsql dataset.)"""
        return self.scanner().to_reader().__arrow_c_stream__(requested_schema)

    # ------------------------------------------------------------------ derived datasets
    def _derive(self, **changes) -> "Dataset":
        args = dict(
            found=self._found,
            partitioning=self._partitioning,
            data_schema=self._data_schema,
            options=self._options,
            file_indices=self._file_indices,
            filter=self._filter,
            schema_inferred=self._schema_inferred,
            reported_unknown=self._reported_unknown,
            byte_range=self._byte_range,
        )
        args.update(changes)
        return Dataset(
            args.pop("found"),
            args.pop("partitioning"),
            args.pop("data_schema"),
            args.pop("options"),
            **args,
        )

    def filter(self, expression: pc.Expression) -> "Dataset":
        """A dataset whose scans apply ``expression`` (combined with any earlier one)."""
        if not isinstance(expression, pc.Expression):
            raise TypeError(f"filter must be a pyarrow.compute.Expression, not {type(expression).__name__}")
        combined = expression if self._filter is None else (self._filter & expression)
        return self._derive(filter=combined)

    def replace_schema(self, schema: pa.Schema) -> "Dataset":
        """A dataset reading the data columns of ``schema`` with its types (partition and
        file path columns in ``schema`` are ignored)."""
        schema = normalize_schema(schema)
        extra = set(self.partition_schema.names) | {self._options.include_file_paths}
        data = pa.schema([f for f in schema if f.name not in extra])
        column_specs(data, self._options.record_type)
        return self._derive(data_schema=data, schema_inferred=False)

    def with_options(self, **changes: Any) -> "Dataset":
        """A dataset with some :class:`ScanOptions` changed (e.g. ``threads=1``)."""
        return self._derive(options=replace(self._options, **changes))

    # ------------------------------------------------------------------ scanning
    def scanner(
        self,
        columns: Sequence[str] | Mapping[str, pc.Expression] | None = None,
        filter: pc.Expression | None = None,
        batch_size: int | None = None,
        batch_readahead: int | None = None,
        fragment_readahead: int | None = None,
        fragment_scan_options: Any = None,
        use_threads: bool = True,
        cache_metadata: bool = True,
        memory_pool: Any = None,
        *,
        limit: int | None = None,
    ) -> "Scanner":
        """A :class:`Scanner` of the given columns and filter (pyarrow's signature;
        ``limit`` stops after that many output rows)."""
        if filter is not None and not isinstance(filter, pc.Expression):
            raise TypeError(f"filter must be a pyarrow.compute.Expression, not {type(filter).__name__}")
        if self._filter is not None:
            filter = self._filter if filter is None else (self._filter & filter)
        return Scanner(
            self,
            columns=columns,
            filter=filter,
            batch_size=self._options.batch_size if batch_size is None else _positive("batch_size", batch_size),
            threads=self._options.decode_threads if use_threads else 1,
            limit=limit,
        )

    def to_batches(self, columns=None, filter=None, batch_size=None, **kwargs) -> Iterator[pa.RecordBatch]:
        """Iterate over record batches (see :meth:`scanner`)."""
        return self.scanner(columns=columns, filter=filter, batch_size=batch_size, **kwargs).to_batches()

    def to_table(self, columns=None, filter=None, batch_size=None, *, progress: bool = False, **kwargs) -> pa.Table:
        """Read into a table (see :meth:`scanner`); ``progress=True`` shows a bar of the
        bytes read on stderr."""
        scanner = self.scanner(columns=columns, filter=filter, batch_size=batch_size, **kwargs)
        if not progress:
            return scanner.to_table()
        from tfsql.progress import with_read_progress

        with with_read_progress(self, "reading", file_indices=scanner._file_indices) as ds:
            return ds.scanner(columns=columns, filter=filter, batch_size=batch_size, **kwargs).to_table()

    def head(self, num_rows: int, columns=None, filter=None, batch_size=None, **kwargs) -> pa.Table:
        """The first ``num_rows`` rows; reading stops as soon as they are found."""
        return self.scanner(columns=columns, filter=filter, batch_size=batch_size, **kwargs).head(num_rows)

    def take(self, indices, columns=None, filter=None, batch_size=None, **kwargs) -> pa.Table:
        """Rows at ``indices`` (of the filtered scan); reads up to the largest index."""
        idx = pa.array(indices, pa.int64()) if not isinstance(indices, pa.Array) else indices.cast(pa.int64())
        if len(idx) == 0:
            return self.scanner(columns=columns).projected_schema.empty_table()
        if pc.min(idx).as_py() < 0:
            raise IndexError("take: negative indices are not supported")
        table = self.scanner(columns=columns, filter=filter, batch_size=batch_size, **kwargs).head(pc.max(idx).as_py() + 1)
        if pc.max(idx).as_py() >= table.num_rows:
            raise IndexError(f"take: index {pc.max(idx).as_py()} out of range for {table.num_rows} rows")
        return table.take(idx)

    def count_rows(self, filter=None, batch_size=None, **kwargs) -> int:
        """Count rows; without a filter on data columns only record headers are read."""
        return self.scanner(columns=[], filter=filter, batch_size=batch_size, **kwargs).count_rows()

    def get_fragments(self, filter: pc.Expression | None = None, *, split_bytes: int | None = None) -> list["Fragment"]:
        """One :class:`Fragment` per file that may match ``filter`` (partition pruning);
        with ``split_bytes``, an uncompressed file larger than that is cut into byte
        ranges of that size, one fragment each (see :mod:`tfsql.splits`).

        Examples
        --------
        >>> import tempfile, pyarrow as pa, tfsql
        >>> path = tempfile.mkdtemp()
        >>> _ = tfsql.write_tfrecord(pa.table({"x": list(range(100))}), path)
        >>> parts = tfsql.dataset(path).get_fragments(split_bytes=1000)
        >>> [(p.start, p.stop) for p in parts]
        [(0, 1000), (1000, 2000), (2000, 3000)]
        >>> sum(p.count_rows() for p in parts), parts[1].to_table().column("x")[0].as_py()
        (100, 34)
        """
        if split_bytes is not None:
            _positive("split_bytes", split_bytes)
        fragments = []
        for i in self._pruned_indices(filter):
            if self._byte_range is not None:
                fragments.append(Fragment(self._derive(file_indices=[i])))
                continue
            file = self._found.files[i]
            if split_bytes is None or file.size <= split_bytes or not self._splittable(i):
                fragments.append(Fragment(self._derive(file_indices=[i])))
                continue
            for span in plan_ranges(file.size, split_bytes):
                fragments.append(Fragment(self._derive(file_indices=[i], byte_range=span)))
        return fragments

    def file_range(self, start: int, stop: int) -> "Dataset":
        """This one-file dataset restricted to the records whose header starts in
        bytes ``[start, stop)`` of its (uncompressed) file; see :mod:`tfsql.splits`."""
        if len(self._file_indices) != 1:
            raise ValueError(f"file_range needs a dataset of one file, not {len(self._file_indices)}")
        if not (isinstance(start, int) and isinstance(stop, int) and 0 <= start <= stop):
            raise ValueError(f"file_range: need 0 <= start <= stop, not {start!r}, {stop!r}")
        if not self._splittable(self._file_indices[0]):
            raise ValueError(f"{self.files[0]} is compressed: a compressed file can only be read whole")
        return self._derive(byte_range=(start, stop))

    def _splittable(self, index: int) -> bool:
        """Whether file ``index`` can be read in byte ranges: uncompressed and seekable."""
        compression = self._options.compression
        if compression not in (None, "infer"):
            return False
        file = self._found.files[index]
        if compression == "infer" and file.size > 0:
            with contextlib.closing(open_raw(self._found, file)) as raw:
                if detect_compression(raw.read(12)) is not None:
                    return False
        return True

    def _pruned_indices(self, filter: pc.Expression | None) -> list[int]:
        if filter is None or self._partitioning is None:
            return list(self._file_indices)
        keep = set(self._partitioning.prune(filter, self._schema))
        return [i for i in self._file_indices if i in keep]

    # ------------------------------------------------------------------ unsupported
    def join(self, *args, **kwargs):
        raise NotImplementedError("tfsql.Dataset.join: read with to_table() and join the tables, or use DuckDB/Polars")

    def join_asof(self, *args, **kwargs):
        raise NotImplementedError("tfsql.Dataset.join_asof: read with to_table() first, or use DuckDB/Polars")

    def sort_by(self, *args, **kwargs):
        raise NotImplementedError("tfsql.Dataset.sort_by: read with to_table() and sort the table, or use DuckDB/Polars")

    def __reduce__(self):
        return (Dataset, (self._found, self._partitioning, self._data_schema, self._options),
                {"_file_indices": self._file_indices, "_filter": self._filter, "_byte_range": self._byte_range})

    def __setstate__(self, state):
        self._file_indices = state["_file_indices"]
        self._filter = state["_filter"]
        self._byte_range = state.get("_byte_range")

    def __repr__(self) -> str:
        return f"<tfsql.Dataset: {len(self._file_indices)} files>\n{self._schema}"


class Fragment:
    """One file, or one byte range of a file, of a :class:`Dataset` (what Spark and
    parallel engines distribute)."""

    def __init__(self, dataset: Dataset) -> None:
        self._dataset = dataset

    @property
    def path(self) -> str:
        return self._dataset.files[0]

    @property
    def byte_range(self) -> tuple[int, int] | None:
        """``(start, stop)`` when the fragment is a byte range of its file, else None."""
        return self._dataset._byte_range

    @property
    def start(self) -> int:
        """First byte of the range this fragment reads (0 for a whole file)."""
        span = self._dataset._byte_range
        return 0 if span is None else span[0]

    @property
    def stop(self) -> int:
        """End of the range this fragment reads (the file's size for a whole file)."""
        span = self._dataset._byte_range
        return self._dataset._found.files[self._dataset._file_indices[0]].size if span is None else span[1]

    @property
    def partition_values(self) -> dict[str, Any]:
        part = self._dataset._partitioning
        if part is None:
            return {}
        return part.values.slice(self._dataset._file_indices[0], 1).to_pylist()[0]

    @property
    def partition_expression(self) -> pc.Expression:
        expr = pc.scalar(True)
        for name, value in self.partition_values.items():
            term = pc.field(name).is_null() if value is None else pc.field(name) == value
            expr = expr & term
        return expr

    @property
    def physical_schema(self) -> pa.Schema:
        return self._dataset.data_schema

    def scanner(self, schema=None, columns=None, filter=None, **kwargs) -> "Scanner":
        dataset = self._dataset if schema is None else self._dataset.replace_schema(schema)
        return dataset.scanner(columns=columns, filter=filter, **kwargs)

    def to_batches(self, schema=None, columns=None, filter=None, **kwargs):
        return self.scanner(schema, columns, filter, **kwargs).to_batches()

    def to_table(self, schema=None, columns=None, filter=None, **kwargs) -> pa.Table:
        return self.scanner(schema, columns, filter, **kwargs).to_table()

    def count_rows(self, filter=None, **kwargs) -> int:
        return self._dataset.count_rows(filter=filter, **kwargs)

    def head(self, num_rows: int, columns=None, filter=None, **kwargs) -> pa.Table:
        return self._dataset.head(num_rows, columns=columns, filter=filter, **kwargs)

    def __repr__(self) -> str:
        span = self._dataset._byte_range
        return f"<tfsql.Fragment {self.path}{'' if span is None else f' [bytes {span[0]}-{span[1]}]'}>"


class Scanner:
    """A planned scan: the columns to output, the filter, the files left after pruning.

    Examples
    --------
    >>> import tempfile, pyarrow as pa, tfsql
    >>> path = tempfile.mkdtemp()
    >>> _ = tfsql.write_tfrecord(pa.table({"a": [1, 2, 3], "b": ["x", "y", "z"]}), path)
    >>> sc = tfsql.dataset(path).scanner(columns=["b"], filter=pa.compute.field("a") > 1)
    >>> sc.projected_schema
    b: string
    >>> sc.to_table().column("b").to_pylist()
    ['y', 'z']
    """

    def __init__(
        self,
        dataset: Dataset,
        *,
        columns: Sequence[str] | Mapping[str, pc.Expression] | None,
        filter: pc.Expression | None,
        batch_size: int,
        threads: int,
        limit: int | None = None,
    ) -> None:
        self._dataset = dataset
        self._filter = filter
        self._batch_size = batch_size
        self._threads = threads
        if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool) or limit < 0):
            raise ValueError(f"limit must be a non-negative integer or None, not {limit!r}")
        self._limit = limit
        self._buffers = BufferPool()  # read buffers reused within this scan
        schema = dataset.schema
        if columns is None:
            self._columns: list[str] = list(schema.names)
            self._expressions = None
        elif isinstance(columns, Mapping):
            self._columns = []
            self._expressions = dict(columns)
        else:
            self._columns = list(columns)
            self._expressions = None
            missing = [c for c in self._columns if c not in schema.names]
            if missing:
                raise KeyError(
                    f"column {missing[0]!r} is not in the dataset; its columns are {', '.join(schema.names)}"
                )
        needed = set(self._columns)
        filter_columns = set(_referenced_columns(filter, schema)) if filter is not None else set()
        needed.update(filter_columns)
        if self._expressions is not None:
            for expr in self._expressions.values():
                if isinstance(expr, pc.Expression):
                    needed.update(_referenced_columns(expr, schema, role="projection"))
        data_names = [n for n in dataset.data_schema.names if n in needed]
        # Specs come from the whole data schema: a feature-list column's feature name
        # can depend on another column (tfsql.schema.feature_list_name).
        self._specs: list[ColumnSpec] = [
            spec for spec in column_specs(dataset.data_schema, dataset.options.record_type) if spec.name in needed
        ]
        self._partition_names = [n for n in dataset.partition_schema.names if n in needed]
        file_col = dataset.options.include_file_paths
        self._with_file_column = file_col is not None and file_col in needed
        self._track_unknown = dataset._schema_inferred and len(data_names) == len(dataset.data_schema)
        self._file_indices = dataset._pruned_indices(filter)
        self._data_filter_free = not (filter_columns - set(dataset.partition_schema.names))
        if self._expressions is not None:
            probe = pads.dataset(schema.empty_table()).to_table(columns=self._expressions, filter=filter)
            self._projected = probe.schema
        else:
            self._projected = pa.schema([schema.field(c) for c in self._columns])

    # ------------------------------------------------------------------ metadata
    @property
    def projected_schema(self) -> pa.Schema:
        """The schema of the batches this scan yields."""
        return self._projected

    @property
    def dataset_schema(self) -> pa.Schema:
        return self._dataset.schema

    @property
    def files(self) -> list[str]:
        """The files this scan opens, after partition pruning."""
        found = self._dataset._found
        return [found.files[i].display() for i in self._file_indices]

    # ------------------------------------------------------------------ reading
    def _blocks(self) -> Iterator[tuple[int, Any]]:
        """Frame the files in order; without a filter, stop once ``limit`` records
        are read (decode-ahead then never opens files a LIMIT does not need)."""
        dataset = self._dataset
        found = dataset._found
        options = dataset.options
        remaining = self._limit if self._filter is None else None
        for i in self._file_indices:
            file = found.files[i]
            if file.size == 0:
                continue
            if remaining is not None and remaining <= 0:
                return
            spans = self._ranges_of(i) if remaining is None or dataset._byte_range is not None else None
            if spans is not None:
                yield from self._range_tasks(i, spans)
                continue
            rows = rows_within(options.batch_bytes, self._row_bits(i), self._batch_size)
            with contextlib.closing(open_frame_reader(found, file, options)) as reader:
                reader.buffers = self._buffers
                for block in reader.blocks(rows, options.batch_bytes, limit=remaining):
                    yield i, block
                if remaining is not None:
                    remaining -= reader.records_read

    def _row_bits(self, file_index: int) -> int:
        """Output bits each row of this file costs before its values (decoded columns,
        partition and file path constants): blocks are cut so that a batch's columns stay
        within ``batch_bytes`` even when its records are empty."""
        bits = fixed_row_bits(self._specs)
        if self._partition_names:
            values = self._dataset._partitioning.values  # type: ignore[union-attr]  # set when partitioned
            for name in self._partition_names:
                scalar = values.column(name)[file_index]
                bits += 33 + 8 * len(scalar.as_py() or "") if pa.types.is_string(scalar.type) else 65
        if self._with_file_column:
            bits += 33 + 8 * len(self._dataset._found.files[file_index].display().encode())
        return bits

    def _ranges_of(self, index: int) -> list[tuple[int, int]] | None:
        """The byte ranges to read file ``index`` as (None: whole, as blocks): the
        dataset's own range, or ranges for the decode threads when the file is large
        and uncompressed."""
        dataset = self._dataset
        if dataset._byte_range is not None:
            return [dataset._byte_range]
        split = dataset.options.split_bytes
        size = dataset._found.files[index].size
        if self._threads <= 1 or split is None or size < 2 * split or not dataset._splittable(index):
            return None
        return plan_ranges(size, split)

    def _range_tasks(self, file_index: int, spans: list[tuple[int, int]]) -> Iterator[tuple[int, "_RangeTask"]]:
        """The ranges cut into pieces of about a batch (:func:`tfsql.splits.plan_pieces`):
        a piece is one unit of decode work, so memory is bounded by the batch size
        whatever the range size. Only the first piece's start is trusted; every later
        piece is checked against the end of the one before (:meth:`_checked_ranges`)."""
        piece = piece_bytes(self._dataset.options.batch_bytes)
        own_range = self._dataset._byte_range is not None
        for k, (start, stop) in enumerate(spans):
            pieces = plan_pieces(start, stop, piece)
            for j, (a, b) in enumerate(pieces):
                yield file_index, _RangeTask(a, b, trusted=k == 0 and j == 0, check_end_from=stop if own_range else None)

    def _read_range(
        self,
        decoder: BlockDecoder,
        file_index: int,
        task: "_RangeTask",
        start: int | None,
        hints: dict | None = None,
        *,
        raise_errors: bool = False,
    ) -> "_RangeResult":
        """Decode the records whose header starts in the task's range, from the record
        boundary ``start`` (None: find it). An error is returned in the result, to be
        raised once the range's start is confirmed (``raise_errors``: raised at once).
        ``hints`` gets where the next piece's first record starts, so that a piece read
        after the one before it (always, with one thread) needs no search."""
        found = self._dataset._found
        file = found.files[file_index]
        options = self._dataset.options
        batches: list[pa.RecordBatch] = []
        with contextlib.closing(_counted(open_raw(found, file), options)) as raw:
            reader = RangeReader(
                raw, task.start, task.stop, file.size, path=file.display(), verify=options.verify_checksums,
                on_corrupt=options.on_corrupt, boundary=start, max_record_bytes=options.max_record_bytes,
                buffers=self._buffers,
            )
            rows = rows_within(options.batch_bytes, self._row_bits(file_index), self._batch_size)
            try:
                for block in reader.blocks(rows, options.batch_bytes, check_end_from=task.check_end_from):
                    batches.append(self._decode_block(decoder, (file_index, block)))
            except TFSQLError as exc:
                if raise_errors:
                    raise
                # Raised once the check against the previous range says this range
                # did start at a true boundary (else it is read again from there).
                return _RangeResult(task, reader.first, None, [], error=exc)
        if hints is not None and reader.chain_end is not None:
            hints[(file_index, task.stop)] = reader.chain_end
        return _RangeResult(task, reader.first, reader.chain_end, batches)

    def _decode_item(self, decoder: BlockDecoder, item: tuple[int, Any], hints: dict) -> Any:
        if isinstance(item[1], _RangeTask):
            hint = hints.pop((item[0], item[1].start), None)
            return item[0], self._read_range(decoder, item[0], item[1], hint, hints)
        return item[0], self._decode_block(decoder, item)

    def _decode_block(self, decoder: BlockDecoder, item: tuple[int, Any]) -> pa.RecordBatch:
        file_index, block = item
        if self._track_unknown:
            unknown: set = set()
            batch = decoder.decode(block, unknown=unknown)
            if unknown:
                self._report_unknown(unknown, block.path)
        else:
            batch = decoder.decode(block)
        n = len(block)
        arrays = list(batch.columns)
        fields = list(batch.schema)
        if self._partition_names:
            values = self._dataset._partitioning.values  # type: ignore[union-attr]  # set when partitioned
            for name in self._partition_names:
                scalar = values.column(name)[file_index]
                arrays.append(_constant_column(scalar, n))
                fields.append(values.schema.field(name))
        if self._with_file_column:
            name = self._dataset.options.include_file_paths
            arrays.append(_constant_column(pa.scalar(self._dataset._found.files[file_index].display()), n))
            fields.append(pa.field(name, pa.string()))
        if not fields:
            batch = empty_batch(n)
        else:
            batch = pa.RecordBatch.from_arrays(arrays, schema=pa.schema(fields))
        if self._filter is not None:
            batch = batch.filter(self._filter)
        if self._expressions is not None:
            return _project_expressions(batch, self._expressions, self._projected)
        if not self._columns:
            return empty_batch(batch.num_rows)
        return batch.select(self._columns)

    def _report_unknown(self, unknown: set, path: str) -> None:
        reported = self._dataset._reported_unknown
        for location, raw_name in sorted(unknown):
            name = raw_name.decode("utf-8", errors="backslashreplace")
            if (location, name) in reported:
                continue
            reported.add((location, name))
            where = "feature list" if location == codec.FEATURE_LISTS else "feature"
            warnings.warn(
                f"{where} {name!r} in {path} is not in the schema inferred from the sample, "
                "so it is not read; pass infer_sample=None (infer from every record) or "
                "schema= to include it",
                stacklevel=2,
            )

    def to_batches(self) -> Generator[pa.RecordBatch, None, None]:
        """Yield batches in file order; stops early at the scan's limit."""
        decoder = BlockDecoder(self._specs, self._dataset.options.record_type)
        hints: dict = {}  # (file, piece start) -> its first record, from the piece before
        stream = ordered_map(
            self._blocks,
            lambda item: self._decode_item(decoder, item, hints),
            threads=self._threads,
        )
        remaining = self._limit
        try:
            for batch in self._checked_ranges(decoder, stream):
                if remaining is not None:
                    if batch.num_rows >= remaining:
                        if remaining:
                            yield batch.slice(0, remaining)
                        return
                    remaining -= batch.num_rows
                if batch.num_rows:
                    yield batch
        finally:
            stream.close()

    def _checked_ranges(self, decoder: BlockDecoder, stream: Iterator[tuple[int, Any]]) -> Iterator[pa.RecordBatch]:
        """Flatten decoded items into batches, checking that each byte range of a file
        starts where the previous one's last record ended; a range that does not (a
        corrupt region, a misleading payload) is read again from there."""
        expected: int | None = None  # where the next range's first record must start
        for file_index, item in stream:
            if not isinstance(item, _RangeResult):
                yield item
                continue
            task = item.task
            if task.trusted:
                expected = item.first if task.start else 0
            if expected is not None and item.first != expected and not (item.first is None and expected >= task.stop):
                item = self._read_range(decoder, file_index, task, expected, raise_errors=True)
            if item.error is not None:
                raise item.error
            if item.first is not None and item.first < task.stop:
                expected = item.chain_end
            yield from item.batches

    def to_reader(self) -> pa.RecordBatchReader:
        """A ``pyarrow.RecordBatchReader`` over :meth:`to_batches` (lazy)."""
        return pa.RecordBatchReader.from_batches(self._projected, self.to_batches())

    def to_table(self) -> pa.Table:
        return pa.Table.from_batches(list(self.to_batches()), schema=self._projected)

    def head(self, num_rows: int) -> pa.Table:
        """The first ``num_rows`` rows; reading stops once they are found."""
        if num_rows < 0:
            raise ValueError("head: num_rows must be >= 0")
        limited = copy.copy(self)
        limited._limit = num_rows if self._limit is None else min(num_rows, self._limit)
        return limited.to_table()

    def count_rows(self) -> int:
        """Count the rows this scan yields; reads only record headers when the filter
        (if any) touches partition columns only. With ``on_corrupt`` other than
        ``"raise"`` the data CRCs are still checked, so that records the scan would
        skip are not counted."""
        if self._data_filter_free and self._limit is None and self._dataset._byte_range is None:
            found = self._dataset._found
            options = self._dataset.options
            return sum(
                count_file_records(found, found.files[i], options)
                for i in self._file_indices
                if found.files[i].size > 0
            )
        return sum(b.num_rows for b in self.to_batches())

    def __repr__(self) -> str:
        return f"<tfsql.Scanner {len(self._file_indices)} files>\n{self._projected}"


@dataclass(frozen=True)
class _RangeTask:
    """Read the records whose header starts in bytes ``[start, stop)`` of a file.
    ``trusted``: the boundary found at ``start`` is taken as is (the first piece of a
    file or of the dataset's own range); otherwise it is checked against the end of the
    piece before. ``check_end_from``: the end of the dataset's own range, which no later
    piece checks (see :meth:`tfsql.splits.RangeReader.blocks`; None: a later piece does)."""

    start: int
    stop: int
    trusted: bool = True
    check_end_from: int | None = None


@dataclass
class _RangeResult:
    """A decoded range: where its first record starts (None: none starts in it), where
    the record after its last one starts (None: unknown after a corrupt region)."""

    task: _RangeTask
    first: int | None
    chain_end: int | None
    batches: list
    error: Exception | None = None


def _project_expressions(batch: pa.RecordBatch, expressions: Mapping[str, Any], schema: pa.Schema) -> pa.RecordBatch:
    table = pads.dataset(pa.Table.from_batches([batch])).to_table(columns=dict(expressions)).cast(schema)
    return table.combine_chunks().to_batches()[0] if table.num_rows else schema.empty_table().to_batches()[0]
