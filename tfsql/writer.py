"""`write_tfrecord`: the one writer every front end calls (Polars, DuckDB COPY, Spark, CLI).

The pipeline, batch by batch (memory is bounded by the batch size and the open files,
never by the input size)::

    Arrow-shaped input ─► record batches ─► slices of ≤ 64K rows / 64 MiB
        ─► split by partition values (hive ``key=value`` directories)
        ─► RecordEncoder (tfsql.encoding → native encoder): framed TFRecord bytes
        ─► a file per partition, rotated by rows / bytes, gzip / zlib streamed
        ─► all under ``<target>/_temporary-<uuid>/`` ─► commit (rename into place)

Commit protocol (:mod:`tfsql.commit`, :mod:`tfsql.locking`). Every file is first
written, fsync'd, under the hidden staging directory ``<target>/_temporary-<uuid>/``
(readers skip ``_`` names). When the whole input has been written, the writer takes the
target's lock, resolves any commit a crashed writer left, re-checks its mode, writes an
intent record, moves the old data the mode replaces into a hidden ``_trash-<uuid>/``
and the new files into place, writes ``_SUCCESS``, marks the record committed, and only
then deletes the trash. An exception before the commit point undoes the moves and the
target is left exactly as it was; a crash (``kill -9``, power loss) is undone or
finished by the next write or by ``tfsql.recover(path)``.
"""

from __future__ import annotations

import functools
import inspect
import os
import posixpath
import uuid
import zlib
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import fsspec
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tfsql import commit as _commit
from tfsql import locking, partitioning
from tfsql import schema as _schema
from tfsql._types import Mode, RecordType, WriteCompression
from tfsql.commit import remove_quietly
from tfsql.compressing import CompressionPool
from tfsql.discovery import _coerce_filesystem, _resolve
from tfsql.encoding import RecordEncoder
from tfsql.errors import WriteConflictError
from tfsql.naming import (
    check_file_names,
    check_filename_pattern,
    format_filename,
    has_tfrecord_name,
    is_single_file_target,
)

__all__ = ["write_tfrecord", "WriteResult", "WrittenFile", "MODES", "COMPRESSIONS"]

MODES = ("error", "append", "overwrite", "overwrite_partitions", "ignore")
"""The save modes of `write_tfrecord`."""

COMPRESSIONS = {None: "", "gzip": ".gz", "zlib": ".zz"}
"""Supported compressions and the file extension each adds after ``.tfrecord``."""


_ENCODE_ROWS = 65_536  # rows encoded at once: big enough to amortise per-call overhead
_ENCODE_BYTES = 64 << 20  # ... and a bound on the Arrow bytes of one encoded slice
_MAX_OPEN_FILES = 64  # partition files kept open at once (least recently used closes)


# --------------------------------------------------------------------------------------
# Result
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class WrittenFile:
    """One file `write_tfrecord` wrote.

    Attributes
    ----------
    path : str
        Where the file is after the commit (the target path joined with the file's
        relative path; a URL for non-local filesystems).
    partition : dict
        The partition values of the file's directory (empty without ``partition_by``).
    rows : int
        Records in the file.
    bytes : int
        Size of the file on disk (after compression).
    """

    path: str
    partition: dict[str, Any]
    rows: int
    bytes: int


@dataclass(frozen=True)
class WriteResult:
    """What `write_tfrecord` wrote.

    Attributes
    ----------
    path : str
        The target directory as given.
    files : list of WrittenFile
        Every data file written, in the order it was started.
    skipped : bool
        True when ``mode="ignore"`` found existing data and wrote nothing.
    """

    path: str
    files: list[WrittenFile] = field(default_factory=list)
    skipped: bool = False

    @property
    def rows(self) -> int:
        """Total records written."""
        return sum(f.rows for f in self.files)

    @property
    def bytes(self) -> int:
        """Total bytes written (on disk)."""
        return sum(f.bytes for f in self.files)

    @property
    def paths(self) -> list[str]:
        """The paths of the written files."""
        return [f.path for f in self.files]

    def __repr__(self) -> str:
        if self.skipped:
            return f"WriteResult(skipped: {self.path!r} already holds data, mode='ignore')"
        n = len(self.files)
        return (
            f"WriteResult({n} file{'' if n == 1 else 's'}, {self.rows:,} rows, "
            f"{self.bytes:,} bytes in {self.path!r})"
        )


# --------------------------------------------------------------------------------------
# The public function
# --------------------------------------------------------------------------------------


