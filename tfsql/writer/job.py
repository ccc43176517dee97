"""The write job of a directory target: partition, stage, commit.

`write_directory` runs one `write_tfrecord` into a directory: it resolves the target
(recovering a crashed writer's commit first), adapts the input (`tfsql.writer.inputs`),
compiles the encoder, then `WriteJob` stages every file under
``<target>/_temporary-<uuid>/`` (`tfsql.writer.files`) — rows split by partition values
into ``key=value`` directories, or dealt round robin over ``num_shards`` shards — and
commits them with :mod:`tfsql.commit` under the target's lock (:mod:`tfsql.locking`).
Anything raised before the commit point removes the staging directory and leaves the
target as it was.

Examples
--------
>>> import tempfile, pyarrow as pa
>>> from tfsql.options import WriteOptions
>>> out = tempfile.mkdtemp() + "/out"
>>> result = write_directory(pa.table({"k": ["a", "b", "a"], "x": [1, 2, 3]}), out,
...                          WriteOptions(partition_by="k"))
>>> sorted((f.relative.split("/")[0], f.rows) for f in result.files)
[('k=a', 2), ('k=b', 1)]
"""

from __future__ import annotations

import errno
import functools
import os
import posixpath
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import fsspec
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tfsql import commit as _commit
from tfsql import description, locking, partitioning
from tfsql.commit import remove_quietly
from tfsql.compressing import CompressionPool, compression_threads
from tfsql.discovery import _coerce_filesystem, _resolve
from tfsql.encoding import RecordEncoder
from tfsql.errors import SchemaError, WriteConflictError
from tfsql.options import WriteOptions
from tfsql.record_index import index_path, write_sidecar
from tfsql.writer.files import FileSink, StagedFiles
from tfsql.writer.inputs import open_input, plain_batches, slices
from tfsql.writer.result import WriteResult, WrittenFile

__all__ = ["write_directory", "WriteJob", "Target"]


def write_directory(data: Any, path: str | os.PathLike, options: WriteOptions) -> WriteResult:
    """Write ``data`` as part files of the directory ``path`` (``options`` checked,
    including the checks between options)."""
    target = Target.resolve(path, options.filesystem)
    if target.is_file():
        raise FileExistsError(f"{target.display!r} is a file; write_tfrecord writes a directory of files")
    target.recover()
    if target.has_data():
        if options.mode == "error":
            raise target.holds_data_error()
        if options.mode == "ignore":
            return WriteResult(path=target.display, skipped=True)

    schema, source = plain_batches(*open_input(data))
    batches = source
    bar = None
    try:
        tfds_version = None
        if options.tfds is not None:
            from tfsql.tfds import dataset_version, require_values, tfds_options

            options = tfds_options(options, schema, target.root)
            tfds_version = dataset_version(target.root)
            batches = require_values(source, schema, options.partition_by)
        progress = None
        if options.progress:
            from tfsql.progress import locked_update, input_rows, write_bar

            bar = write_bar("writing", total=input_rows(data))
            progress = locked_update(bar)  # rows counted once their bytes are in their file
        encoder, data_columns = _prepare(schema, options)
        job = WriteJob(target, options, tfds_version=tfds_version, progress=progress)
        job.description = _description(target, schema, options)
        return job.run(schema, batches, encoder, data_columns)
    finally:
        close = getattr(source, "close", None)
        if close is not None:
            close()
        if bar is not None:
            bar.close()


_PARTITION_TYPES = (
    "integer",
    "boolean",
    "string",
    "large_string",
    "string_view",
    "date",
    "timestamp",
    "floating",
    "decimal",
)


def _description(target: Target, schema: pa.Schema | None, options: WriteOptions) -> bytes | None:
    """The ``features.json`` this write commits beside its files (`tfsql.description`),
    None when it commits none: raw records, a TFDS write (its own features.json), input
    without a schema, or an append to data that has no description (it would describe
    only the new files). An append to a described target must match it, else a
    `tfsql.SchemaError` naming the column."""
    if schema is None or options.tfds is not None or options.record_type == "bytes":
        return None
    try:
        rendered = description.render(schema, options.partition_by)
    except ValueError:  # a type the description cannot say (a permuted tensor): none
        return None
    keeps_data = options.mode == "append" or (options.mode == "overwrite_partitions" and options.partition_by)
    if keeps_data and target.has_data():
        existing = description.read(target.fs, target.root)
        new = description.Description.parse(rendered)
        if existing is not None and new is not None:
            description.check_append(existing, new, target.display)
        return None  # kept as it is, or absent
    return rendered


