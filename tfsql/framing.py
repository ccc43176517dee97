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

import struct
import warnings
import zlib
from dataclasses import dataclass
from typing import BinaryIO, Callable, Iterator

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
    "open_decompressed",
]

DEFAULT_CHUNK_BYTES = 16 << 20
_FIRST_READ_BYTES = 256 << 10
_MIN_READ = 64 << 10  # the smallest read once a read budget is spent
_HEADER = 12
_FOOTER = 4


def detect_compression(head: bytes) -> str | None:
    """Guess a file's compression from its first bytes (at least 12 when available).

    Examples
    --------
    >>> import gzip
    >>> detect_compression(gzip.compress(b"x")), detect_compression(b"")
    ('gzip', None)
    """
    return codec.detect_compression(head)


class _InflateReader:
    """A read-only stream that inflates a gzip (members concatenated) or zlib stream
    from ``raw`` chunk by chunk; ``read(n)`` returns at most ``n`` bytes."""

    def __init__(self, raw: BinaryIO, compression: str, *, path: str, chunk: int = 1 << 20):
        self._raw = raw
        self._compression = compression
        self._wbits = 31 if compression == "gzip" else 15
        self._path = path
        self._chunk = chunk
        self._inflater = zlib.decompressobj(self._wbits)
        self._fed = False  # the current member has been given input
        self._pending = b""
        self._raw_eof = False

    def read(self, n: int) -> bytes:
        out = []
        have = 0
        while have < n:
            if not self._pending:
                if self._raw_eof:
                    break
                self._pending = self._raw.read(self._chunk)
                if not self._pending:
                    self._raw_eof = True
                    if self._fed and not self._inflater.eof:
                        raise CorruptRecordError("stream_truncated", path=self._path, compression=self._compression)
                    break
            if self._inflater.eof:
                if self._compression == "zlib" or not self._pending.strip(b"\x00"):
                    # zlib holds one stream; gzip may end with zero padding. Ignore the rest.
                    self._pending = b""
                    self._raw_eof = True
                    break
                self._inflater = zlib.decompressobj(self._wbits)  # the next gzip member
                self._fed = False
            try:
                piece = self._inflater.decompress(self._pending, n - have)
            except zlib.error as exc:
                raise CorruptRecordError(
                    "stream_corrupt", path=self._path, compression=self._compression, detail=str(exc)
                ) from None
            self._fed = True
            self._pending = self._inflater.unused_data if self._inflater.eof else self._inflater.unconsumed_tail
            if piece:
                out.append(piece)
                have += len(piece)
        return b"".join(out)

    def close(self) -> None:
        self._raw.close()


def open_decompressed(raw: BinaryIO, compression: str | None, *, path: str) -> BinaryIO:
    """Wrap ``raw`` so that ``read(n)`` returns decompressed bytes.

    ``compression`` is a canonical value (:func:`tfsql.options.read_compression`); ``"infer"`` peeks at the first bytes
    (``raw`` must support ``seek(0)``, or be re-opened by the caller).
    """
    if compression == "infer":
        head = raw.read(_HEADER)
        raw.seek(0)
        compression = detect_compression(head)
    if compression is None:
        return raw
    return _InflateReader(raw, compression, path=path)  # type: ignore[return-value]


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


def _header_length(buf: memoryview, pos: int) -> int | None:
    """The payload length in the header at ``buf[pos:]`` when its 12 bytes are there and
    their length CRC is valid, else None."""
    if len(buf) - pos < _HEADER:
        return None
    head = bytes(buf[pos : pos + _HEADER])
    if codec.masked_crc32c(head[:8]) != struct.unpack_from("<I", head, 8)[0]:
        return None
    return int(struct.unpack_from("<Q", head)[0])


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


@dataclass
class _LostFraming:
    """A record header that cannot be trusted (bad length CRC, a length over the limit
    or past the end): the records after it are found by a search for the next boundary."""

    reason: str
    length: int | None = None
    limit: int | None = None


