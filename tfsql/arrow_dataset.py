"""The dataset: TFRecord files, their partition values, a schema and reading options,
as a :class:`pyarrow.dataset.Dataset` (:class:`Dataset`), and its per-file (or
per-byte-range) :class:`Fragment`.

:class:`Dataset` subclasses :class:`pyarrow.dataset.Dataset` in Python (as lance does),
so DuckDB scans it with projection and filter pushdown after ``con.register(name, ds)``;
Polars, ``read_tfrecord``, Spark and the CLI call its :class:`~tfsql.scanning.Scanner`.
:func:`tfsql.dataset` (:mod:`tfsql.opening`) builds one. (The module is not named
``dataset``: that name is the function ``tfsql.dataset``.)

Examples
--------
>>> import tempfile, pyarrow as pa, tfsql
>>> out = tempfile.mkdtemp()
>>> _ = tfsql.write_tfrecord(pa.table({"x": [1, 2], "k": [1, 2]}), out, partition_by=["k"])
>>> ds = tfsql.dataset(out)
>>> ds.partition_values.to_pylist(), [f.partition_values for f in ds.get_fragments()]
([{'k': 1}, {'k': 2}], [{'k': 1}, {'k': 2}])
"""

from __future__ import annotations

import contextlib
from typing import Any, Iterator, Mapping, Sequence

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as pads

from tfsql.decoding import empty_batch
from tfsql.discovery import Discovered, FileInfo
from tfsql.framing import detect_compression
from tfsql.options import READ_OPTIONS, ReadOptions
from tfsql.partitioning import Partitioning
from tfsql.scanning import Scanner, open_raw
from tfsql.schema import column_specs, normalize_schema, schema_with_partitions
from tfsql.splits import plan_ranges