def write_tfrecord(
    data: Any,
    path: str | os.PathLike,
    *,
    partition_by: str | Sequence[str] | None = None,
    record_type: RecordType = "example",
    layout: Mapping[str, str] | None = None,
    compression: WriteCompression = None,
    compression_level: int | None = None,
    mode: Mode = "error",
    max_rows_per_file: int | None = None,
    max_bytes_per_file: int | None = None,
    num_shards: int | None = None,
    shard_prefix: str = "part",
    filename_pattern: str | None = None,
    tfds: str | None = None,
    filesystem: Any = None,
    threads: int | None = None,
    progress: bool = False,
) -> WriteResult:
    """Write Arrow-shaped data as TFRecord files of ``tf.train.Example`` records.

    Parameters
    ----------
    data : Arrow-shaped
        A ``pyarrow.Table``, ``RecordBatch`` or ``RecordBatchReader``; any object with
        ``__arrow_c_stream__`` (a Polars DataFrame, a DuckDB relation) or
        ``__arrow_c_array__``; or an iterable of record batches (a generator streams).
        Input is consumed one batch at a time.
    path : str or path-like
        The target: a name ending in a TFRecord suffix (``.tfrecord``, ``.tfrecords``,
        ``.tfrecord.gz``, ``.tfrecord.zz``) is **one file** (written under a temporary
        name and renamed into place; ``.gz`` / ``.zz`` imply the compression); anything
        else, and any path ending in ``/``, is a directory of part files (see
        `tfsql.naming`). An fsspec URL (``s3://...``, ``memory://...``) works.
    partition_by : str or list of str, optional
        Columns whose values become ``key=value`` directories (Hive escaping, null as
        ``__HIVE_DEFAULT_PARTITION__``); they are not written into the records. Reading
        back with ``tfsql.dataset`` restores them, typed int64 when every value is an
        integer, else string.
    record_type : {"example", "sequence_example", "bytes"}
        ``"sequence_example"`` puts list-of-list columns in ``feature_lists`` and the
        others in ``context``; ``"bytes"`` writes the one binary/string column verbatim,
        one record per row.
    layout : dict, optional
        SequenceExample placement where the type is ambiguous:
        ``{"tokens": "feature_list"}`` writes a ``list<T>`` column as a feature list of
        one-value steps; ``"context"`` is the default for non-nested columns.
    compression : {None, "gzip", "zlib"}
        Stream compression of whole files (``tf.data.TFRecordDataset``'s
        ``compression_type="GZIP"`` / ``"ZLIB"``). Files get ``.gz`` / ``.zz``.
    compression_level : int, optional
        zlib level 0-9 (default 6).
    mode : {"error", "append", "overwrite", "overwrite_partitions", "ignore"}
        What to do when the target holds data: raise `tfsql.errors.WriteConflictError`
        (a ``FileExistsError``; the default), add
        files next to it, replace all of it, replace only the partition directories this
        write produces (without ``partition_by``: all of it), or write nothing.
    max_rows_per_file : int, optional
        Start a new file after this many records (exact).
    max_bytes_per_file : int, optional
        Start a new file once a file holds this many bytes of TFRecord data (counted
        before compression); a file exceeds it by less than one record.
    num_shards : int, optional
        Write exactly this many files ``<shard_prefix>-00000-of-0000N.tfrecord``, the
        TensorFlow training convention. Rows are dealt round robin (shard ``k`` holds
        input rows ``k, k+N, k+2N, ...``), so shard sizes differ by at most one row and
        streaming input needs no second pass. With ``partition_by`` every partition
        directory gets its own ``N`` shards. Not with the ``max_*_per_file`` options.
    shard_prefix : str
        File name prefix with ``num_shards``.
    filename_pattern : str, optional
        Name files by this pattern instead of Spark's
        ``part-00000-<uuid>-c000.tfrecord``, as DuckDB's ``FILENAME_PATTERN``: a Python
        format string where ``{i}`` is the file's number in this write (0, 1, ...; the
        shard index with ``num_shards``), ``{n}`` the number of shards (with
        ``num_shards``), ``{uuid}`` a fresh UUID per file; format specs work
        (``"train-{i:05d}-of-{n:05d}"``). The extension (``.tfrecord`` plus the
        compression's) is appended unless the name already holds ``.tfrecord``
        (``"train_{i}"`` -> ``train_0.tfrecord.gz``; ``"mnist-train.tfrecord-{i:05d}"``
        stays as is).
    tfds : str, optional
        Write a TensorFlow Datasets directory for the dataset of this name, which
        ``tfds.builder_from_directory(path)`` loads: shards
        ``{tfds}-{split}.tfrecord-{i:05d}-of-{n:05d}`` side by side (``num_shards`` per
        split, default 1), plus ``dataset_info.json``, ``features.json`` and the class
        label files, with the features described from the Arrow schema
        (`tfsql.tfds`). The split of each row comes from the column named by
        ``partition_by`` (default: a column ``split`` when there is one, else every row
        is ``"train"``), which is not written into the records. The version is the
        path's last component when it looks like ``1.0.0``, else ``1.0.0``. Modes
        ``"error"``, ``"overwrite"`` and ``"ignore"``.
    filesystem : fsspec or pyarrow filesystem, optional
        Overrides the filesystem the path implies.
    threads : int, optional
        With compression, threads compressing the files in parallel (default: cores,
        at most 8). Each file is one gzip / zlib stream, so this speeds up writes of
        several files at once (``num_shards``, ``partition_by``).
    progress : bool
        Show a progress bar of the rows written on stderr (with a total when the input
        knows its length: a table, a DataFrame).

    Returns
    -------
    WriteResult
        The files written with their rows and bytes.

    Raises
    ------
    tfsql.errors.WriteConflictError
        (a ``FileExistsError``) ``mode="error"`` and the target holds data, also when
        another writer committed to it during this write; or an appended file name exists.
    tfsql.SchemaError
        A column cannot be written (see docs/format.md section 5): struct or map columns, a
        list of lists in Example mode, a null inside a list or tensor, a uint64 above
        2**63-1, a decimal that float32 cannot hold exactly. The target is left as it was.

    Notes
    -----
    Type mapping: integers, bool (0/1), dates, times and timestamps (their stored
    integer) → ``int64_list``; float16/32/64 and decimal → ``float_list`` (float32:
    float64 and decimals lose precision); strings and binaries → ``bytes_list``; lists
    of those → the same kind with all values; dictionaries → their values. A null omits
    the feature from that record.

    Examples
    --------
    >>> import tempfile, pyarrow as pa, tfsql
    >>> table = pa.table({"split": ["train", "test", "train"], "x": [1, 2, 3]})
    >>> out = tempfile.mkdtemp() + "/out"
    >>> result = write_tfrecord(table, out, partition_by="split")
    >>> len(result.files), result.rows
    (2, 3)
    >>> sorted(f.partition["split"] for f in result.files)
    ['test', 'train']
    """
    options = _Options.check(
        partition_by=partition_by,
        compression=compression,
        compression_level=compression_level,
        mode=mode,
        max_rows_per_file=max_rows_per_file,
        max_bytes_per_file=max_bytes_per_file,
        num_shards=num_shards,
        shard_prefix=shard_prefix,
        filename_pattern=filename_pattern,
        tfds=tfds,
    )
    record_code = _schema.parse_record_type(record_type)
    if is_single_file_target(path):
        from tfsql.single_file import write_single_file

        return write_single_file(
            data, path, options, record_type=record_type, layout=layout, filesystem=filesystem,
        )
    target = _Target.resolve(path, filesystem)

    if target.is_file():
        raise FileExistsError(
            f"{target.display!r} is a file; write_tfrecord writes a directory of files"
        )
    target.recover()
    if target.has_data():
        if options.mode == "error":
            raise target.holds_data_error()
        if options.mode == "ignore":
            return WriteResult(path=target.display, skipped=True)

    schema, source = _without_view_types(*_open_input(data))
    batches = source
    bar = None
    try:
        if options.tfds is not None:
            from tfsql.tfds import require_values, tfds_options

            options = tfds_options(options, schema, target.root)
            batches = require_values(source, schema, options.partition_by)
        if progress:
            from tfsql.progress import counted_batches, input_rows, write_bar

            bar = write_bar("writing", total=input_rows(data))
            batches = counted_batches(batches, bar)
        encoder, data_columns = _prepare(schema, options.partition_by, record_code, layout)
        job = _WriteJob(target, options, threads=compression_threads(threads, options.compression))
        return job.run(schema, batches, encoder, data_columns)
    finally:
        close = getattr(source, "close", None)
        if close is not None:
            close()
        if bar is not None:
            bar.close()


