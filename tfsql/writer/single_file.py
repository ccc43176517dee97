"""Writing one TFRecord file (a target named ``*.tfrecord``, ``*.tfrecord.gz`` ...; see
`tfsql.naming`).

The records are written as a one-shard directory under a hidden temporary name next to
the target (``.x.tfrecord.tfsql-<job>/``, which its writer holds an owner lock on while
it lives), then the file is renamed over the target, so readers never see a partial
file and a failing write leaves the old file as it was. The staging directories that
killed writers left are removed by the next write of the file and by
:func:`tfsql.recover` on the file or its directory. The mode decides what happens
to an existing file: ``"error"`` raises ``FileExistsError``, ``"ignore"`` writes
nothing, ``"overwrite"`` (and ``"overwrite_partitions"``) replace it, ``"append"``
writes a new file holding the old records followed by the new ones (decompressed and
recompressed when the file is compressed) and renames it over the old one.
"""

from __future__ import annotations

import os
import posixpath
import uuid
from typing import Any

from tfsql import locking
from tfsql.commit import remove_dead_file_staging, single_file_staging
from tfsql.compressing import compressor
from tfsql.discovery import _coerce_filesystem, _resolve
from tfsql.errors import WriteConflictError
from tfsql.naming import check_name_compression, compression_from_name
from tfsql.options import WriteOptions
from tfsql.record_index import move_indexed
from tfsql.staging import removed_at_exit
from tfsql.writer.result import WriteResult, WrittenFile

__all__ = ["write_single_file", "concatenate_records"]

_DIRECTORY_OPTIONS = ("partition_by", "max_rows_per_file", "max_bytes_per_file", "filename_pattern", "tfds")


def write_single_file(data: Any, path: Any, options: WriteOptions) -> WriteResult:
    """Write `data` as the one file `path` (`options`: the writer's checked options).

    Examples
    --------
    >>> import tempfile, pyarrow as pa
    >>> out = tempfile.mkdtemp() + "/train.tfrecord.gz"
    >>> result = write_single_file(pa.table({"x": [1, 2]}), out, WriteOptions())
    >>> result.rows, result.files[0].relative
    (2, 'train.tfrecord.gz')
    """

    text = os.fspath(path)
    given = [name for name in _DIRECTORY_OPTIONS if getattr(options, name)]
    if options.num_shards not in (None, 1):
        given.append("num_shards")
    if given:
        raise ValueError(
            f"{text!r} names one file (it ends in a TFRecord suffix), but {given[0]} writes a "
            f"directory of files; drop the suffix or add a trailing '/' to write a directory"
        )
    check_name_compression(posixpath.basename(text), options.compression or compression_from_name(text))
    fs, target = _resolve(text, _coerce_filesystem(options.filesystem))
    if fs.isdir(target):
        raise IsADirectoryError(
            f"{text!r} is a directory; add a trailing '/' to write part files into it, "
            "or name a file that does not exist"
        )
    exists = fs.exists(target)
    if exists and options.mode == "error":
        raise WriteConflictError(
            f"{text!r} already exists; pass mode='overwrite' to replace it, 'append' to add "
            "records to it or 'ignore' to keep it, or choose another name",
            path=text,
            reason="target_exists",
        )
    if exists and options.mode == "ignore":
        return WriteResult(path=text, skipped=True)
    compression = options.compression if options.compression is not None else compression_from_name(text)
    if options.index and compression is not None:
        raise ValueError(
            f"index=True needs an uncompressed file, but {text!r} is {compression}-compressed: its "
            "records have no byte offsets to index; drop the .gz / .zz suffix or the index"
        )
    appending = exists and options.mode == "append"
    parent, name = posixpath.split(target)
    fs.makedirs(parent, exist_ok=True)
    staging = posixpath.join(parent, single_file_staging(name, uuid.uuid4().hex))
    owner = None
    # (a remote filesystem's staging path names no local file: removing it is a no-op)
    with removed_at_exit(staging):
        try:
            with locking.target_lock(fs, parent):  # no cleaner sees the staging half made
                remove_dead_file_staging(fs, parent, name)
                owner = locking.owner_lock(fs, staging)
            rows, size = _write_staged(data, staging, fs, target, appending, compression, options)
        finally:  # after an error or an interrupt at any point, the staging directory goes
            try:
                if fs.exists(staging):
                    fs.rm(staging, recursive=True)
            finally:
                if owner is not None:
                    owner.release()
    return WriteResult(path=text, files=[WrittenFile(text, {}, rows, size, name, 0)])


def _write_staged(
    data: Any, staging: str, fs: Any, target: str, appending: bool, compression: Any, options: WriteOptions
) -> tuple[int, int]:
    """Write the records at ``staging``, then move them to ``target`` (see the module);
    returns the rows written and the file's size."""
    from tfsql.writer.job import write_directory

    result = write_directory(
        data,
        staging,
        options.changed(
            filesystem=fs,
            num_shards=1,
            mode="error",
            compression=None if appending else compression,
            index=False,
        ),
    )
    staged = posixpath.join(staging, result.files[0].relative) if result.files else None
    final = posixpath.join(staging, "final")
    if appending:
        sources = [target] + ([staged] if staged is not None and fs.exists(staged) else [])
        concatenate_records(fs, sources, final, compression, options.compression_level)
    elif staged is None or not fs.exists(staged):  # no input batches: an empty file
        concatenate_records(fs, [], final, compression)
    else:
        fs.mv(staged, final)
    move_indexed(fs, final, target, index=options.index)
    return result.rows, fs.size(target)


def concatenate_records(
    fs: Any, sources: list[str], out: str, compression: str | None, level: int | None = None
) -> None:
    """Write ``out``: the records of every file of ``sources`` in order (each
    decompressed as its magic bytes say), compressed with ``compression`` at ``level``
    (0-9; None: the default). No sources write an empty (compressed) file."""
    from tfsql.framing import FrameReader

    stream_compressor = compressor(compression, level)
    with fs.open(out, "wb") as sink:
        for source in sources:
            with fs.open(source, "rb") as raw:
                for block in FrameReader(raw, path=source, compression="infer", verify=False).blocks(max_records=-1):
                    # a block's frames are consecutive: copied as they are
                    start = int(block.offsets[0]) - 12
                    chunk = block.buf[start : int(block.offsets[-1]) + int(block.lengths[-1]) + 4]
                    sink.write(stream_compressor.compress(chunk) if stream_compressor is not None else chunk)
        if stream_compressor is not None:
            sink.write(stream_compressor.flush())
