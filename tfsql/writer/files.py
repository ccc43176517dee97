"""The files of one write: naming, the per-file writer, rotation by rows and bytes.

`StagedFiles` creates every data file of a write job under its staging directory,
names it (`tfsql.naming`: Spark's ``part-00000-<job>-c<i:03d>``, shards
``<prefix>-<i:05d>-of-<n:05d>``, TFDS shards, or ``filename_pattern``), keeps a bounded
number of partition files open (least recently used closes first), rotates a file once
it holds ``max_rows_per_file`` records or ``max_bytes_per_file`` bytes, and records each
file as a `StagedFile` (relative path, partition values, number, sink). `FileSink` writes
one file, streaming it through gzip / zlib (on the write's compression threads,
:mod:`tfsql.compressing`) and fsyncing it on close.

Examples
--------
>>> import fsspec
>>> from tfsql.options import WriteOptions
>>> fs = fsspec.filesystem("memory")
>>> files = StagedFiles(fs, "/staging", WriteOptions(filename_pattern="f-{i}"), job_id="job")
>>> sink = files.open("", "", files.next_name(), {})
>>> sink.write(memoryview(b"framed records"), 1); files.close_all()
>>> [(f.relative, f.index, f.sink.rows) for f in files.records]
[('f-0.tfrecord', 0, 1)]
"""

from __future__ import annotations

import posixpath
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import fsspec
import numpy as np

from tfsql import commit as _commit
from tfsql.compressing import CompressionPool, compressor
from tfsql.naming import format_filename, has_tfrecord_name, tfrecord_extension
from tfsql.options import WriteOptions

__all__ = ["FileSink", "StagedFile", "StagedFiles"]

_MAX_OPEN_FILES = 64  # partition files kept open at once (least recently used closes)


class FileSink:
    """One output file being written, with optional streaming gzip / zlib."""

    def __init__(
        self,
        fs: fsspec.AbstractFileSystem,
        path: str,
        compression: str | None,
        level: int | None,
        pool: CompressionPool | None = None,
        progress: Callable[[int], None] | None = None,
    ) -> None:
        self._file = fs.open(path, "wb")
        # Called with a chunk's row count once its bytes are in the file (after their
        # compression, which can lag the rows taken from the input by seconds).
        self._progress = progress
        self._compressor: Any = compressor(compression, level)
        # Compression on the write's worker threads (tfsql.compressing), when it has them.
        self._stream = pool.stream(self._compressor, self._put) if pool and self._compressor else None
        self.rows = 0
        self.data_bytes = 0  # framed TFRecord bytes, before compression
        self.disk_bytes = 0

    def write(self, framed: memoryview, rows: int) -> None:
        self.rows += rows
        self.data_bytes += len(framed)
        if self._stream is not None:
            self._stream.write(framed, self._written(rows))
            return
        self._put(self._compressor.compress(framed) if self._compressor else framed)
        self._report(rows)

    def write_encoded(self, encode: Callable[[], memoryview], rows: int, estimate: int) -> None:
        """Write the framed records ``encode()`` returns: called on the compression
        thread of this file when it has one (so encoding runs there too, in order with
        the file's other chunks), else at once. ``estimate``: their size, roughly."""
        if self._stream is None:
            self.write(encode(), rows)
            return
        self.rows += rows

        def job() -> memoryview:
            framed = encode()
            self.data_bytes += len(framed)  # read only after close(), which waits for it
            return framed

        self._stream.write_job(job, estimate, self._written(rows))

    def _written(self, rows: int) -> Callable[[], None] | None:
        return None if self._progress is None or not rows else lambda: self._report(rows)

    def _report(self, rows: int) -> None:
        if self._progress is not None and rows:
            self._progress(rows)

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


@dataclass(frozen=True)
class StagedFile:
    """A file of the write: its path relative to the target, its partition values, its
    number (``{i}`` of its name: the order files were started, or the shard index) and
    the sink writing it."""

    relative: str
    partition: dict[str, Any]
    index: int
    sink: FileSink