def _open_file_limit() -> int | None:
    """This process's limit on open files (``ulimit -n``), None when unknown."""
    try:
        import resource
    except ImportError:  # pragma: no cover - Windows
        return None
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return None if soft == resource.RLIM_INFINITY else soft


def _too_many_files(files: int, num_shards: int, limit: int | None) -> ValueError:
    allowed = f"the open-file limit of this process ({limit}, see `ulimit -n`)" if limit else "the open-file limit"
    return ValueError(
        f"num_shards={num_shards} keeps {files} files open at once (every shard of every partition "
        f"is written until the write ends), more than {allowed} allows; write fewer shards, cut files "
        "by size with max_rows_per_file or max_bytes_per_file instead, or raise the limit"
    )


def _check_open_files(files: int, num_shards: int) -> None:
    """Refuse to open ``files`` shard files at once when the limit cannot allow it
    (a margin is left for the files the process already has open)."""
    limit = _open_file_limit()
    if limit is not None and files > limit - 64:
        raise _too_many_files(files, num_shards, limit)


def _prepare(schema: pa.Schema | None, options: WriteOptions) -> tuple[RecordEncoder | None, list[str]]:
    """Check partition columns and compile the encoder for the remaining columns."""
    if schema is None:
        return None, []
    for name in options.partition_by:
        if name not in schema.names:
            raise ValueError(f"partition column {name!r} is not in the data; the columns are {schema.names}")
        t = schema.field(name).type
        if pa.types.is_dictionary(t):
            t = t.value_type
        if not any(getattr(pa.types, "is_" + kind)(t) for kind in _PARTITION_TYPES):
            raise SchemaError(
                f"partition column {name!r} has type {schema.field(name).type}; partition "
                f"values become directory names, so use a column of integers, strings, "
                f"booleans or dates",
                feature=name,
            )
    seen: set[str] = set()
    for name in schema.names:
        if name in seen:
            raise SchemaError(
                f"the data has two columns named {name!r}; each column becomes the feature of its "
                "name, so rename or drop one of them",
                feature=name,
            )
        seen.add(name)
    data_columns = [n for n in schema.names if n not in options.partition_by]
    data_schema = pa.schema([schema.field(n) for n in data_columns])
    encoder = RecordEncoder(
        data_schema, record_type=options.record_type, layout=options.layout, max_record_bytes=options.max_record_bytes
    )
    return encoder, data_columns


# --------------------------------------------------------------------------------------
# The target directory
# --------------------------------------------------------------------------------------


@dataclass
class Target:
    """A target directory: its filesystem, its path there, and as the user wrote it."""

    fs: fsspec.AbstractFileSystem
    root: str  # the filesystem's own path
    display: str  # as the user wrote it

    @classmethod
    def resolve(cls, path: str | os.PathLike, filesystem: Any) -> Target:
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
            f"'overwrite_partitions' or 'ignore', or choose another path",
            path=self.display,
            reason="committed_meanwhile" if meanwhile else "target_holds_data",
        )

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
            parent = _parent(path)
            if parent == path or not parent:
                break
            path = parent
        return missing


# --------------------------------------------------------------------------------------
# The write job: stage, then commit
# --------------------------------------------------------------------------------------