# --------------------------------------------------------------------------------------
# Options and input
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Options:
    partition_by: tuple[str, ...]
    compression: str | None
    compression_level: int
    mode: str
    max_rows_per_file: int | None
    max_bytes_per_file: int | None
    num_shards: int | None
    shard_prefix: str
    filename_pattern: str | None = None
    tfds: str | None = None  # the TFDS dataset name: shards named {tfds}-{split}.tfrecord-...
    tfds_version: str = "1.0.0"

    @classmethod
    def check(cls, *, partition_by, compression, compression_level, mode, max_rows_per_file,
              max_bytes_per_file, num_shards, shard_prefix, filename_pattern=None,
              tfds=None) -> _Options:
        if isinstance(partition_by, str):
            partition_by = (partition_by,)
        partition_by = tuple(partition_by or ())
        if len(set(partition_by)) != len(partition_by):
            raise ValueError(f"partition_by names a column twice: {list(partition_by)}")
        if isinstance(compression, str):
            compression = compression.lower()
            compression = None if compression in ("", "none") else compression
        if compression not in COMPRESSIONS:
            raise ValueError(
                f"unknown compression {compression!r}; use None, 'gzip' or 'zlib'"
            )
        level = -1 if compression_level is None else compression_level
        if not isinstance(level, int) or not -1 <= level <= 9:
            raise ValueError(f"compression_level must be an int from 0 to 9, got {compression_level!r}")
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}; use one of {', '.join(repr(m) for m in MODES)}")
        for name, value in (("max_rows_per_file", max_rows_per_file),
                            ("max_bytes_per_file", max_bytes_per_file),
                            ("num_shards", num_shards)):
            if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        if num_shards is not None:
            if max_rows_per_file is not None or max_bytes_per_file is not None:
                raise ValueError(
                    "num_shards fixes the number of files; it cannot be combined with "
                    "max_rows_per_file or max_bytes_per_file"
                )
        if not isinstance(shard_prefix, str) or not shard_prefix or "/" in shard_prefix:
            raise ValueError(f"shard_prefix must be a non-empty file name prefix, got {shard_prefix!r}")
        if filename_pattern is not None:
            check_filename_pattern(filename_pattern, shards=num_shards is not None)
        check_file_names(filename_pattern, shard_prefix if num_shards is not None else None,
                         ".tfrecord" + COMPRESSIONS[compression])
        if tfds is not None:
            from tfsql.tfds import check_tfds_options

            check_tfds_options(tfds, partition_by=partition_by, mode=mode,
                               filename_pattern=filename_pattern,
                               max_rows_per_file=max_rows_per_file,
                               max_bytes_per_file=max_bytes_per_file)
        return cls(partition_by, compression, level, mode, max_rows_per_file,
                   max_bytes_per_file, num_shards, shard_prefix, filename_pattern, tfds)


