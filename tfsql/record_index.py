"""Record offset index sidecars: ``tfsql index`` writes them, record counts read them.

An uncompressed TFRecord file ``dir/name`` may have an index ``dir/.name.idx`` beside it:
one text line per record, ``"<offset> <size>\\n"``, the byte offset of the record's header
and its framed size (12 + payload + 4). This is exactly the format of NVIDIA DALI's
``tfrecord2idx`` tool and of vahidk/tfrecord's ``create_index`` (their readers take the
index path as an argument: pass ours). The name starts with ``.`` like Hadoop's ``.crc``
sidecars, so every reader that lists a directory (``tfsql.dataset``, the DuckDB
extension, Spark's and pyarrow's listings) skips it as a hidden file; a DALI or
vahidk-made index under another name is simply not used by tfsql.

:func:`indexed_count` (used by ``count_rows``, ``tfsql count`` and ``count(*)``) counts a
file's records from its index by counting lines, without reading the file, when the
index is consistent with the file, checked whole before it is used (by the core's one
validator, ``codec.index_check``, which the DuckDB extension's ``tfrecord_metadata`` uses
too):

- the index is at least as new as the file (``st_mtime``),
- its lines are ``<offset> <size>`` below 2^63, the first at byte 0, each record ending
  where the next line starts (so no line is repeated, reordered or dropped) and the last
  exactly at the file's size, and
- the record header at that last line's offset is valid (its length CRC matches and its
  length is the line's size): one 12-byte read of the file.

A file rewritten after its index fails these checks (to be exact, a same-size rewrite
with an older modification time and a valid record at the same last offset would not:
rebuild indexes after replacing files in place); its index is then **ignored with a
warning** and the headers are read. Reads never write indexes; run ``tfsql index``
again. Writers write them when asked: ``write_tfrecord(..., index=True)`` stages each
file's index beside it and commits both together. Compressed files have no index
(their records have no fixed offsets).

Examples
--------
>>> import os, tempfile, pyarrow as pa, tfsql
>>> path = os.path.join(tempfile.mkdtemp(), "a.tfrecord")
>>> _ = tfsql.write_tfrecord(pa.table({"x": [1, 2, 3]}), path)
>>> write_index(path)
3
>>> open(index_path(path)).read().splitlines()
['0 30', '30 30', '60 30']
>>> indexed_count(path)
3
"""

from __future__ import annotations

import os
import warnings
from typing import Any

import numpy as np

from tfsql._codec import codec
from tfsql.errors import StaleIndexWarning
from tfsql.framing import count_plain_records
from tfsql.options import DEFAULT_MAX_RECORD_BYTES

__all__ = [
    "index_path",
    "index_text",
    "write_index",
    "write_sidecar",
    "move_indexed",
    "indexed_count",
    "indexed_spans",
    "record_spans",
    "StaleIndexWarning",
]

_HEADER = 12


def index_path(path: str) -> str:
    """The index sidecar of the file ``path`` (a local or fsspec path): ``.<name>.idx``
    beside it.

    Examples
    --------
    >>> index_path("/data/train-0.tfrecord")
    '/data/.train-0.tfrecord.idx'
    """
    return codec.index_sidecar_path(path)


def index_text(path: str, *, fs: Any = None, max_record_bytes: int = DEFAULT_MAX_RECORD_BYTES) -> tuple[str, int]:
    """The index lines of the uncompressed file ``path`` and its number of records,
    reading only its record headers (on ``fs``, an fsspec filesystem: its bytes are
    streamed and framed). A corrupt header raises :class:`~tfsql.errors.CorruptRecordError`.

    Examples
    --------
    >>> import os, tempfile, pyarrow as pa, tfsql
    >>> path = os.path.join(tempfile.mkdtemp(), "a.tfrecord")
    >>> _ = tfsql.write_tfrecord(pa.table({"x": [1, 2]}), path)
    >>> index_text(path)
    ('0 30\\n30 30\\n', 2)
    """
    starts, sizes = record_spans(path, fs=fs, max_record_bytes=max_record_bytes)
    return "".join(f"{o} {s}\n" for o, s in zip(starts.tolist(), sizes.tolist())), len(starts)


def record_spans(
    path: str, *, fs: Any = None, max_record_bytes: int = DEFAULT_MAX_RECORD_BYTES
) -> tuple[np.ndarray, np.ndarray]:
    """Where each record of the uncompressed file ``path`` starts (its header's byte
    offset) and its framed size (12 + payload + 4), as two int64 arrays, reading only
    its record headers (on ``fs``, an fsspec filesystem: its bytes are streamed and
    framed). What :func:`index_text` writes; a corrupt header raises
    :class:`~tfsql.errors.CorruptRecordError`.

    Examples
    --------
    >>> import os, tempfile, pyarrow as pa, tfsql
    >>> path = os.path.join(tempfile.mkdtemp(), "a.tfrecord")
    >>> _ = tfsql.write_tfrecord(pa.table({"x": [1, 2]}), path)
    >>> [a.tolist() for a in record_spans(path)]
    [[0, 30], [30, 30]]
    """
    if fs is None or _is_local(fs):
        return _local_spans(path, max_record_bytes)
    return _streamed_spans(fs, path, max_record_bytes)


def _is_local(fs: Any) -> bool:
    protocol = getattr(fs, "protocol", None)
    return protocol in ("file", "local") or (isinstance(protocol, tuple) and "file" in protocol)