class WriteJob:
    """Stages the files of one write under ``<target>/_temporary-<uuid>/`` and commits them."""

    def __init__(
        self,
        target: Target,
        options: WriteOptions,
        *,
        tfds_version: str | None = None,
        progress: Callable[[int], None] | None = None,
    ) -> None:
        self.progress = progress
        self.threads = compression_threads(options.threads, options.compression)
        self.target = target
        self.options = options
        self.tfds_version = tfds_version
        self.job_id = str(uuid.uuid4())
        self.staging = target.join(f"_temporary-{self.job_id}")
        self.description: bytes | None = None  # the features.json committed with the files

    def run(
        self,
        schema: pa.Schema | None,
        batches: Iterator[pa.RecordBatch],
        encoder: RecordEncoder | None,
        data_columns: list[str],
    ) -> WriteResult:
        fs = self.target.fs
        created = self.target.missing_ancestor()
        pool = CompressionPool(self.threads)
        files = StagedFiles(fs, self.staging, self.options, self.job_id, pool, self.progress)
        owner = locking.Lock(None, None)
        try:
            # no cleaner sees the staging half made; while its owner lock is held, a native
            # COPY into the target (whose OVERWRITE would empty it) refuses to start
            with locking.target_lock(fs, self.target.root):
                owner = locking.owner_lock(fs, self.staging)
            self._stage(batches, encoder, data_columns, files)
            if self.description is not None and not files.records:
                files.open("", "", files.next_name(), {})  # 0 rows: one valid empty file
            files.close_all()
            extra: list[str] = self._stage_indexes(files) if self.options.index else []
            if self.description is not None:
                with fs.open(posixpath.join(self.staging, description.NAME), "wb") as handle:
                    handle.write(self.description)
                extra.append(description.NAME)
            if self.options.tfds is not None:
                from tfsql.tfds import stage_tfds_metadata

                data_schema = (
                    pa.schema([schema.field(c) for c in data_columns]) if schema is not None else pa.schema([])
                )
                extra += stage_tfds_metadata(
                    fs,
                    self.staging,
                    self.options,
                    data_schema,
                    [(f.relative, f.partition, f.sink.rows, f.sink.disk_bytes) for f in files.records],
                    version=self.tfds_version or "1.0.0",
                )
            _commit.sync_dirs(fs, files.directories())
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
            files=[
                WrittenFile(
                    self.target.shown(f.relative), f.partition, f.sink.rows, f.sink.disk_bytes, f.relative, f.index
                )
                for f in files.records
            ],
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
            path = _parent(path)

    # -- staging ------------------------------------------------------------------------

    def _stage(
        self,
        batches: Iterator[pa.RecordBatch],
        encoder: RecordEncoder | None,
        data_columns: list[str],
        files: StagedFiles,
    ) -> None:
        options = self.options
        num_shards = options.num_shards
        shard_sets: dict[str, tuple[list[FileSink], list[int]]] = {}  # partition -> sinks, [rows so far]

        def shards(key: str, partition: dict) -> tuple[list[FileSink], list[int]]:
            assert num_shards is not None
            found = shard_sets.get(key)
            if found is None:
                directory = "" if options.tfds is not None else key  # TFDS: split in the name
                _check_open_files(num_shards * (len(shard_sets) + 1), num_shards)
                try:
                    sinks = [
                        files.open(None, directory, files.shard_name(i, partition), partition, index=i)
                        for i in range(num_shards)
                    ]
                except OSError as exc:
                    if exc.errno != errno.EMFILE:
                        raise
                    raise _too_many_files(num_shards * (len(shard_sets) + 1), num_shards, None) from None
                found = shard_sets[key] = (sinks, [0])
            return found

        if num_shards is not None and not options.partition_by:
            shards("", {})
        row_base = 0
        for batch in batches:
            assert encoder is not None  # input with batches has a schema, hence an encoder
            for chunk in slices(batch):
                if num_shards is not None and options.partition_by:
                    for directory, values, rows, part in split_partitions(chunk, options.partition_by, data_columns):
                        sinks, seen = shards(directory, values)
                        self._stage_shards(part, seen[0], encoder, sinks, row_base + rows)
                        seen[0] += len(rows)
                elif num_shards is not None:
                    sinks, seen = shards("", {})
                    self._stage_shards(chunk.select(data_columns), row_base, encoder, sinks)
                elif options.partition_by:
                    for directory, values, rows, part in split_partitions(chunk, options.partition_by, data_columns):
                        framed, ends = encoder.encode(part, row_base=row_base, row_numbers=rows)
                        files.write_partition(directory, values, framed, ends)
                else:
                    framed, ends = encoder.encode(chunk.select(data_columns), row_base=row_base)
                    files.write_partition("", {}, framed, ends)
                row_base += chunk.num_rows

    def _stage_shards(
        self,
        data: pa.RecordBatch,
        dealt: int,
        encoder: RecordEncoder,
        sinks: list[FileSink],
        input_rows: np.ndarray | None = None,
    ) -> None:
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

    def _stage_indexes(self, files: StagedFiles) -> list[str]:
        """Write each staged file's record index beside it (`tfsql.record_index`), to be
        committed with it; returns their paths relative to the target."""
        sidecars = []
        for f in files.records:
            sidecar = index_path(f.relative)
            write_sidecar(
                self.target.fs, posixpath.join(self.staging, f.relative), posixpath.join(self.staging, sidecar)
            )
            sidecars.append(sidecar)
        return sidecars

    # -- commit -------------------------------------------------------------------------

    def _commit(self, files: StagedFiles, extra: Sequence[str] = ()) -> bool:
        """Commit the staged files (and ``extra`` staged metadata files) under the target
        lock; False when ``mode="ignore"`` found data."""
        fs, target = self.target.fs, self.target
        with locking.target_lock(fs, target.root):
            self._check_staging_kept(files)
            _commit.recover_locked(fs, target.root, keep=[posixpath.basename(self.staging)], display=target.display)
            if self.options.mode in ("error", "ignore") and target.has_data():
                if self.options.mode == "ignore":
                    return False
                raise target.holds_data_error(meanwhile=True)
            relative_paths = [f.relative for f in files.records] + list(extra)
            replaced = self._replaced_entries(files)
            self._check_collisions(relative_paths, replaced)
            _commit.apply_commit(
                fs,
                target.root,
                job=self.job_id,
                replaced=replaced,
                new=[(posixpath.join(posixpath.basename(self.staging), rel), rel) for rel in relative_paths],
            )
        return True

    def _check_staging_kept(self, files: StagedFiles) -> None:
        """Refuse to commit when a staged file is gone: something that ignores the target
        lock (the v1 build's native COPY with OVERWRITE: DuckDB empties the target before
        that API lets it take the lock) removed this write's staging directory.

        One listing of the staging directory, not one existence check per file: on an
        object store each check is a request."""
        prefix = self.staging.rstrip("/") + "/"
        present = {p[len(prefix) :] for p in self.target.fs.find(self.staging) if p.startswith(prefix)}
        if all(f.relative in present for f in files.records):
            return
        raise WriteConflictError(
            f"another writer removed the staging directory {self.target.shown(posixpath.basename(self.staging))!r} "
            f"of this write while it wrote (a native COPY ... (OVERWRITE) empties its target); nothing was "
            f"committed to {self.target.display!r}: write again",
            path=self.target.display,
            reason="staging_removed",
        )

    def _check_collisions(self, relative_paths: list[str], replaced: list[str]) -> None:
        if self.options.mode == "overwrite":
            return
        fs, target = self.target.fs, self.target
        replaced_set = set(replaced)
        for rel in relative_paths:
            inside_replaced = rel in replaced_set or any(rel.startswith(r + "/") for r in replaced_set)
            if not inside_replaced and fs.exists(target.join(rel)):
                raise WriteConflictError(
                    f"{target.shown(rel)!r} already exists; choose another shard_prefix or filename_pattern "
                    f"or write with mode='overwrite'",
                    path=target.shown(rel),
                    reason="file_exists",
                )

    def _replaced_entries(self, files: StagedFiles) -> list[str]:
        """Relative paths of the existing entries this write replaces."""
        fs, target, mode = self.target.fs, self.target, self.options.mode
        if mode == "overwrite" or (mode == "overwrite_partitions" and not self.options.partition_by):
            return _commit.data_entries(fs, target.root)  # never another writer's staging
        if mode == "overwrite_partitions":
            directories = {posixpath.dirname(f.relative) for f in files.records}
            return sorted(d for d in directories if d and fs.exists(target.join(d)))
        return []