def compression_threads(threads: int | None, compression: str | None) -> int:
    """Threads that compress a write's files (see :mod:`tfsql.compressing`): ``threads``,
    by default the machine's cores (at most 8); 1 without compression.

    Examples
    --------
    >>> compression_threads(4, "gzip"), compression_threads(4, None)
    (4, 1)
    """
    if threads is not None and (not isinstance(threads, int) or isinstance(threads, bool) or threads < 1):
        raise ValueError(f"threads must be a positive integer, not {threads!r}")
    if compression is None:
        return 1
    return threads if threads is not None else max(1, min(8, os.cpu_count() or 1))


def check_write_options(**options: Any) -> None:
    """Raise ``ValueError`` for options :func:`write_tfrecord` would reject, without
    writing anything (front ends check theirs before running a query).

    Examples
    --------
    >>> check_write_options(compression="gzip", num_shards=4)
    >>> check_write_options(compression_level=10)
    Traceback (most recent call last):
    ValueError: compression_level must be an int from 0 to 9, got 10
    """
    bound = inspect.signature(write_tfrecord).bind(None, None, **options)
    bound.apply_defaults()
    arguments = dict(bound.arguments)
    _schema.parse_record_type(arguments["record_type"])
    _Options.check(**{name: arguments[name] for name in inspect.signature(_Options.check).parameters})


def _open_input(data: Any) -> tuple[pa.Schema | None, Iterator[pa.RecordBatch]]:
    """The schema and a batch iterator of any Arrow-shaped input (None: no batches)."""
    if isinstance(data, pa.Table):
        return data.schema, iter(data.to_batches())
    if isinstance(data, pa.RecordBatch):
        return data.schema, iter([data])
    if isinstance(data, pa.RecordBatchReader):
        return data.schema, iter(data)
    if hasattr(data, "__arrow_c_stream__"):
        reader = pa.RecordBatchReader.from_stream(data)
        return reader.schema, iter(reader)
    if hasattr(data, "__arrow_c_array__"):
        batch = pa.record_batch(data)
        return batch.schema, iter([batch])
    if isinstance(data, (str, bytes, Mapping)) or not isinstance(data, Iterable):
        raise TypeError(
            f"write_tfrecord needs Arrow-shaped data (a pyarrow Table, RecordBatch or "
            f"RecordBatchReader, a Polars DataFrame, a DuckDB relation, or an iterable of "
            f"record batches), not {type(data).__name__}"
        )
    return _peek_batches(iter(data))


def _without_view_types(
    schema: pa.Schema | None, batches: Iterator[pa.RecordBatch]
) -> tuple[pa.Schema | None, Iterator[pa.RecordBatch]]:
    """Check that every batch has ``schema``, and convert view-typed columns (Polars
    exports ``string_view``, and ``dictionary<uint32, string_view>`` for categoricals) to
    offset-based types, which the partition split and the encoder's kernels support."""
    if schema is None:
        return schema, batches
    plain = pa.schema([f.with_type(_schema.offset_based_type(f.type)) for f in schema])

    def checked() -> Iterator[pa.RecordBatch]:
        for batch in batches:
            if batch.schema.names != schema.names or batch.schema.types != schema.types:
                raise ValueError(
                    f"record batches must all have the same schema; expected {schema}, "
                    f"got {batch.schema}"
                )
            if plain != schema:
                batch = pa.RecordBatch.from_arrays(
                    [_offset_based(c, f.type) for c, f in zip(batch.columns, plain)],
                    schema=plain,
                )
            yield batch

    gen = checked()
    close = getattr(batches, "close", None)
    return plain, (_Closing(gen, close) if close is not None else gen)