def _local_spans(path: str, max_record_bytes: int) -> tuple[np.ndarray, np.ndarray]:
    with open(path, "rb", buffering=0) as raw:
        fd = raw.fileno()
        size = os.fstat(fd).st_size
        offsets, end, status, _ = codec.header_offsets(fd, 0, size, max_record_bytes)
        if status != codec.FRAME_OK:
            count_plain_records(fd, path=path, size=size, max_record_bytes=max_record_bytes)  # raises
    starts = np.frombuffer(offsets, dtype=np.uint64).astype(np.int64)
    return starts, np.diff(np.append(starts, end))


def _streamed_spans(fs: Any, path: str, max_record_bytes: int) -> tuple[np.ndarray, np.ndarray]:
    from tfsql.framing import FrameReader

    starts, sizes = [], []
    with fs.open(path, "rb") as raw:
        reader = FrameReader(raw, path=path, verify=False, max_record_bytes=max_record_bytes)
        for block in reader.blocks():
            starts.append(block.offsets.astype(np.int64) + (block.base_offset - _HEADER))
            sizes.append(block.lengths.astype(np.int64) + (_HEADER + 4))
    if not starts:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    return np.concatenate(starts), np.concatenate(sizes)


def write_index(path: str, *, max_record_bytes: int = DEFAULT_MAX_RECORD_BYTES) -> int:
    """Write the index sidecar of the uncompressed local file ``path`` (reading only its
    record headers) and return its number of records. The index is written to a
    temporary name and renamed into place. A corrupt header raises
    :class:`~tfsql.errors.CorruptRecordError` and leaves any previous index untouched."""
    text, count = index_text(path, max_record_bytes=max_record_bytes)
    target = index_path(path)
    staged = f"{target}.{os.getpid()}.tmp"
    try:
        with open(staged, "w", encoding="ascii") as out:
            out.write(text)
        os.replace(staged, target)
    finally:
        if os.path.exists(staged):
            os.remove(staged)
    return count


def write_sidecar(fs: Any, path: str, sidecar: str) -> None:
    """Write the index of the just-written file ``path`` on ``fs`` to ``sidecar`` (a
    staged name the writer's commit moves into place), synced to disk. Written after
    the file is complete, it is never older than the file."""
    from tfsql.commit import sync_file

    text, _ = index_text(path, fs=fs)
    with fs.open(sidecar, "wb") as out:
        out.write(text.encode("ascii"))
        sync_file(out)


def move_indexed(fs: Any, staged: str, target: str, *, index: bool) -> None:
    """Move the complete file ``staged`` over ``target`` on ``fs``; with ``index``, write
    its index first and move it beside ``target`` after the file (so it is never older
    than it). The index ``target`` had (it describes the old file) is removed before the
    file is moved, so that a crash at any step leaves no index that does not match its
    file (at worst none)."""
    sidecar = index_path(target)
    if index:
        write_sidecar(fs, staged, staged + ".idx")
    if fs.exists(sidecar):
        fs.rm(sidecar)
    fs.mv(staged, target)
    if index:
        fs.mv(staged + ".idx", sidecar)


def indexed_count(path: str, fd: int | None = None) -> int | None:
    """The number of records of the local file ``path`` (open as ``fd``, if it is) from
    its index sidecar, or None when it has none, or one that does not match the file
    (then a :class:`StaleIndexWarning` says so)."""
    checked = _checked_index(path, fd, spans=False)
    return None if checked is None else checked[0]


def indexed_spans(path: str, fd: int | None = None) -> tuple[np.ndarray, np.ndarray] | None:
    """:func:`record_spans` of the local file ``path`` (open as ``fd``, if it is) read
    from its index sidecar without reading the file, or None when it has none, or one
    that does not match the file (then a :class:`StaleIndexWarning` says so, as
    :func:`indexed_count` does).

    Examples
    --------
    >>> import os, tempfile, pyarrow as pa, tfsql
    >>> path = os.path.join(tempfile.mkdtemp(), "a.tfrecord")
    >>> _ = tfsql.write_tfrecord(pa.table({"x": [1, 2]}), path)
    >>> indexed_spans(path) is None
    True
    >>> _ = write_index(path)
    >>> [a.tolist() for a in indexed_spans(path)]
    [[0, 30], [30, 30]]
    """
    checked = _checked_index(path, fd, spans=True)
    if checked is None:
        return None
    _, offsets, sizes = checked
    return np.frombuffer(offsets, dtype=np.uint64).astype(np.int64), np.frombuffer(sizes, dtype=np.uint64).astype(
        np.int64
    )


def _checked_index(path: str, fd: int | None, *, spans: bool) -> tuple[int, Any, Any] | None:
    """``codec.index_check`` of the index sidecar of ``path`` when it matches the file
    (the core's one validator, which the DuckDB extension uses too), else None (warning
    with :class:`StaleIndexWarning` when there is one that does not)."""
    target = index_path(path)
    try:
        index_fd = os.open(target, os.O_RDONLY)
    except OSError:
        return None
    try:
        index_stat = os.fstat(index_fd)
        text = os.read(index_fd, index_stat.st_size)
    finally:
        os.close(index_fd)
    data_fd = os.open(path, os.O_RDONLY) if fd is None else fd
    checked = None
    try:
        data_stat = os.fstat(data_fd)
        if len(text) != index_stat.st_size:
            problem = "the index changed while being read"
        elif not codec.index_fresh(index_stat.st_mtime_ns, data_stat.st_mtime_ns):
            problem = "the file is newer than its index"
        else:
            try:
                checked = codec.index_check(text, data_fd, data_stat.st_size, spans)
                problem = None
            except ValueError as exc:
                problem = str(exc)
    finally:
        if fd is None:
            os.close(data_fd)
    if problem is not None:
        warnings.warn(
            f"ignoring the record index {target} of {path}: {problem}; rebuild it with `tfsql index`",
            StaleIndexWarning,
            stacklevel=4,
        )
    return checked
