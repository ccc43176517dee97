"""The format of ``tfsql convert``'s source: ``--from``, else the files' contents.

Each visible file (hidden and bookkeeping files, and the column description
``features.json`` tfsql writers keep, are skipped as readers skip them; empty files say
nothing) is recognised by its first bytes — Parquet's ``PAR1``, a TFRecord
header whose length CRC holds (plain, or inside gzip or zlib), JSON's opening ``{`` or
``[`` — and, when those do not decide, by its extension. A directory whose files are of
one format is that format; one holding several (say TFRecord part files beside a
``meta.json``) is a usage error listing what it holds, since no single reader can read
it whole.

Examples
--------
>>> import os, tempfile
>>> import pyarrow as pa, tfsql
>>> path = tempfile.mkdtemp()
>>> _ = tfsql.write_tfrecord(pa.table({"x": [1]}), path)
>>> source_format(path, None)
'tfrecord'
>>> with open(os.path.join(path, "meta.json"), "w") as f:
...     _ = f.write('{"rows": 1}')
>>> source_format(path, None)
Traceback (most recent call last):
...
tfsql.cli.errors.UsageError: ... holds files of several formats: 1 json (meta.json), 1 tfrecord (part-...); ...
"""

from __future__ import annotations

import os
import struct
import zlib

from tfsql._codec import codec
from tfsql.cli.errors import UsageError
from tfsql.cli.outputs import _format_from_extension
from tfsql.discovery import is_hidden_name
from tfsql.layouts import TFDS_METADATA

__all__ = ["source_format", "file_format"]

_UNRECOGNISED = "unrecognised"


def _is_tfrecord_header(head: bytes) -> bool:
    from tfsql._codec import codec

    return len(head) >= 12 and codec.masked_crc32c(head[:8]) == struct.unpack_from("<I", head, 8)[0]


def _sniff(head: bytes) -> str | None:
    if head.startswith(b"PAR1"):
        return "parquet"
    if _is_tfrecord_header(head):
        return "tfrecord"
    if head[:2] == b"\x1f\x8b" or (len(head) >= 2 and (head[0] & 0x0F) == 8 and (head[0] * 256 + head[1]) % 31 == 0):
        try:
            inflated = zlib.decompressobj(47).decompress(head, 12)  # 47: gzip or zlib header
        except zlib.error:
            return None
        return "tfrecord" if _is_tfrecord_header(inflated) else None
    if head.lstrip()[:1] in (b"{", b"["):
        return "json"
    return None


def file_format(path: str) -> str | None:
    """One file's format: from its first bytes, else its extension (None: neither says)."""
    with open(path, "rb") as f:
        head = f.read(4096)
    return _sniff(head) or _format_from_extension(path)


def _directory_files(path: str) -> list[tuple[str, str]]:
    """``(directory, name)`` of each file under ``path``, in order, hidden directories
    skipped (the one walk of the directory)."""
    listing: list[tuple[str, str]] = []
    for root, dirs, names in os.walk(path):
        dirs[:] = sorted(d for d in dirs if not is_hidden_name(d))
        listing.extend((root, name) for name in sorted(names))
    return listing


def _directory_formats(path: str, listing: list[tuple[str, str]]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for root, name in listing:
        full = os.path.join(root, name)
        if is_hidden_name(name) or codec.is_description_name(name):  # metadata, as readers skip it
            continue
        if not os.path.isfile(full) or os.path.getsize(full) == 0:
            continue
        fmt = file_format(full) or _UNRECOGNISED
        found.setdefault(fmt, []).append(os.path.relpath(full, path))
    return found


def source_format(path: str, explicit: str | None) -> str:
    """The format to read ``path`` as: ``explicit`` (``--from``) when given, else from
    the contents of the file or of the directory's files (see the module docstring);
    TFRecord when nothing says otherwise."""
    if explicit:
        return explicit
    if os.path.isfile(path):
        return file_format(path) or "tfrecord"
    if not os.path.isdir(path):  # a glob or a URL: its extension
        return _format_from_extension(path) or "tfrecord"
    walked = _directory_files(path)
    if any(name == TFDS_METADATA for _, name in walked):
        return "tfrecord"  # a TFDS dataset directory: its JSON and text files are metadata
    found = _directory_formats(path, walked)
    if len(found) > 1:
        listing = ", ".join(
            f"{len(files)} {fmt} ({', '.join(files[:3])}{', ...' if len(files) > 3 else ''})"
            for fmt, files in sorted(found.items())
        )
        raise UsageError(
            f"{path} holds files of several formats: {listing}; convert one format at a time "
            f"with a glob of its files (e.g. '{os.path.join(path, '*.tfrecord')}') and --from, "
            "or move the other files out"
        )
    fmt = next(iter(found), "tfrecord")
    return "tfrecord" if fmt == _UNRECOGNISED else fmt