def _offset_based(array: pa.Array, target: pa.DataType) -> pa.Array:
    """``array`` converted to ``target = tfsql.schema.offset_based_type(array.type)``.

    Lists are rebuilt from their lengths and flattened values rather than cast: pyarrow's
    cast of a list view to a list builds invalid offsets (pyarrow 26: wrong values,
    "Negative offsets" or a short offsets buffer). Dictionaries keep their indices.
    """
    t = array.type
    if t == target:
        return array
    mask = array.is_null() if array.null_count else None
    if pa.types.is_dictionary(t):
        return pa.DictionaryArray.from_arrays(
            array.indices, _offset_based(array.dictionary, target.value_type)
        )
    if pa.types.is_fixed_size_list(t):
        size = t.list_size
        values = array.values.slice(array.offset * size, len(array) * size)
        return pa.FixedSizeListArray.from_arrays(
            _offset_based(values, target.value_type), type=target, mask=mask
        )
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_list_view(t) \
            or pa.types.is_large_list_view(t):
        lengths = pc.fill_null(pc.list_value_length(array), 0).to_numpy(zero_copy_only=False)
        offsets = np.zeros(len(array) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        values = _offset_based(array.flatten(), target.value_type)
        if pa.types.is_large_list(target):
            return pa.LargeListArray.from_arrays(pa.array(offsets), values, type=target, mask=mask)
        return pa.ListArray.from_arrays(pa.array(offsets, pa.int32()), values, type=target, mask=mask)
    return array.cast(target)


def _peek_batches(items: Iterator[Any]) -> tuple[pa.Schema | None, Iterator[pa.RecordBatch]]:
    def as_batches(item: Any) -> list[pa.RecordBatch]:
        if isinstance(item, pa.RecordBatch):
            return [item]
        if isinstance(item, pa.Table):
            return item.to_batches()
        raise TypeError(
            f"an iterable passed to write_tfrecord must yield pyarrow RecordBatches (or "
            f"Tables), not {type(item).__name__}"
        )

    for first in items:
        head = as_batches(first)

        def chained() -> Iterator[pa.RecordBatch]:
            yield from head
            for item in items:
                yield from as_batches(item)

        gen = chained()
        close = getattr(items, "close", None)
        if close is not None:
            gen = _Closing(gen, close)
        return first.schema, gen
    return None, iter(())


class _Closing:
    """An iterator that also closes the source generator when closed."""

    def __init__(self, it: Iterator, close: Any) -> None:
        self._it, self._close = it, close

    def __iter__(self) -> _Closing:
        return self

    def __next__(self) -> Any:
        return next(self._it)

    def close(self) -> None:
        self._close()


def _prepare(
    schema: pa.Schema | None,
    partition_by: tuple[str, ...],
    record_type: int,
    layout: Mapping[str, str] | None,
) -> tuple[RecordEncoder | None, list[str]]:
    """Check partition columns and compile the encoder for the remaining columns."""
    if schema is None:
        return None, []
    for name in partition_by:
        if name not in schema.names:
            raise ValueError(
                f"partition column {name!r} is not in the data; the columns are {schema.names}"
            )
        t = schema.field(name).type
        if pa.types.is_dictionary(t):
            t = t.value_type
        if not (pa.types.is_integer(t) or pa.types.is_boolean(t) or pa.types.is_string(t)
                or pa.types.is_large_string(t) or pa.types.is_string_view(t)
                or pa.types.is_date(t) or pa.types.is_timestamp(t)
                or pa.types.is_floating(t) or pa.types.is_decimal(t)):
            raise ValueError(
                f"partition column {name!r} has type {schema.field(name).type}; partition "
                f"values become directory names, so use a column of integers, strings, "
                f"booleans or dates"
            )
    data_columns = [n for n in schema.names if n not in partition_by]
    data_schema = pa.schema([schema.field(n) for n in data_columns])
    return RecordEncoder(data_schema, record_type=record_type, layout=layout), data_columns


# --------------------------------------------------------------------------------------
# The target directory
# --------------------------------------------------------------------------------------


@dataclass
class _Target:
    fs: fsspec.AbstractFileSystem
    root: str  # the filesystem's own path
    display: str  # as the user wrote it

    @classmethod
    def resolve(cls, path: str | os.PathLike, filesystem: Any) -> _Target:
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"path must be a str or path-like, not {type(path).__name__}")
        text = os.fspath(path)
        fs, root = _resolve(text, _coerce_filesystem(filesystem))
        display = text.rstrip("/") or text
        return cls(fs, root, display)

    def join(self, *parts: str) -> str:
        return posixpath.join(self.root, *parts)

    def shown(self, relative: str) -> str:
        return posixpath.join(self.display, relative)

    def is_file(self) -> bool:
        return self.fs.isfile(self.root)

    def has_data(self) -> bool:
        """Whether the target holds anything but tfsql's bookkeeping (lock, staging, ...)."""
        return bool(_commit.data_entries(self.fs, self.root))

    def holds_data_error(self, meanwhile: bool = False) -> WriteConflictError:
        how = " (another writer committed to it while this one was writing)" if meanwhile else ""
        return WriteConflictError(
            f"{self.display!r} already holds data{how}; pass mode='append', 'overwrite', "
            f"'overwrite_partitions' or 'ignore', or choose another path", path=self.display)

    def recover(self) -> None:
        """Resolve a crashed writer's commit and remove dead writers' leftovers."""
        if self.fs.isdir(self.root):
            with locking.target_lock(self.fs, self.root):
                _commit.recover_locked(self.fs, self.root, display=self.display)

    def missing_ancestor(self) -> str | None:
        """The highest directory of the target path that does not exist yet."""
        missing = None
        path = self.root
        while not self.fs.exists(path):
            missing = path
            parent = self.fs._parent(path)
            if parent == path or not parent:
                break
            path = parent
        return missing


# --------------------------------------------------------------------------------------
# Output files
# --------------------------------------------------------------------------------------