__all__ = ["Dataset", "Fragment"]


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
        options: ReadOptions,
        *,
        file_indices: Sequence[int] | None = None,
        filter: pc.Expression | None = None,
        schema_inferred: bool = False,
        reported_unknown: set | None = None,
        byte_range: tuple[int, int] | None = None,
        error_sink: Any = None,
        interrupts: Any = None,
        specs: list | None = None,
    ) -> None:
        # pyarrow's Dataset.__init__ forbids instantiation; it is deliberately not called.
        self._found = found
        self._partitioning = partitioning
        self._data_schema = data_schema
        self._options = options
        self._file_indices = list(range(len(found.files))) if file_indices is None else list(file_indices)
        self._filter = filter
        # Features found while scanning that an inferred schema lacks are reported once.
        self._schema_inferred = schema_inferred and options.record_type != "bytes"
        self._reported_unknown = set() if reported_unknown is None else reported_unknown
        self._byte_range = byte_range  # one file's byte range (tfsql.splits)
        self._error_sink = error_sink
        self._interrupts = interrupts
        self._specs = specs  # column_specs(data_schema), computed once (see column_specs)
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
    def column_specs(self) -> list:
        """How each data column is read (:func:`tfsql.schema.column_specs`), computed once
        per data schema (a wide schema has a million columns)."""
        if self._specs is None:
            self._specs = column_specs(self._data_schema, self._options.record_code)
        return self._specs

    @property
    def partition_schema(self) -> pa.Schema:
        """The hive partition columns (empty when the files are not partitioned)."""
        return self._partitioning.schema if self._partitioning is not None else pa.schema([])

    @property
    def files(self) -> list[str]:
        """The files this dataset reads, as messages name them."""
        return [self._found.files[i].display() for i in self._file_indices]

    @property
    def options(self) -> ReadOptions:
        """The reading options this dataset was opened with (checked and normalised:
        ``record_type`` is a canonical name such as ``"example"``)."""
        return self._options

    @property
    def partition_values(self) -> pa.Table:
        """One row per file (in :attr:`files` order) holding its partition values."""
        if self._partitioning is None:
            return pa.Table.from_batches([empty_batch(len(self._file_indices))])
        return self._partitioning.values.take(pa.array(self._file_indices, pa.int64()))  # [] is not null-typed

    # ------------------------------------------------------------------ seams for front ends
    @property
    def discovered(self) -> Discovered:
        """The listing the dataset was opened from (every file found, with its size and
        file system); :attr:`file_indices` says which of them this dataset reads."""
        return self._found

    @property
    def file_indices(self) -> list[int]:
        """Positions in :attr:`discovered` of the files this dataset reads, in order."""
        return list(self._file_indices)

    @property
    def selected_files(self) -> list[FileInfo]:
        """The files this dataset reads (``discovered.files`` at :attr:`file_indices`)."""
        return [self._found.files[i] for i in self._file_indices]

    @property
    def partitioning(self) -> Partitioning | None:
        """The hive partitioning of :attr:`discovered` (None: no partition columns)."""
        return self._partitioning

    @property
    def byte_range(self) -> tuple[int, int] | None:
        """``(start, stop)`` when the dataset reads a byte range of its one file."""
        return self._byte_range

    @property
    def schema_inferred(self) -> bool:
        """Whether the data schema was inferred from a sample (not given)."""
        return self._schema_inferred

    @property
    def kindless_features(self) -> set:
        """``(location, name)`` of the features inference saw without a kind (reported
        then; scans do not report them again). The set itself, shared with the datasets
        derived from this one: a scan adds each unknown feature it reports."""
        return self._reported_unknown

    @property
    def error_sink(self) -> Any:
        """A function its scans call with the tfsql error (or the
        `tfsql.interrupts.ScanInterrupted`) that ends a read (before it propagates), or None: a front end whose engine passes errors on as text keeps
        the error object this way (`tfsql.duckdb` does)."""
        return self._error_sink

    def with_error_sink(self, sink: Any) -> "Dataset":
        """The same dataset, its scans reporting the tfsql error that ends a read to ``sink``."""
        return self._derive(error_sink=sink)

    @property
    def interrupts(self) -> Any:
        """The :class:`tfsql.interrupts.Interrupts` that stop its scans, or None: a front
        end whose engine cannot stop a scan between batches (``con.interrupt()``) sets it."""
        return self._interrupts

    def with_interrupts(self, interrupts: Any) -> "Dataset":
        """The same dataset, its scans stopped at their next read by ``interrupts``."""
        return self._derive(interrupts=interrupts)

    def with_partitioning(self, partitioning: Partitioning | None) -> "Dataset":
        """The same files and data schema with other partition columns."""
        return self._derive(partitioning=partitioning)

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
            error_sink=self._error_sink,
            interrupts=self._interrupts,
            specs=self._specs,
        )
        if "data_schema" in changes or "options" in changes:
            args["specs"] = None
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
        column_specs(data, self._options.record_code)
        return self._derive(data_schema=data, schema_inferred=False)

    def with_options(self, **changes: Any) -> "Dataset":
        """A dataset with some reading options changed (e.g. ``threads=1``): those that
        can change per scan (``scan_time`` in :mod:`tfsql.options`). The others decide
        discovery and the schema: open a new dataset with them instead.

        Examples
        --------
        >>> import tempfile, pyarrow as pa, tfsql
        >>> path = tempfile.mkdtemp()
        >>> _ = tfsql.write_tfrecord(pa.table({"x": [1, 2]}), path)
        >>> tfsql.dataset(path).with_options(threads=1, record_type="ByteArray").options.record_type
        'bytes'
        >>> tfsql.dataset(path).with_options(glob=False)
        Traceback (most recent call last):
        ValueError: with_options cannot change glob: it decides which files and schema the dataset has; pass it to tfsql.dataset() instead
        """
        for name in changes:
            option = READ_OPTIONS.get(name)
            if option is None:
                raise TypeError(
                    f"with_options: unknown option {name!r}; the options that can change per scan "
                    f"are {', '.join(n for n, o in READ_OPTIONS.items() if o.scan_time)}"
                )
            if not option.scan_time:
                raise ValueError(
                    f"with_options cannot change {name}: it decides which files and schema the "
                    "dataset has; pass it to tfsql.dataset() instead"
                )
        return self._derive(options=self._options.changed(**changes))

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
        if isinstance(columns, (str, bytes)):  # pyarrow's rule: a list (or a dict), never one name
            raise TypeError(
                f"columns must be a list of column names (or a dict of expressions), not the "
                f"string {columns!r}; for one column write columns=[{columns!r}]"
            )
        if self._filter is not None:
            filter = self._filter if filter is None else (self._filter & filter)
        return Scanner(
            self,
            columns=columns,
            filter=filter,
            batch_size=self._options.batch_size
            if batch_size is None
            else READ_OPTIONS["batch_size"].validate(batch_size),
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

        with with_read_progress(self, "reading", file_indices=scanner.file_indices) as ds:
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
        table = self.scanner(columns=columns, filter=filter, batch_size=batch_size, **kwargs).head(
            pc.max(idx).as_py() + 1
        )
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
        READ_OPTIONS["split_bytes"].validate(split_bytes)
        fragments = []
        for i in self.pruned_indices(filter):
            if self._byte_range is not None:
                fragments.append(Fragment(self._derive(file_indices=[i])))
                continue
            file = self._found.files[i]
            if split_bytes is None or file.size <= split_bytes or not self.splittable(i):
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
        if not self.splittable(self._file_indices[0]):
            raise ValueError(f"{self.files[0]} is compressed: a compressed file can only be read whole")
        return self._derive(byte_range=(start, stop))

    def splittable(self, index: int) -> bool:
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

    def pruned_indices(self, filter: pc.Expression | None) -> list[int]:
        """Positions in :attr:`discovered` of the files ``filter``'s partition terms keep."""
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
        raise NotImplementedError(
            "tfsql.Dataset.sort_by: read with to_table() and sort the table, or use DuckDB/Polars"
        )

    def __reduce__(self):
        return (
            Dataset,
            (self._found, self._partitioning, self._data_schema, self._options),
            {"_file_indices": self._file_indices, "_filter": self._filter, "_byte_range": self._byte_range},
        )

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
        return self._dataset.byte_range

    @property
    def start(self) -> int:
        """First byte of the range this fragment reads (0 for a whole file)."""
        span = self._dataset.byte_range
        return 0 if span is None else span[0]

    @property
    def stop(self) -> int:
        """End of the range this fragment reads (the file's size for a whole file)."""
        span = self._dataset.byte_range
        return self._dataset.selected_files[0].size if span is None else span[1]

    @property
    def partition_values(self) -> dict[str, Any]:
        part = self._dataset.partitioning
        if part is None:
            return {}
        return part.values.slice(self._dataset.file_indices[0], 1).to_pylist()[0]

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
        span = self._dataset.byte_range
        return f"<tfsql.Fragment {self.path}{'' if span is None else f' [bytes {span[0]}-{span[1]}]'}>"
