"""Framing: from a file's bytes to blocks of CRC-checked records (decompressing first).

A file is read in chunks into fresh buffers; the C core indexes the frames in each
chunk (checking CRCs) and the reader hands out :class:`RecordBlock` objects: a buffer
plus the offsets and lengths of at most ``max_records`` records whose payloads total at
most ``max_bytes``. A block never spans two buffers and buffers are never reused, so
blocks can be decoded on other threads while reading goes on. Memory per open file is
one chunk plus the blocks still in flight.

Compression: ``"infer"`` looks at the first bytes — a valid TFRecord header (its length
CRC matches) means no compression; otherwise gzip's magic ``1f 8b`` or a zlib header
select those. GZIP streams may hold several concatenated members, as TensorFlow
accepts.

Examples
--------
>>> import io
>>> import numpy as np
>>> framed, _ = codec.encode_frames(b"abc", np.array([0, 1, 3], dtype=np.int64))
>>> reader = FrameReader(io.BytesIO(bytes(framed)), path="mem")
>>> [len(block) for block in reader.blocks()]
[2]
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass
from typing import Any, BinaryIO, Callable, Iterator

import numpy as np

from tfsql._codec import codec
from tfsql.buffers import BufferPool
from tfsql.errors import CorruptRecordError
from tfsql.options import DEFAULT_BATCH_BYTES, DEFAULT_BATCH_SIZE, DEFAULT_MAX_RECORD_BYTES, READ_OPTIONS

__all__ = [
    "RecordBlock",
    "FrameReader",
    "report_corrupt",
    "count_plain_records",
    "detect_compression",
    "resolve_compression",
]

DEFAULT_CHUNK_BYTES = 16 << 20
_FIRST_READ_BYTES = 256 << 10
_HEADER = 12


def detect_compression(head: bytes) -> str | None:
    """Guess a file's compression from its first bytes (at least 12 when available).

    Examples
    --------
    >>> import gzip
    >>> detect_compression(gzip.compress(b"x")), detect_compression(b"")
    ('gzip', None)
    """
    return codec.detect_compression(head)


def resolve_compression(raw: BinaryIO, compression: str | None) -> str | None:
    """The compression of the file ``raw`` (at its start; left there): ``compression``,
    or for ``"infer"`` what its first bytes say (:func:`detect_compression`).

    Examples
    --------
    >>> import gzip, io
    >>> resolve_compression(io.BytesIO(gzip.compress(b"x")), "infer"), resolve_compression(io.BytesIO(), "zlib")
    ('gzip', 'zlib')
    """
    if compression != "infer":
        return compression
    head = raw.read(_HEADER)
    raw.seek(0)
    return detect_compression(head)


@dataclass
class RecordBlock:
    """Records ``buf[offsets[i] : offsets[i] + lengths[i]]`` of one file.

    ``first_index`` is the file-wide index of record 0 and ``base_offset`` the
    (decompressed) file offset of ``buf[0]``, for error messages. ``crc_pending``: the
    framing checked the headers only, and the records' data CRCs are to be checked
    as they are decoded (:attr:`FrameReader.defer_data_crc`).

    Examples
    --------
    >>> import numpy as np
    >>> block = RecordBlock(memoryview(b""), np.array([12, 30]), np.array([2, 5]), 7, 100, "f")
    >>> part = block.slice(1, 2)
    >>> len(part), part.first_index, part.record_offset(0)
    (1, 8, 118)
    """

    buf: memoryview
    offsets: np.ndarray
    lengths: np.ndarray
    first_index: int
    base_offset: int
    path: str
    crc_pending: bool = False

    def __len__(self) -> int:
        return len(self.offsets)

    def slice(self, start: int, stop: int, *, crc_pending: bool | None = None) -> "RecordBlock":
        """Records ``start`` to ``stop`` (consecutive frames, like the block's)."""
        return RecordBlock(
            self.buf,
            self.offsets[start:stop],
            self.lengths[start:stop],
            self.first_index + start,
            self.base_offset,
            self.path,
            self.crc_pending if crc_pending is None else crc_pending,
        )

    def head(self) -> "RecordBlock":
        """A block of none of the records, naming where this one starts (file, record
        index, offset) without holding its buffer, which can then be reused.

        >>> head = RecordBlock(memoryview(b"xy"), np.array([12]), np.array([2]), 7, 100, "f").head()
        >>> len(head), len(head.buf), head.first_index, head.path
        (0, 0, 7, 'f')
        """
        empty = np.zeros(0, dtype=np.uint64)
        return RecordBlock(memoryview(b""), empty, empty, self.first_index, self.base_offset, self.path)

    def positions(self) -> "RecordBlock":
        """This block without its buffer: where its records start, kept for the error
        of a value met after the buffer is reused (:meth:`record_offset` still works).

        >>> RecordBlock(memoryview(b"xy"), np.array([12]), np.array([2]), 7, 100, "f").positions().record_offset(0)
        100
        """
        return RecordBlock(memoryview(b""), self.offsets, self.lengths, self.first_index, self.base_offset, self.path)

    def record_offset(self, i: int) -> int:
        """File offset of record ``i``'s header."""
        return self.base_offset + int(self.offsets[i]) - _HEADER


def _readinto(stream: BinaryIO, view: memoryview) -> int:
    """Fill ``view`` from ``stream`` (without an intermediate copy when it can)."""
    readinto = getattr(stream, "readinto", None)
    if readinto is not None:
        return readinto(view) or 0
    data = stream.read(len(view))
    view[: len(data)] = data
    return len(data)


def count_plain_records(fd: int, *, path: str, size: int, max_record_bytes: int = DEFAULT_MAX_RECORD_BYTES) -> int:
    """Count the records of an uncompressed file of ``size`` bytes by reading only each
    record's 12-byte header (positioned reads on ``fd``, the GIL released; payloads are
    never read, so data CRCs are not checked). A bad length CRC, a length above
    ``max_record_bytes`` or one running past ``size`` is a
    :class:`~tfsql.errors.CorruptRecordError`.

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np
    >>> framed, _ = codec.encode_frames(b"abcdef", np.array([0, 2, 2, 6], dtype=np.int64))
    >>> fd, name = tempfile.mkstemp()
    >>> _ = os.write(fd, bytes(framed))
    >>> count_plain_records(fd, path=name, size=len(framed))
    3
    >>> os.close(fd)
    """
    count, end, status, length = codec.count_headers(fd, 0, size, max_record_bytes)
    if status == codec.FRAME_OK:
        return count
    if status == codec.FRAME_TOO_LONG:
        reason, limit = "too_long", max_record_bytes
    elif status == codec.FRAME_BAD_LENGTH_CRC:
        reason, limit = "length_crc", None
    elif size - end < _HEADER:
        reason, limit = "truncated", size - end
    else:
        reason, limit = "past_end", size - end
    raise CorruptRecordError(
        reason,
        path=path,
        record_index=count,
        offset=end,
        rest_of_file=True,
        length=length if reason in ("too_long", "past_end") else None,
        limit=limit,
    )


_COMPRESSION_CODES = {None: "READER_PLAIN", "gzip": "READER_GZIP", "zlib": "READER_ZLIB"}
# The reader's damage statuses, as CorruptRecordError reasons.
_REASONS = {
    "FRAME_TRUNCATED": "truncated",
    "FRAME_PAST_END": "past_end",
    "FRAME_TOO_LONG": "too_long",
    "FRAME_BAD_LENGTH_CRC": "length_crc",
    "FRAME_BAD_DATA_CRC": "data_crc",
    "READER_STREAM_CORRUPT": "stream_corrupt",
    "READER_STREAM_TRUNCATED": "stream_truncated",
}


def _size_of(raw: BinaryIO) -> int:
    """The size of the open file ``raw`` now (its position is left at 0)."""
    try:
        return os.fstat(raw.fileno()).st_size
    except (AttributeError, OSError, ValueError, NotImplementedError):
        pass
    size = raw.seek(0, os.SEEK_END)
    raw.seek(0)
    return size


def _local_file(raw: Any) -> tuple[Any, Any] | None:
    """``(guarded file, interrupt check)`` when ``raw`` is a local file opened by
    :mod:`tfsql.file_guard` (perhaps stopped by an interrupt): it is then read with
    ``pread`` on its descriptor, the GIL released, checked after each chunk, and the
    interrupt checked before each read."""
    from tfsql.file_guard import GuardedFile
    from tfsql.interrupts import InterruptibleFile

    check = None
    if isinstance(raw, InterruptibleFile):
        raw, check = raw.raw, raw.check
    if type(raw) is GuardedFile and hasattr(codec, "count_headers"):  # positioned reads (not Windows)
        return raw, check
    return None


def _python_read(raw: Any) -> Callable[[memoryview, int], int]:
    """``read(view, offset)`` over a file object (seeking only when not already there)."""
    position = [-1]

    def read(view: memoryview, offset: int) -> int:
        if position[0] != offset:
            raw.seek(offset)
        got = _readinto(raw, view)
        position[0] = offset + got
        return got

    return read


class FrameReader:
    """Read one file as blocks of verified records, through the core's record reader.

    Parameters
    ----------
    raw : binary file object
        The file as stored (seekable): a local file of :mod:`tfsql.file_guard` is read
        with ``pread``, any other through ``seek`` and ``readinto``.
    path : str
        The file's name for messages.
    compression : {None, "gzip", "zlib", "infer"}
        The file's compression (canonical, :func:`tfsql.options.read_compression`).
    size : int, optional
        The file's size (default: asked of the open file).
    verify : bool
        Check each record's data CRC (the length CRC is always checked).
    on_corrupt : {"raise", "skip"} or callable
        ``"skip"`` drops a record whose data CRC fails and, where framing is lost (a bad
        length CRC, a length over ``max_record_bytes`` or past the end of the file), the
        bytes up to the next offset where a record's both CRCs check and the records
        after it stay well framed (the rule a byte range's reader starts by, see
        :mod:`tfsql.splits`), or the rest of the file when there is none, with a warning
        naming the skipped bytes. A callable skips the same way but is called with the
        :class:`~tfsql.errors.CorruptRecordError` instead of warning (its
        ``rest_of_file`` and ``skipped_to`` attributes say what was skipped);
        ``tfsql verify`` uses this to list every corrupt record.
    max_record_bytes : int
        A record whose header claims more is corrupt: it is reported (as a bad length
        is) before any memory is allocated for it.
    buffers : BufferPool, optional
        Where windows come from: a scan's pool reuses the buffers of blocks it has
        finished with (:mod:`tfsql.buffers`); None allocates each one.
    base_offset, stop : int
        An uncompressed file is read from this offset, a record boundary; with ``stop``,
        only the records whose header starts before it are read (a byte range, see
        :mod:`tfsql.splits`).
    first_index : int
        The file-wide index of the first record read (blocks and errors count from it).
    """

    def __init__(
        self,
        raw: BinaryIO,
        *,
        path: str,
        compression: str | None = None,
        size: int | None = None,
        verify: bool = True,
        on_corrupt: str | Callable[[CorruptRecordError], object] = "raise",
        chunk_bytes: int = DEFAULT_CHUNK_BYTES,
        max_record_bytes: int = DEFAULT_MAX_RECORD_BYTES,
        base_offset: int = 0,
        stop: int | None = None,
        buffers: BufferPool | None = None,
        first_index: int = 0,
    ) -> None:
        self._on_corrupt = READ_OPTIONS["on_corrupt"].validate(on_corrupt)
        self._raw = raw
        self.path = path
        self._compression = compression
        self._size = size
        self._verify = verify
        self._chunk_bytes = chunk_bytes
        self._max_record_bytes = max_record_bytes
        self._base_offset = base_offset
        self._stop = stop
        self._first_index = first_index
        self.skipped_records = 0
        self.records_read = 0
        # Where the next range's first record starts, once the stream or the byte range
        # ended cleanly (None when a corrupt region ended it).
        self.chain_end: int | None = None
        self.buffers = buffers  # settable until reading starts
        # Settable until reading starts: frame on the headers alone and leave the data
        # CRCs to whoever decodes the blocks (RecordBlock.crc_pending), so that the
        # check runs on the decode threads instead of the one reading thread.
        self.defer_data_crc = False
        self._reference_reader = False  # _open fell back to the reference's reader

    def _open(self) -> tuple[Any, Any]:
        """The core's reader over the file, and the guarded file to check after each
        chunk of a local file (None: another file object)."""
        raw = self._raw
        if self._base_offset == 0:
            self._compression = resolve_compression(raw, self._compression)
        size = _size_of(raw) if self._size is None else self._size
        local = _local_file(raw)
        # Reads start small and double up to chunk_bytes, so that sampling or a LIMIT
        # touches only the start of a file; a byte range is read whole (no LIMIT to serve).
        first = self._chunk_bytes if self._stop is not None else min(self._chunk_bytes, _FIRST_READ_BYTES)
        kwargs: dict[str, Any] = {"read": _python_read(raw)}
        if local is not None:
            check = local[1]
            kwargs = {"fd": local[0].fileno(), "check": None if check is None else check.raise_if_interrupted}
        kwargs.update(
            window=None if self.buffers is None else self.buffers.take,
            start=self._base_offset,
            first_index=self._first_index,
            stop=-1 if self._stop is None else self._stop,
            read_size=first,
            read_max=self._chunk_bytes,
        )
        code = getattr(codec, _COMPRESSION_CODES[self._compression])
        try:
            reader = codec.RecordReader(size, code, self.path, **kwargs)
        except OSError:
            if self._compression is None:
                raise
            # no zlib library to load (Windows): the reference reader inflates with Python's zlib
            from tfsql._reference.reader import RecordReader

            reader = RecordReader(size, code, self.path, **kwargs)
            self._reference_reader = True
        return reader, None if local is None else local[0]

    def blocks(
        self, max_records: int = DEFAULT_BATCH_SIZE, max_bytes: int = DEFAULT_BATCH_BYTES, *, limit: int | None = None
    ) -> Iterator[RecordBlock]:
        """Yield blocks of at most ``max_records`` records and ``max_bytes`` payload
        (a single larger record still makes a block of one); with ``limit``, stop after
        that many records in all (the last block is cut to fit, nothing more is read).

        A block ends early where a window ends, so every byte is framed (and its CRC
        checked) exactly once and only the start of a record that straddles two
        windows is copied.
        """
        if limit is not None and limit <= 0:
            return
        reader, guarded = self._open()
        deferred = self._verify and self.defer_data_crc
        yielded = 0
        while True:
            cap = max_records
            if limit is not None:
                if yielded >= limit:
                    return
                cap = limit - yielded if max_records < 0 else min(max_records, limit - yielded)
            try:
                got = reader.next(cap, max_bytes, self._max_record_bytes, self._verify and not deferred)
            except OSError:
                if guarded is not None:
                    guarded.check()  # a short read: the file changed (FileChangedError)
                raise
            if guarded is not None:
                guarded.check()  # the bytes just read are those of the file listed
            if got is None:
                self.chain_end = reader.chain_end
                return
            if isinstance(got, int):
                self._damaged(reader)
                continue
            window, offsets, lengths, first, base = got
            offsets = np.frombuffer(offsets, dtype=np.uint64)
            lengths = np.frombuffer(lengths, dtype=np.uint64)
            yielded += len(offsets)
            self.records_read += len(offsets)
            buf = window if isinstance(window, memoryview) else memoryview(window)
            yield RecordBlock(buf, offsets, lengths, first, base, self.path, deferred)

    def sample(self, inference: Any, record_type: int, *, tolerant: bool) -> tuple[bool, bool, Any]:
        """Fold this file's inference sample into ``inference`` (after its
        ``begin_file``) through the core's sample loop (``Inference.sample_file``,
        ``tfsql/core/infer_sample.c``: which records, which damage it goes past, ends at
        or raises now, as the scan raises it). Returns (the file gave a record, its first
        record looks like a SequenceExample read as an Example, the sample's refusal or
        None)."""
        reader, guarded = self._open()
        skip = self._on_corrupt != "raise"
        if not self._reference_reader:
            got = inference.sample_file(reader, self._max_record_bytes, self._verify, skip, tolerant)
        else:  # the reference reader (no zlib library to load): the reference's loop
            from tfsql._reference.sample import sample_file

            got = sample_file(
                inference, reader, record_type, self.path, self._max_record_bytes, self._verify, skip, tolerant
            )
        if guarded is not None:
            guarded.check()  # the bytes sampled are those of the file listed
        status, sampled, hint, error = got
        if status == codec.SAMPLE_DAMAGE:
            self._damaged(reader)  # raises, as the scan would
        return sampled, hint, error

    def _damaged(self, reader: Any) -> None:
        """Act on the reader's damage as ``on_corrupt`` says: raise it, or report it and
        go past it (the report then says where reading resumed)."""
        status, index, offset, length, limit, _, _, detail = reader.damage
        reason = self._reason(status)
        if reason.startswith("stream_"):
            raise CorruptRecordError(
                reason,
                path=self.path,
                compression=self._compression,
                detail=detail if reason == "stream_corrupt" else None,
            )
        lengths = {"too_long": (length, limit), "past_end": (length, limit), "truncated": (None, limit)}
        length_field, limit_field = lengths.get(reason, (None, None))
        if self._on_corrupt == "raise":
            self._corrupt(
                reason, index, offset, rest_of_file=reason != "data_crc", length=length_field, limit=limit_field
            )
        if reader.skip(self._max_record_bytes):
            self._damaged(reader)  # the compressed stream itself: raises
        rest_of_file, skipped_to = reader.damage[5], reader.damage[6]
        self._corrupt(
            reason,
            index,
            offset,
            rest_of_file=bool(rest_of_file),
            length=length_field,
            limit=limit_field,
            skipped_to=None if rest_of_file or reason == "data_crc" else skipped_to,
        )

    @staticmethod
    def _reason(status: int) -> str:
        for name, reason in _REASONS.items():
            if getattr(codec, name) == status:
                return reason
        raise AssertionError(f"unknown reader status {status}")

    def close(self) -> None:
        """Close the underlying file."""
        self._raw.close()

    def _corrupt(
        self,
        reason: str,
        index: int,
        offset: int,
        *,
        rest_of_file: bool,
        length: int | None = None,
        limit: int | None = None,
        skipped_to: int | None = None,
    ) -> None:
        """Report a corruption as ``on_corrupt`` says: raise it, call the function, or warn."""
        error = CorruptRecordError(
            reason,
            path=self.path,
            record_index=index,
            offset=offset,
            rest_of_file=rest_of_file,
            length=length,
            limit=limit,
            skipped_to=skipped_to,
            suggest_skip=self._on_corrupt == "raise",
        )
        report_corrupt(error, self._on_corrupt, stacklevel=5)
        self.skipped_records += 1


def report_corrupt(
    error: CorruptRecordError, on_corrupt: str | Callable[[CorruptRecordError], object], *, stacklevel: int = 2
) -> None:
    """Act on a corruption as ``on_corrupt`` says: ``"raise"`` raises ``error``, a
    function is called with it, ``"skip"`` warns with what was skipped.

    Examples
    --------
    >>> seen = []
    >>> report_corrupt(CorruptRecordError("data_crc", path="f", record_index=3, offset=9), seen.append)
    >>> seen[0].record_index
    3
    """
    if on_corrupt == "raise":
        raise error
    if callable(on_corrupt):
        on_corrupt(error)
        return
    warnings.warn(error.skipped_message(), stacklevel=stacklevel)