class _FileSink:
    """One output file being written, with optional streaming gzip / zlib."""

    def __init__(self, fs: fsspec.AbstractFileSystem, path: str, compression: str | None,
                 level: int, pool: CompressionPool | None = None) -> None:
        self._file = fs.open(path, "wb")
        self._compressor: Any
        if compression == "gzip":
            self._compressor = zlib.compressobj(level, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
        elif compression == "zlib":
            self._compressor = zlib.compressobj(level, zlib.DEFLATED, zlib.MAX_WBITS)
        else:
            self._compressor = None
        # Compression on the write's worker threads (tfsql.compressing), when it has them.
        self._stream = pool.stream(self._compressor, self._put) if pool and self._compressor else None
        self.rows = 0
        self.data_bytes = 0  # framed TFRecord bytes, before compression
        self.disk_bytes = 0

    def write(self, framed: memoryview, rows: int) -> None:
        self.rows += rows
        self.data_bytes += len(framed)
        if self._stream is not None:
            self._stream.write(framed)
            return
        self._put(self._compressor.compress(framed) if self._compressor else framed)

    def write_encoded(self, encode: Callable[[], memoryview], rows: int, estimate: int) -> None:
        """Write the framed records ``encode()`` returns: called on the compression
        thread of this file when it has one (so encoding runs there too, in order with
        the file's other chunks), else at once. ``estimate``: their size, roughly."""
        self.rows += rows
        if self._stream is None:
            self.write(encode(), 0)
            return

        def job() -> memoryview:
            framed = encode()
            self.data_bytes += len(framed)  # read only after close(), which waits for it
            return framed

        self._stream.write_job(job, estimate)

    def close(self) -> None:
        if self._stream is not None:
            self._stream.close()  # flushes the compressor
            self._stream = self._compressor = None
        if self._compressor is not None:
            self._put(self._compressor.flush())
            self._compressor = None
        _commit.sync_file(self._file)  # complete on disk before the commit renames it
        self._file.close()

    def abort(self) -> None:
        if self._stream is not None:
            self._stream.abort()
        try:
            self._file.close()
        except Exception:  # pragma: no cover - the staging area is removed anyway
            pass

    def _put(self, chunk: Any) -> None:
        if len(chunk):
            self._file.write(chunk)
            self.disk_bytes += len(chunk)


class _Files:
    """Creates, rotates, tracks and closes the staged output files of one write job."""

    def __init__(self, target: _Target, staging: str, options: _Options, job_id: str,
                 pool: CompressionPool | None = None) -> None:
        self._pool = pool
        self._target = target
        self._staging = staging
        self._options = options
        self._job_id = job_id
        self._ext = ".tfrecord" + COMPRESSIONS[options.compression]
        self._sequence = 0
        self._open: OrderedDict[Any, _FileSink] = OrderedDict()  # LRU of open files
        self._pinned: list[_FileSink] = []
        self.records: list[list] = []  # [relative path, partition dict, sink]

    # -- naming -------------------------------------------------------------------------

    def _next_name(self) -> str:
        pattern = self._options.filename_pattern
        if pattern is None:
            name = f"part-00000-{self._job_id}-c{self._sequence:03d}"
        else:
            name = format_filename(pattern, self._sequence)
        self._sequence += 1
        return self._with_ext(name)

    def shard_name(self, index: int, partition: Mapping[str, Any] | None = None) -> str:
        options = self._options
        n = options.num_shards
        if options.tfds is not None:
            from tfsql.tfds import shard_file_name

            return shard_file_name(options.tfds, next(iter(partition.values())) if partition else "train", index, n)  # type: ignore[arg-type]  # TFDS writes shards
        if options.filename_pattern is not None:
            return self._with_ext(format_filename(options.filename_pattern, index, n))
        return self._with_ext(f"{options.shard_prefix}-{index:05d}-of-{n:05d}")

    def _with_ext(self, name: str) -> str:
        return name if has_tfrecord_name(name) else name + self._ext

    # -- files --------------------------------------------------------------------------

    def open(self, key: Any, directory: str, name: str, partition: dict) -> _FileSink:
        """Start a staged file; ``key=None`` pins it open until `close_all` (shards)."""
        relative = posixpath.join(directory, name) if directory else name
        staged = posixpath.join(self._staging, relative)
        self._target.fs.makedirs(posixpath.dirname(staged), exist_ok=True)
        sink = _FileSink(self._target.fs, staged, self._options.compression,
                         self._options.compression_level, self._pool)
        self.records.append([relative, partition, sink])
        if key is None:
            self._pinned.append(sink)
            return sink
        self._open[key] = sink
        while len(self._open) > _MAX_OPEN_FILES:
            _, oldest = self._open.popitem(last=False)
            oldest.close()
        return sink

    def current(self, key: Any) -> _FileSink | None:
        sink = self._open.get(key)
        if sink is not None:
            self._open.move_to_end(key)
        return sink

    def close(self, key: Any) -> None:
        self._open.pop(key).close()

    def close_all(self) -> None:
        while self._pinned:
            self._pinned.pop().close()
        while self._open:
            _, sink = self._open.popitem(last=False)
            sink.close()

    def abort_all(self) -> None:
        while self._pinned:
            self._pinned.pop().abort()
        while self._open:
            _, sink = self._open.popitem(last=False)
            sink.abort()

    # -- writing with rotation ----------------------------------------------------------

    def write_partition(self, directory: str, partition: dict, framed: Any,
                        ends: np.ndarray) -> None:
        """Append framed records to the partition's current file, rotating as needed."""
        view = memoryview(framed).cast("B")
        max_rows = self._options.max_rows_per_file
        max_bytes = self._options.max_bytes_per_file
        n = len(ends)
        done = 0
        while done < n:
            sink = self.current(directory)
            if sink is None:
                sink = self.open(directory, directory, self._next_name(), partition)
            take = n - done
            start_byte = int(ends[done - 1]) if done else 0
            if max_rows is not None:
                take = min(take, max_rows - sink.rows)
            if max_bytes is not None:
                # the first record that brings the file to the limit is the last one in it
                cumulative = ends[done:] - start_byte
                reach = int(np.searchsorted(cumulative, max_bytes - sink.data_bytes, side="left"))
                take = min(take, reach + 1)
            end_byte = int(ends[done + take - 1])
            sink.write(view[start_byte:end_byte], take)
            done += take
            if (max_rows is not None and sink.rows >= max_rows) or (
                max_bytes is not None and sink.data_bytes >= max_bytes
            ):
                self.close(directory)


# --------------------------------------------------------------------------------------
# The write job: stage, then commit
# --------------------------------------------------------------------------------------


class _WriteJob:
    def __init__(self, target: _Target, options: _Options, *, threads: int = 1) -> None:
        self.threads = threads  # compression threads
        self.target = target
        self.options = options
        self.job_id = str(uuid.uuid4())
        self.staging = target.join(f"_temporary-{self.job_id}")

    def run(self, schema: pa.Schema | None, batches: Iterator[pa.RecordBatch],
            encoder: RecordEncoder | None, data_columns: list[str]) -> WriteResult:
        fs = self.target.fs
        created = self.target.missing_ancestor()
        pool = CompressionPool(self.threads)
        files = _Files(self.target, self.staging, self.options, self.job_id, pool)
        owner = locking.Lock(None, None)
        try:
            with locking.target_lock(fs, self.target.root):  # no cleaner sees it half made
                owner = locking.owner_lock(fs, self.staging)
            self._stage(batches, encoder, data_columns, files)
            files.close_all()
            extra: list[str] = []
            if self.options.tfds is not None:
                from tfsql.tfds import stage_tfds_metadata

                data_schema = pa.schema([schema.field(c) for c in data_columns]) if schema is not None else pa.schema([])
                extra = stage_tfds_metadata(fs, self.staging, self.options, data_schema,
                                            [(rel, part, sink.rows, sink.disk_bytes) for rel, part, sink in files.records])
            _commit.sync_dirs(fs, _staged_directories(self.staging, files))
            committed = self._commit(files, extra)
        except BaseException:
            files.abort_all()
            remove_quietly(fs, self.staging)  # still ours: no cleaner removes it meanwhile
            owner.release()
            if created is not None:
                self._remove_created(created)
            raise
        finally:
            pool.shutdown()
        remove_quietly(fs, self.staging)
        owner.release()
        if not committed:  # mode="ignore" and another writer committed meanwhile
            return WriteResult(path=self.target.display, skipped=True)
        return WriteResult(
            path=self.target.display,
            files=[WrittenFile(self.target.shown(rel), part, sink.rows, sink.disk_bytes)
                   for rel, part, sink in files.records],
        )

    def _remove_created(self, created: str) -> None:
        """Remove the directories this job created for the target, from the target up to
        ``created``, each only while empty: a concurrent writer may have committed files
        into them since."""
        fs = self.target.fs
        path = self.target.root
        while True:
            try:
                if fs.exists(path) and not fs.ls(path, detail=False):
                    fs.rmdir(path)
                else:
                    return
            except Exception:  # pragma: no cover - cleanup must not mask the original error
                return
            if path == created:
                return
            path = fs._parent(path)

    # -- staging ------------------------------------------------------------------------

    def _stage(self, batches: Iterator[pa.RecordBatch], encoder: RecordEncoder | None,
               data_columns: list[str], files: _Files) -> None:
        options = self.options
        shard_sets: dict[str, tuple[list[_FileSink], list[int]]] = {}  # partition -> sinks, [rows so far]

        def shards(key: str, partition: dict) -> tuple[list[_FileSink], list[int]]:
            found = shard_sets.get(key)
            if found is None:
                directory = "" if options.tfds is not None else key  # TFDS: split in the name
                found = shard_sets[key] = (
                    [files.open(None, directory, files.shard_name(i, partition), partition)
                     for i in range(options.num_shards)], [0])  # type: ignore[arg-type]  # set here
            return found

        if options.num_shards is not None and not options.partition_by:
            shards("", {})
        row_base = 0
        for batch in batches:
            assert encoder is not None  # input with batches has a schema, hence an encoder
            for chunk in _slices(batch):
                if options.num_shards is not None and options.partition_by:
                    for directory, values, rows, part in _split_partitions(
                        chunk, options.partition_by, data_columns
                    ):
                        sinks, seen = shards(directory, values)
                        self._stage_shards(part, seen[0], encoder, sinks, row_base + rows)
                        seen[0] += len(rows)
                elif options.num_shards is not None:
                    sinks, seen = shards("", {})
                    self._stage_shards(chunk.select(data_columns), row_base, encoder, sinks)
                elif options.partition_by:
                    for directory, values, rows, part in _split_partitions(
                        chunk, options.partition_by, data_columns
                    ):
                        framed, ends = encoder.encode(part, row_base=row_base, row_numbers=rows)
                        files.write_partition(directory, values, framed, ends)
                else:
                    framed, ends = encoder.encode(chunk.select(data_columns), row_base=row_base)
                    files.write_partition("", {}, framed, ends)
                row_base += chunk.num_rows

    def _stage_shards(self, data: pa.RecordBatch, dealt: int, encoder: RecordEncoder,
                      sinks: list[_FileSink], input_rows: np.ndarray | None = None) -> None:
        """Deal the rows of ``data`` round robin over ``sinks``; ``dealt`` rows were
        dealt before (``input_rows``: the rows' numbers in the input, for messages)."""
        n_shards = len(sinks)
        for shard, sink in enumerate(sinks):
            first = (shard - dealt) % n_shards
            rows = np.arange(first, data.num_rows, n_shards)
            if len(rows) == 0:
                continue
            part = data if n_shards == 1 else data.take(pa.array(rows))
            if input_rows is None:
                encode = encoder.prepare(part, row_base=dealt, row_numbers=rows)
            else:
                encode = encoder.prepare(part, row_base=0, row_numbers=input_rows[rows])
            # Values are checked here, in row order; encoding (and compression) run on
            # the file's compression thread when the write has several.
            sink.write_encoded(functools.partial(_framed, encode), len(rows), part.nbytes)

    # -- commit -------------------------------------------------------------------------

    def _commit(self, files: _Files, extra: Sequence[str] = ()) -> bool:
        """Commit the staged files (and ``extra`` staged metadata files) under the target
        lock; False when ``mode="ignore"`` found data."""
        fs, target = self.target.fs, self.target
        with locking.target_lock(fs, target.root):
            _commit.recover_locked(fs, target.root, keep=[posixpath.basename(self.staging)],
                                   display=target.display)
            if self.options.mode in ("error", "ignore") and target.has_data():
                if self.options.mode == "ignore":
                    return False
                raise target.holds_data_error(meanwhile=True)
            relative_paths = [rel for rel, _, _ in files.records] + list(extra)
            replaced = self._replaced_entries(files)
            self._check_collisions(relative_paths, replaced)
            _commit.apply_commit(
                fs, target.root, job=self.job_id, replaced=replaced,
                new=[(posixpath.join(posixpath.basename(self.staging), rel), rel)
                     for rel in relative_paths],
            )
        return True

    def _check_collisions(self, relative_paths: list[str], replaced: list[str]) -> None:
        if self.options.mode == "overwrite":
            return
        fs, target = self.target.fs, self.target
        replaced_set = set(replaced)
        for rel in relative_paths:
            inside_replaced = rel in replaced_set or any(
                rel.startswith(r + "/") for r in replaced_set
            )
            if not inside_replaced and fs.exists(target.join(rel)):
                raise WriteConflictError(
                    f"{target.shown(rel)!r} already exists; choose another shard_prefix or filename_pattern "
                    f"or write with mode='overwrite'", path=target.shown(rel)
                )

    def _replaced_entries(self, files: _Files) -> list[str]:
        """Relative paths of the existing entries this write replaces."""
        fs, target, mode = self.target.fs, self.target, self.options.mode
        if mode == "overwrite" or (mode == "overwrite_partitions" and not self.options.partition_by):
            return _commit.data_entries(fs, target.root)  # never another writer's staging
        if mode == "overwrite_partitions":
            directories = {posixpath.dirname(rel) for rel, _, _ in files.records}
            return sorted(d for d in directories if d and fs.exists(target.join(d)))
        return []



def _staged_directories(staging: str, files: _Files) -> set[str]:
    """The staging directory and every directory below it that holds staged files."""
    directories = {staging}
    for rel, _, _ in files.records:
        parent = posixpath.dirname(rel)
        while parent:
            directories.add(posixpath.join(staging, parent))
            parent = posixpath.dirname(parent)
    return directories


# --------------------------------------------------------------------------------------
# Slicing and partition splitting
# --------------------------------------------------------------------------------------


def _framed(encode: Callable[[], tuple[Any, np.ndarray]]) -> memoryview:
    """The framed records of a prepared encoding (:meth:`RecordEncoder.prepare`)."""
    framed, ends = encode()
    return memoryview(framed).cast("B")[: int(ends[-1])]


def _slices(batch: pa.RecordBatch) -> Iterator[pa.RecordBatch]:
    """Zero-copy slices of at most ``_ENCODE_ROWS`` rows and about ``_ENCODE_BYTES``."""
    n = batch.num_rows
    rows = _ENCODE_ROWS
    if n > 1:
        nbytes = batch.get_total_buffer_size()
        if nbytes > _ENCODE_BYTES:
            rows = max(1, min(rows, n * _ENCODE_BYTES // nbytes))
    if n <= rows:
        yield batch
        return
    for start in range(0, n, rows):
        yield batch.slice(start, rows)


def _split_partitions(
    batch: pa.RecordBatch, partition_by: Sequence[str], data_columns: list[str]
) -> Iterator[tuple[str, dict, np.ndarray, pa.RecordBatch]]:
    """Group rows by partition values: ``(directory, values, row indices, data batch)``."""
    codes = None
    dictionaries = []
    per_column = []
    for name in partition_by:
        column = batch.column(name)
        if pa.types.is_dictionary(column.type):
            column = column.dictionary_decode()
        encoded = pc.dictionary_encode(column, null_encoding="encode")
        indices = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
        dictionaries.append(encoded.dictionary)
        per_column.append(indices)
        if codes is None:
            codes = indices
        else:  # combine, then re-densify so the codes never overflow
            _, codes = np.unique(codes * len(encoded.dictionary) + indices, return_inverse=True)
    data = batch.select(data_columns)
    if codes is None or batch.num_rows == 0:
        return
    order = np.argsort(codes, kind="stable")
    boundaries = np.flatnonzero(np.diff(codes[order])) + 1
    for rows in np.split(order, boundaries):
        first = rows[0]
        values = [dictionaries[j][per_column[j][first]].as_py() for j in range(len(partition_by))]
        directory = partitioning.partition_path(list(partition_by), values)
        part = data if len(rows) == batch.num_rows else data.take(pa.array(rows))
        yield directory, dict(zip(partition_by, values)), rows, part