class StagedFiles:
    """Creates, names, rotates, tracks and closes the staged output files of one write
    job (the options are checked ones; ``job_id`` goes into default file names)."""

    def __init__(
        self,
        fs: fsspec.AbstractFileSystem,
        staging: str,
        options: WriteOptions,
        job_id: str,
        pool: CompressionPool | None = None,
        progress: Callable[[int], None] | None = None,
    ) -> None:
        self._fs = fs
        self._pool = pool
        self._progress = progress
        self._staging = staging
        self._options = options
        self._job_id = job_id
        self._ext = tfrecord_extension(options.compression)
        self._sequence = 0
        self._open: OrderedDict[Any, FileSink] = OrderedDict()  # LRU of open files
        self._pinned: list[FileSink] = []
        self.records: list[StagedFile] = []

    # -- naming -------------------------------------------------------------------------

    def next_name(self) -> str:
        """The name of the next rotated file (the write's next number)."""
        pattern = self._options.filename_pattern
        if pattern is None:
            name = f"part-00000-{self._job_id}-c{self._sequence:03d}"
        else:
            name = format_filename(pattern, self._sequence)
        self._sequence += 1
        return self._with_ext(name)

    def shard_name(self, index: int, partition: Mapping[str, Any] | None = None) -> str:
        """The name of shard ``index`` (of ``num_shards``) of a partition."""
        options = self._options
        n = options.num_shards
        assert n is not None  # shards are written with num_shards only
        if options.tfds is not None:
            from tfsql.tfds import shard_file_name

            return shard_file_name(options.tfds, next(iter(partition.values())) if partition else "train", index, n)
        if options.filename_pattern is not None:
            return self._with_ext(format_filename(options.filename_pattern, index, n))
        return self._with_ext(f"{options.shard_prefix}-{index:05d}-of-{n:05d}")

    def _with_ext(self, name: str) -> str:
        return name if has_tfrecord_name(name) else name + self._ext

    # -- files --------------------------------------------------------------------------

    def open(self, key: Any, directory: str, name: str, partition: dict, index: int | None = None) -> FileSink:
        """Start a staged file; ``key=None`` pins it open until `close_all` (shards).
        ``index`` is the file's number (default: the number `next_name` gave it)."""
        relative = posixpath.join(directory, name) if directory else name
        staged = posixpath.join(self._staging, relative)
        self._fs.makedirs(posixpath.dirname(staged), exist_ok=True)
        sink = FileSink(
            self._fs, staged, self._options.compression, self._options.compression_level, self._pool, self._progress
        )
        self.records.append(StagedFile(relative, partition, self._sequence - 1 if index is None else index, sink))
        if key is None:
            self._pinned.append(sink)
            return sink
        self._open[key] = sink
        while len(self._open) > _MAX_OPEN_FILES:
            _, oldest = self._open.popitem(last=False)
            oldest.close()
        return sink

    def current(self, key: Any) -> FileSink | None:
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

    def directories(self) -> set[str]:
        """The staging directory and every directory below it that holds staged files."""
        directories = {self._staging}
        for record in self.records:
            parent = posixpath.dirname(record.relative)
            while parent:
                directories.add(posixpath.join(self._staging, parent))
                parent = posixpath.dirname(parent)
        return directories

    # -- writing with rotation ----------------------------------------------------------

    def write_partition(self, directory: str, partition: dict, framed: Any, ends: np.ndarray) -> None:
        """Append framed records to the partition's current file, rotating as needed."""
        view = memoryview(framed).cast("B")
        max_rows = self._options.max_rows_per_file
        max_bytes = self._options.max_bytes_per_file
        n = len(ends)
        done = 0
        while done < n:
            sink = self.current(directory)
            if sink is None:
                sink = self.open(directory, directory, self.next_name(), partition)
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
