"""`write_tfrecord`: the one writer every front end calls (Polars, DuckDB COPY, Spark, CLI).

This package's modules, one job each:

- ``tfsql.writer`` (here): the public function, its options (`tfsql.options.WriteOptions`
  checks each; `check_combinations` the rules between them) and `check_write_options`;
- `tfsql.writer.inputs`: Arrow-shaped input → record batches of offset-based types;
- `tfsql.writer.files`: file naming, the per-file writer, rotation;
- `tfsql.writer.job`: a directory write: partitioning, staging, commit;
- `tfsql.writer.single_file`: a one-file target (``*.tfrecord``);
- `tfsql.writer.result`: `WriteResult` / `WrittenFile`.

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
finished by the next write or by ``tfsql.recover(path)``. The target's lock is a
``flock`` on the target directory itself (no lock file); a native ``COPY ... TO (FORMAT
tfrecord)`` refuses to start while this writer's staging directory is live.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from tfsql.option_values import DEFAULT_MAX_RECORD_BYTES, Mode, RecordType, WriteCompression
from tfsql.naming import (
    check_file_names,
    check_filename_pattern,
    check_pattern_compression,
    is_single_file_target,
    tfrecord_extension,
)
from tfsql.options import WRITE_OPTIONS, WriteOptions
from tfsql.writer.result import WriteResult, WrittenFile

__all__ = ["write_tfrecord", "WriteResult", "WrittenFile", "check_write_options", "check_combinations"]


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
    index: bool = False,
    progress: bool = False,
    max_record_bytes: int | None = DEFAULT_MAX_RECORD_BYTES,
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
        The target: a name ending in a TFRecord suffix (``.tfrecord``, ``.tfrecords`` or
        ``.tfrec``, optionally followed by ``.gz`` / ``.gzip`` or ``.zz`` / ``.zlib``) is
        **one file** (written under a temporary name and renamed into place; the
        compression suffix implies the compression, and a ``compression`` that contradicts
        it is refused); anything
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
        write produces (without ``partition_by``: all of it), or write nothing. The
        replacing modes are atomic: the old data stays whole until the new is complete
        (DuckDB's own ``COPY ... (OVERWRITE)`` instead removes the old data before the new
        is complete; docs/duckdb-extension.md).
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
        stays as is). Text outside the braces is kept, so a caller can fix its own
        parts of the names (the Spark writer's task 3 of job ``J`` passes
        ``f"part-00003-{J}-c{{i:03d}}"``); each file's ``{i}`` is reported as
        ``WrittenFile.index`` and its path below the target as ``WrittenFile.relative``
        (see `tfsql.naming`).
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
    max_record_bytes : int or None
        Refuse (``SchemaError``, before anything is written) a record larger than this:
        the readers' limit of the same name, 2 GiB by default, so that what is written
        reads back with the default options. None writes records of any size (read them
        with a ``max_record_bytes`` at least as large).
    index : bool
        Also write each file's record index ``.<name>.idx`` beside it, committed with
        it: one ``offset size`` line per record, the format of NVIDIA DALI's and
        vahidk/tfrecord's index files (see `tfsql.record_index`). ``count_rows``,
        ``tfsql count`` and ``count(*)`` then count without reading the file.
        Uncompressed files only.
    progress : bool
        Show a progress bar of the rows written on stderr (with a total when the input
        knows its length: a table, a DataFrame).

    Returns
    -------
    WriteResult
        The files written with their paths (also relative to the target), partition
        values, numbers, rows and bytes.

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

    With ``index=True`` each file gets its record index beside it (a line per record:
    its offset and its framed size):

    >>> import os
    >>> one = tempfile.mkdtemp() + "/one.tfrecord"
    >>> _ = write_tfrecord(table, one, index=True)
    >>> open(os.path.join(os.path.dirname(one), ".one.tfrecord.idx")).read().splitlines()[0].split()
    ['0', '50']
    >>> tfsql.dataset(one).count_rows()  # from the index, without reading the file
    3
    """
    options = check_combinations(
        WriteOptions(
            partition_by=partition_by,
            record_type=record_type,
            layout=layout,
            compression=compression,
            compression_level=compression_level,
            mode=mode,
            max_rows_per_file=max_rows_per_file,
            max_bytes_per_file=max_bytes_per_file,
            num_shards=num_shards,
            shard_prefix=shard_prefix,
            filename_pattern=filename_pattern,
            tfds=tfds,
            filesystem=filesystem,
            threads=threads,
            index=index,
            progress=progress,
            max_record_bytes=max_record_bytes,
        )
    )
    if is_single_file_target(path, partitioned=bool(options.partition_by)):
        from tfsql.writer.single_file import write_single_file

        return write_single_file(data, path, options)
    from tfsql.writer.job import write_directory

    return write_directory(data, path, options)


# --------------------------------------------------------------------------------------
# Checks between options
# --------------------------------------------------------------------------------------


def check_combinations(options: WriteOptions) -> WriteOptions:
    """Raise ``ValueError`` for options that each pass their own check
    (`tfsql.options.WriteOptions`) but not together; return ``options``.

    Examples
    --------
    >>> check_combinations(WriteOptions(num_shards=2, max_rows_per_file=10))
    Traceback (most recent call last):
    ValueError: num_shards fixes the number of files; it cannot be combined with max_rows_per_file or max_bytes_per_file
    """
    if options.num_shards is not None and (
        options.max_rows_per_file is not None or options.max_bytes_per_file is not None
    ):
        raise ValueError(
            "num_shards fixes the number of files; it cannot be combined with max_rows_per_file or max_bytes_per_file"
        )
    if options.index and options.compression is not None:
        raise ValueError(
            f"index=True needs uncompressed files: the records of a {options.compression} file "
            "have no byte offsets to index; drop compression or the index"
        )
    shards = options.num_shards is not None
    if options.filename_pattern is not None:
        check_filename_pattern(options.filename_pattern, shards=shards)
    check_file_names(
        options.filename_pattern, options.shard_prefix if shards else None, tfrecord_extension(options.compression)
    )
    if options.filename_pattern is not None:
        check_pattern_compression(options.filename_pattern, options.compression)
    if options.tfds is not None:
        from tfsql.tfds import check_tfds_options

        check_tfds_options(
            options.tfds,
            partition_by=options.partition_by,
            mode=options.mode,
            filename_pattern=options.filename_pattern,
            max_rows_per_file=options.max_rows_per_file,
            max_bytes_per_file=options.max_bytes_per_file,
        )
    return options


def check_write_options(**options: Any) -> None:
    """Raise ``ValueError`` for options :func:`write_tfrecord` would reject, without
    writing anything (front ends check theirs before running a query).

    Examples
    --------
    >>> check_write_options(compression="gzip", num_shards=4)
    >>> check_write_options(compression_level=10)
    Traceback (most recent call last):
    tfsql.errors.OptionError: compression_level must be an integer from 0 to 9, not 10
    """
    unknown = sorted(set(options) - set(WRITE_OPTIONS))
    if unknown:
        raise TypeError(f"write_tfrecord() got an unexpected keyword argument {unknown[0]!r}")
    check_combinations(WriteOptions(**options))
