"""Writing one TFRecord file (a target named ``*.tfrecord``, ``*.tfrecord.gz`` ...; see
`tfsql.naming`).

The records are written as a one-shard directory under a hidden temporary name next to
the target, then the file is renamed over the target, so readers never see a partial
file and a failing write leaves the old file as it was. The mode decides what happens
to an existing file: ``"error"`` raises ``FileExistsError``, ``"ignore"`` writes
nothing, ``"overwrite"`` (and ``"overwrite_partitions"``) replace it, ``"append"``
writes a new file holding the old records followed by the new ones (decompressed and
recompressed when the file is compressed) and renames it over the old one.
"""

from __future__ import annotations

import gzip
import os
import posixpath
import uuid
import zlib
from typing import Any

from tfsql._types import RecordType
from tfsql.discovery import _coerce_filesystem, _resolve
from tfsql.naming import compression_from_name

__all__ = ["write_single_file", "concatenate_records"]

_DIRECTORY_OPTIONS = ("partition_by", "max_rows_per_file", "max_bytes_per_file", "filename_pattern", "tfds")


def write_single_file(data: Any, path: Any, options: Any, *, record_type: RecordType, layout: Any,
                      filesystem: Any):
    """Write `data` as the one file `path` (`options`: the writer's checked options).

    Returns
    -------
    tfsql.WriteResult
    """
    from tfsql.writer import WriteResult, WrittenFile, write_tfrecord

    text = os.fspath(path)
    given = [name for name in _DIRECTORY_OPTIONS if getattr(options, name)]
    if options.num_shards not in (None, 1):
        given.append("num_shards")
    if given:
        raise ValueError(
            f"{text!r} names one file (it ends in a TFRecord suffix), but {given[0]} writes a "
            f"directory of files; drop the suffix or add a trailing '/' to write a directory"
        )
    fs, target = _resolve(text, _coerce_filesystem(filesystem))
    if fs.isdir(target):
        raise IsADirectoryError(
            f"{text!r} is a directory; add a trailing '/' to write part files into it, "
            "or name a file that does not exist"
        )
    exists = fs.exists(target)
    if exists and options.mode == "error":
        raise FileExistsError(
            f"{text!r} already exists; pass mode='overwrite' to replace it, 'append' to add "
            "records to it or 'ignore' to keep it, or choose another name"
        )
    if exists and options.mode == "ignore":
        return WriteResult(path=text, skipped=True)
    compression = options.compression if options.compression is not None else compression_from_name(text)
    appending = exists and options.mode == "append"
    parent, name = posixpath.split(target)
    fs.makedirs(parent, exist_ok=True)
    staging = posixpath.join(parent, f".{name}.tfsql-{uuid.uuid4().hex}")
    try:
        result = write_tfrecord(
            data, staging, filesystem=fs, num_shards=1, record_type=record_type, layout=layout,
            compression=None if appending else compression, compression_level=_level(options),
        )
        staged = (posixpath.join(staging, posixpath.basename(result.files[0].path))
                  if result.files else None)
        final = posixpath.join(staging, "final")
        if appending:
            sources = [target] + ([staged] if staged is not None and fs.exists(staged) else [])
            concatenate_records(fs, sources, final, compression, options.compression_level)
        elif staged is None or not fs.exists(staged):  # no input batches: an empty file
            _write_empty(fs, final, compression)
        else:
            fs.mv(staged, final)
        fs.mv(final, target)
        size = fs.size(target)
    finally:
        if fs.exists(staging):
            fs.rm(staging, recursive=True)
    return WriteResult(path=text, files=[WrittenFile(text, {}, result.rows, size)])


def _level(options: Any) -> int | None:
    return None if options.compression_level == -1 else options.compression_level


def concatenate_records(fs, sources: list[str], out: str, compression: str | None, level: int = -1) -> None:
    """Write ``out``: the records of every file of ``sources`` in order (each
    decompressed as its magic bytes say), compressed with ``compression``."""
    from tfsql.framing import open_decompressed

    compressor = None
    if compression == "gzip":
        compressor = zlib.compressobj(level, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    elif compression == "zlib":
        compressor = zlib.compressobj(level, zlib.DEFLATED, zlib.MAX_WBITS)
    with fs.open(out, "wb") as sink:
        def put(chunk: bytes) -> None:
            sink.write(compressor.compress(chunk) if compressor is not None else chunk)

        for source in sources:
            with fs.open(source, "rb") as raw:
                stream = open_decompressed(raw, "infer", path=source)
                try:
                    _copy(stream, put)
                finally:
                    stream.close()
        if compressor is not None:
            sink.write(compressor.flush())


def _copy(stream: Any, put: Any) -> None:
    while True:
        chunk = stream.read(1 << 20)
        if not chunk:
            return
        put(chunk)


def _write_empty(fs, path: str, compression: str | None) -> None:
    payload = gzip.compress(b"") if compression == "gzip" else zlib.compress(b"") if compression == "zlib" else b""
    with fs.open(path, "wb") as handle:
        handle.write(payload)
