"""What a file handed to a TFRecord reader is when it is not TFRecord, for the message
of a record that fails at byte 0.

The first bytes decide (the C core's ``tfsql_sniff_format``, which the DuckDB extension
asks too): Parquet, ORC, Arrow IPC, PNG, JPEG, JSON or other text; a gzip file is asked
about the bytes it decompresses to. `not_tfrecord_hint` words it
(`tfsql.messages.NOT_TFRECORD`) with the reader to use, in the caller's dialect, and
falls back to `tfsql.messages.AT_BYTE_ZERO` when the bytes say nothing (or the file
cannot be read here: a remote URL).

Examples
--------
>>> found_format(b"PAR1\\x15\\x04"), found_format(b"\\x89PNG\\r\\n\\x1a\\n...."), found_format(b"a,b\\n1,2\\n")
(('parquet', False), ('png', False), ('text', False))
>>> import gzip
>>> found_format(gzip.compress(b'{"a": 1}\\n'))
('json', True)
>>> found_format(b"\\x00\\x01\\x02") is None
True
"""

from __future__ import annotations

import zlib

from tfsql import messages
from tfsql._codec import codec

__all__ = ["HEAD_BYTES", "found_format", "not_tfrecord_hint"]

#: Bytes of a file (or of its decompressed start) the sniff looks at.
HEAD_BYTES = 512


def found_format(head: bytes) -> tuple[str, bool] | None:
    """``(format key, gzip-compressed)`` of a file starting with ``head``; None for
    TFRecord (plain or inside gzip) and for bytes that say nothing."""
    found = codec.sniff_format(head[:HEAD_BYTES])
    if found != "gzip":
        return None if found is None else (found, False)
    try:
        inner = zlib.decompressobj(31).decompress(head, HEAD_BYTES)
    except zlib.error:
        return None
    found = codec.sniff_format(inner) if inner else None
    return None if found in (None, "gzip") else (found, True)


def not_tfrecord_hint(path: str | None, dialect: str = "python") -> str:
    """The hint of a record at byte 0 of ``path``: what the file is and what reads it,
    else `tfsql.messages.AT_BYTE_ZERO`."""
    found = _file_format(path)
    if found is None:
        return messages.render(messages.AT_BYTE_ZERO, dialect)
    key, gzipped = found
    what = messages.NOT_TFRECORD_WHAT[key]
    if gzipped:
        what = messages.render(messages.GZIP_OF, dialect, what=what)
    reader = messages.DIALECTS[dialect]["read_" + key]
    return messages.render(messages.NOT_TFRECORD, dialect, what=what, reader=reader)


def _file_format(path: str | None) -> tuple[str, bool] | None:
    if path is None or "://" in path:
        return None
    try:
        with open(path, "rb") as handle:
            return found_format(handle.read(4096))  # enough to inflate HEAD_BYTES of most gzip
    except OSError:
        return None