class FrameReader:
    """Read one (decompressed) stream as blocks of verified records.

    Parameters
    ----------
    stream : binary file object
        Already decompressed (see :func:`open_decompressed`).
    path : str
        The file's name for messages.
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
    stream_size : int, optional
        The stream's size when known (uncompressed files): a record running past it is
        reported as truncated at once, without reading or buffering it. Otherwise a
        large record is buffered as its bytes arrive, never more than its length.
    buffers : BufferPool, optional
        Where read buffers come from: a scan's pool reuses the buffers of blocks it has
        finished with (:mod:`tfsql.buffers`); None allocates each one.
    base_offset, stop : int
        The stream starts at this offset of the file, at a record boundary; with
        ``stop``, only the records whose header starts before it are read (a byte range,
        see :mod:`tfsql.splits`).
    first_index : int
        The file-wide index of the stream's first record (blocks and errors count from it).
    """

    def __init__(
        self,
        stream: BinaryIO,
        *,
        path: str,
        verify: bool = True,
        on_corrupt: str | Callable[[CorruptRecordError], object] = "raise",
        chunk_bytes: int = DEFAULT_CHUNK_BYTES,
        max_record_bytes: int = DEFAULT_MAX_RECORD_BYTES,
        stream_size: int | None = None,
        base_offset: int = 0,
        stop: int | None = None,
        buffers: BufferPool | None = None,
        first_index: int = 0,
    ) -> None:
        on_corrupt = READ_OPTIONS["on_corrupt"].validate(on_corrupt)
        self._first_index = first_index
        self._stream = stream
        self.path = path
        self._verify = verify
        self._on_corrupt = on_corrupt
        self._chunk_bytes = chunk_bytes
        self._max_record_bytes = max_record_bytes
        self._stream_size = stream_size
        # Reads start small and double up to chunk_bytes, so that sampling or a LIMIT
        # touches only the start of a file.
        self._next_read = min(chunk_bytes, _FIRST_READ_BYTES)
        if stop is not None:
            self._next_read = chunk_bytes  # a byte range is read whole: no LIMIT to serve
        self.skipped_records = 0
        self.records_read = 0
        # A byte range of a file (see tfsql.splits): the stream starts at a record
        # boundary `base_offset` and the reader keeps the records whose header starts
        # before `stop`; `chain_end` is then where the next range's first record starts
        # (None when a corrupt region ended the range).
        self._base_offset = base_offset
        self._stop = stop
        self.chain_end: int | None = None
        self._consumed = 0  # bytes read from the stream
        self.buffers = buffers  # settable until reading starts
        # Settable until reading starts: frame on the headers alone and leave the data
        # CRCs to whoever decodes the blocks (RecordBlock.crc_pending), so that the
        # check runs on the decode threads instead of the one reading thread.
        self.defer_data_crc = False
        # Settable until reading starts: the caller stops after about this many bytes
        # (a schema sample), so reads stop growing past it; a record that straddles it
        # is still read whole.
        self.read_budget: int | None = None

    def _read_more(
        self, tail: memoryview, need: int | None = None, *, searching: bool = False
    ) -> tuple[memoryview, bool]:
        """A fresh buffer holding ``tail`` (the start of an incomplete record of ``need``
        framed bytes; None when its header is incomplete) then new bytes: at least a
        chunk and, for a record larger than a chunk, what it still lacks when the
        stream's size vouches for it, else at most ``len(tail)`` more — the buffer doubles
        as bytes arrive, so a record is assembled in linear time and a header that lies
        about its length costs no more memory than the bytes really there.
        Returns the buffer and an eof flag."""
        want = self._next_read
        self._next_read = min(self._chunk_bytes, 2 * self._next_read)
        if self.read_budget is not None:
            want = max(min(want, self.read_budget - self._consumed), _MIN_READ)
        if need is not None:
            missing = need - len(tail)
            want = max(want, missing if self._stream_size is not None else min(missing, len(tail)))
        if self._stop is not None and not searching:
            want = self._want_in_range(want, tail)
        # numpy allocates without zeroing (and asks for huge pages on large buffers),
        # so the read is the first and only pass over the new memory. `tail` keeps its
        # own buffer referenced, so a pool never hands that one out here.
        if self.buffers is not None:
            buf = self.buffers.take(len(tail) + want)
        else:
            buf = memoryview(np.empty(len(tail) + want, dtype=np.uint8))  # type: ignore[arg-type, unused-ignore]  # numpy arrays are buffers
        buf[: len(tail)] = tail
        got = _readinto(self._stream, buf[len(tail) :])
        self._consumed += got
        if not got:
            return tail, True
        return buf[: len(tail) + got], False

    def blocks(
        self, max_records: int = DEFAULT_BATCH_SIZE, max_bytes: int = DEFAULT_BATCH_BYTES, *, limit: int | None = None
    ) -> Iterator[RecordBlock]:
        """Yield blocks of at most ``max_records`` records and ``max_bytes`` payload
        (a single larger record still makes a block of one); with ``limit``, stop after
        that many records in all (the last block is cut to fit, nothing more is read).

        A block ends early where a read chunk ends, so every byte is framed (and its
        CRC checked) exactly once and only the start of a record that straddles two
        chunks is copied.
        """
        buf = memoryview(b"")
        base = self._base_offset  # file offset of buf[0]
        pos = 0  # scan position in buf
        index = self._first_index  # file-wide index of the record at pos
        yielded = 0
        eof = False
        while True:
            cap = max_records
            if limit is not None:
                if yielded >= limit:
                    return
                cap = limit - yielded if max_records < 0 else min(max_records, limit - yielded)
            deferred = self._verify and self.defer_data_crc
            offsets, lengths, end, status = codec.scan_frames(buf, pos, cap, max_bytes, self._verify and not deferred)
            offsets = np.frombuffer(offsets, dtype=np.uint64)
            lengths = np.frombuffer(lengths, dtype=np.uint64)
            too_long = self._first_too_long(lengths) if len(buf) - pos > self._max_record_bytes else None
            if too_long is not None:
                end = int(offsets[too_long]) - _HEADER
                offsets, lengths = offsets[:too_long], lengths[:too_long]
            if self._stop is not None:
                keep, end, status = self._cut_at_stop(offsets, end, status, base)
                offsets, lengths = offsets[:keep], lengths[:keep]
                if too_long is not None and base + end >= self._stop:
                    too_long = None  # the long record belongs to the next range
            n = len(offsets)
            if n:
                yielded += n
                self.records_read += n
                yield RecordBlock(buf, offsets, lengths, index, base, self.path, deferred)
                index += n
            pos = end
            if self._stop is not None and base + end >= self._stop and status == codec.FRAME_OK:
                self.chain_end = base + end  # the next record belongs to the next range
                return
            lost: _LostFraming | None = None
            if too_long is not None:
                lost = self._pending_record_size(buf, pos, base)  # type: ignore[assignment]  # too long: lost
            elif status == codec.FRAME_OK and end < len(buf):
                continue  # a block limit was reached; more records are buffered
            elif status in (codec.FRAME_OK, codec.FRAME_TRUNCATED) and not eof:
                truncated = status == codec.FRAME_TRUNCATED
                need = self._pending_record_size(buf, pos, base) if truncated else None
                if not isinstance(need, _LostFraming):
                    buf, eof = self._read_more(buf[pos:], need)
                    base += pos
                    pos = 0
                    continue
                lost = need
            elif status == codec.FRAME_OK:
                self.chain_end = base + end
                return
            elif status == codec.FRAME_TRUNCATED:
                lost = _LostFraming("truncated", limit=len(buf) - end)
            elif status == codec.FRAME_BAD_LENGTH_CRC:
                lost = _LostFraming("length_crc")
            if lost is not None:
                resumed = self._resume_after(lost, index, buf, pos, base, eof)
                if resumed is None:
                    return
                buf, pos, base, eof = resumed
                index += 1
                continue
            # FRAME_BAD_DATA_CRC: the length is valid, so the record can be stepped over.
            (length,) = struct.unpack_from("<Q", buf, end)
            self._corrupt("data_crc", index, base + end, rest_of_file=False)
            pos = end + _HEADER + length + _FOOTER
            index += 1

    def _resume_after(
        self, lost: _LostFraming, index: int, buf: memoryview, pos: int, base: int, eof: bool
    ) -> tuple[memoryview, int, int, bool] | None:
        """Report the untrustworthy header at ``buf[pos:]`` (file offset ``base + pos``)
        and, unless that raises, find where reading resumes: the next boundary
        (``codec.find_boundary``: both CRCs and the framing after it checked), reading
        the stream as far as needed. Returns the new ``(buf, pos, base, eof)``, or None
        when no record follows (in a byte range: none before its ``stop``; a boundary
        found past it is then ``chain_end``)."""
        offset = base + pos
        if self._on_corrupt == "raise":
            self._corrupt(lost.reason, index, offset, rest_of_file=True, length=lost.length, limit=lost.limit)
        at = pos + 1
        while True:
            stop = -1 if self._stop is None else max(at, self._stop - base)
            status, found = codec.find_boundary(buf, at, stop, eof, codec.RESYNC_LOOKAHEAD, self._max_record_bytes)
            if status == codec.BOUNDARY_FOUND:
                break
            if status == codec.BOUNDARY_NONE and (eof or (self._stop is not None and base + found >= self._stop)):
                self._corrupt(lost.reason, index, offset, rest_of_file=True, length=lost.length, limit=lost.limit)
                return None
            if status == codec.BOUNDARY_NONE:
                found = len(buf)
            buf, eof = self._read_more(buf[found:], searching=True)  # no boundary before `found`
            base += found
            at = 0
        self._corrupt(
            lost.reason,
            index,
            offset,
            rest_of_file=False,
            length=lost.length,
            limit=lost.limit,
            skipped_to=base + found,
        )
        if self._stop is not None and base + found >= self._stop:
            self.chain_end = base + found
            return None
        return buf, found, base, eof

    def _first_too_long(self, lengths: np.ndarray) -> int | None:
        """Index of the first length above ``max_record_bytes`` (only possible when a
        buffer is larger than the limit), or None."""
        over = np.flatnonzero(lengths > self._max_record_bytes)
        return int(over[0]) if len(over) else None

    def _pending_record_size(self, buf: memoryview, pos: int, base: int) -> int | _LostFraming | None:
        """Framed size of the record at ``buf[pos:]`` after checking its length against
        ``max_record_bytes`` and the stream's size (None when its header is incomplete or
        its length CRC bad: the scan reports those); a failed check is returned as a
        :class:`_LostFraming`."""
        length = _header_length(buf, pos)
        if length is None:
            return None
        offset = base + pos
        if length > self._max_record_bytes:
            return _LostFraming("too_long", length, self._max_record_bytes)
        if self._stream_size is not None and length + _HEADER + _FOOTER > self._stream_size - offset:
            return _LostFraming("past_end", length, self._stream_size - offset)
        return length + _HEADER + _FOOTER

    def close(self) -> None:
        """Close the underlying stream."""
        self._stream.close()

    def _cut_at_stop(self, offsets: np.ndarray, end: int, status: int, base: int) -> tuple[int, int, int]:
        """Keep the records whose header starts before ``stop``; the first one that does
        not is where scanning ended (status OK). Returns (records kept, end, status)."""
        assert self._stop is not None
        n = len(offsets)
        if n == 0 or base + end <= self._stop:
            return n, end, status
        heads = offsets.astype(np.int64) + (base - _HEADER)
        keep = int(np.searchsorted(heads, self._stop))
        if keep == n:
            return n, end, status
        return keep, int(heads[keep]) - base, codec.FRAME_OK

    def _want_in_range(self, want: int, tail: memoryview) -> int:
        """Bytes to read next when the reader stops at ``stop``: no more than the range
        needs, except the rest of a record that starts inside it."""
        assert self._stop is not None
        read_pos = self._base_offset + self._consumed
        left = self._stop - read_pos
        need = _HEADER - len(tail)
        if len(tail) >= _HEADER:
            (length,) = struct.unpack_from("<Q", tail, 0)
            need = _HEADER + length + _FOOTER - len(tail)
        return max(min(want, left), need, 1)

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