# --------------------------------------------------------------------------------------
# Partition splitting
# --------------------------------------------------------------------------------------


def _framed(encode: Callable[[], tuple[Any, np.ndarray]]) -> memoryview:
    """The framed records of a prepared encoding (:meth:`RecordEncoder.prepare`)."""
    framed, ends = encode()
    return memoryview(framed).cast("B")[: int(ends[-1])]


def split_partitions(
    batch: pa.RecordBatch, partition_by: Sequence[str], data_columns: list[str]
) -> Iterator[tuple[str, dict, np.ndarray, pa.RecordBatch]]:
    """Group rows by partition values: ``(directory, values, row indices, data batch)``.

    Examples
    --------
    >>> import pyarrow as pa
    >>> batch = pa.record_batch({"k": ["b", "a", "b"], "x": [1, 2, 3]})
    >>> [(d, v, r.tolist()) for d, v, r, _ in split_partitions(batch, ["k"], ["x"])]
    [('k=b', {'k': 'b'}, [0, 2]), ('k=a', {'k': 'a'}, [1])]
    """
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


def _parent(path: str) -> str:
    """The directory holding ``path``, a path of the target's filesystem (its protocol
    stripped): fsspec's paths are '/'-separated, and it documents no public parent (its
    ``_parent`` is private). ``"bucket"`` -> ``""``; ``"/"`` -> ``"/"``.

    >>> _parent("/data/out/"), _parent("bucket/out"), _parent("bucket"), _parent("/")
    ('/data', 'bucket', '', '/')
    """
    return posixpath.dirname(path.rstrip("/")) if path.rstrip("/") else path
