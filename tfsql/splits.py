"""Splittable reads: one uncompressed TFRecord file cut into byte ranges, no index.

A range ``[start, stop)`` owns exactly the records whose 12-byte header starts inside
it; a record that starts in the range is read whole even when it ends past ``stop``.
The ranges of a file therefore partition its records, and reading them one after the
other gives the file's records in order.

A reader starting at ``start > 0`` does not know where a record begins. It looks for
the first position whose header's length CRC matches, whose whole record matches its
data CRC, and after which the records stay well framed for
:data:`RESYNC_LOOKAHEAD` bytes (or up to the end of the file) — see
``find_boundary`` in ``tfsql/_native.pyi``. The data CRC is checked at that point even
with ``verify_checksums=False``: a random position passes both CRCs with probability
about 2^-64, and the framing check rejects whole frames stored inside a payload.

Within one scan (:class:`tfsql.Scanner`), the ranges of a file are also checked
against each other: a range must start exactly where the previous range's last record
ended, otherwise that range is read again from there (so a corrupt region or a
misleading payload can never duplicate or drop records). A range read on its own
(a Spark task) relies on the CRCs alone.

Compressed files are never split: their bytes cannot be entered in the middle.

Examples
--------
>>> plan_ranges(100, 40)
[(0, 40), (40, 80), (80, 100)]
>>> import io, numpy as np
>>> framed, _ = codec.encode_frames(b"aaaabbbbcccc", np.array([0, 4, 8, 12], dtype=np.int64))
>>> data = bytes(framed)  # three 20-byte frames
>>> [find_range_start(io.BytesIO(data), s, s + 20, len(data)) for s in (0, 1, 20, 21, 41)]
[0, 20, 20, 40, None]
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, BinaryIO

from tfsql._codec import codec
from tfsql.errors import FileChangedError
from tfsql.buffers import BufferPool
from tfsql.framing import DEFAULT_CHUNK_BYTES, FrameReader, RecordBlock
from tfsql.options import DEFAULT_BATCH_BYTES, DEFAULT_BATCH_SIZE, DEFAULT_MAX_RECORD_BYTES

__all__ = [
    "RESYNC_LOOKAHEAD",
    "RangeReader",
    "find_range_start",
    "piece_bytes",
    "plan_pieces",
    "plan_ranges",
    "range_label",
]

#: Bytes of well-framed records that must follow a resynchronisation point (the
#: core's READER_RESYNC_LOOKAHEAD, also where a scan resumes after lost framing).
RESYNC_LOOKAHEAD = codec.RESYNC_LOOKAHEAD
_FIRST_WINDOW = 64 << 10  # read with the lookahead: one read usually decides


def plan_ranges(size: int, split_bytes: int) -> list[tuple[int, int]]:
    """Cut ``size`` bytes into ranges of ``split_bytes`` (the last one shorter).

    Examples
    --------
    >>> plan_ranges(10, 4), plan_ranges(0, 4)
    ([(0, 4), (4, 8), (8, 10)], [])
    """
    if split_bytes < 1:
        raise ValueError(f"split size must be a positive number of bytes, not {split_bytes!r}")
    return codec.plan_pieces(0, size, split_bytes)  # the core's cut, as the extension's


def piece_bytes(batch_bytes: int) -> int:
    """Size of the pieces a scan cuts a byte range into (see :func:`plan_pieces`): 15/16
    of the batch byte budget, at least 4 MiB so that the resynchronisation lookahead
    stays a small part of each piece's reading.

    A piece holds the records whose header starts in it, so its payload is its size
    minus 16 bytes a record plus the part of its last record that runs past its end.
    Pieces of the whole budget held more payload than a batch takes about every third
    time on records of tens of KB (images), and their last record made a batch of its
    own; a sixteenth to spare keeps a piece to one batch unless its last record is
    larger than that.

    Examples
    --------
    >>> piece_bytes(16 << 20) == 15 << 20, piece_bytes(1000) == 4 << 20
    (True, True)
    """
    return max(batch_bytes - batch_bytes // 16, 4 << 20)


def plan_pieces(start: int, stop: int, piece: int) -> list[tuple[int, int]]:
    """Cut the byte range ``[start, stop)`` into pieces of ``piece`` bytes (the last one
    shorter). A scan decodes one piece per unit of work and yields it before holding more,
    so the memory a range costs is bounded by the piece, not the range.

    Examples
    --------
    >>> plan_pieces(100, 350, 100)
    [(100, 200), (200, 300), (300, 350)]
    >>> plan_pieces(0, 0, 10)
    [(0, 0)]
    """
    return codec.plan_pieces(start, stop, piece) or [(start, stop)]


def find_range_start(
    raw: BinaryIO,
    start: int,
    stop: int,
    size: int,
    *,
    path: str = "<stream>",
    max_record_bytes: int = DEFAULT_MAX_RECORD_BYTES,
) -> int | None:
    """The file offset of the first record whose header starts in ``[start, stop)``
    of the uncompressed file ``raw`` (``size`` bytes, seekable), or None when no record
    starts there (a header claiming more than ``max_record_bytes`` is none, as when a
    whole file is read). Offset 0 is always a boundary. A file that ends before ``size``
    (it shrank while it was read) raises :class:`~tfsql.errors.FileChangedError`."""
    if start == 0:
        return 0 if size > 0 else None
    pos = start
    window = RESYNC_LOOKAHEAD + _FIRST_WINDOW
    while True:
        raw.seek(pos)
        want = min(window, size - pos)
        buf = raw.read(want)
        if len(buf) < want:
            raise FileChangedError("size", path=path, before=size, after=pos + len(buf))
        at_eof = pos + len(buf) >= size
        status, found = codec.find_boundary(buf, 0, max(0, stop - pos), at_eof, RESYNC_LOOKAHEAD, max_record_bytes)
        if status == codec.BOUNDARY_FOUND:
            return pos + found
        if status == codec.BOUNDARY_NONE:
            return None
        if found == 0:
            window *= 2  # the candidate at pos needs more bytes
        pos += found


def range_label(path: str, start: int, stop: int) -> str:
    """How messages name a byte range of a file (record numbers count from its start).

    Examples
    --------
    >>> range_label("a.tfrecord", 0, 10), range_label("a.tfrecord", 10, 20)
    ('a.tfrecord', 'a.tfrecord [bytes 10-20]')
    """
    return path if start == 0 else f"{path} [bytes {start}-{stop}]"


class RangeReader:
    """Blocks of the records whose header starts in ``[start, stop)`` of the
    uncompressed file ``raw`` (``size`` bytes, seekable), starting at the record
    boundary ``boundary`` (None: found with :func:`find_range_start`).

    Past ``stop`` it reads on until a header that :func:`find_range_start` accepts, so
    that a record the next range's search rejects (one cut short by the end of the
    file, or followed by corrupt framing) is read or reported here. ``first`` is the
    first record's offset (None: none starts in the range) and, after reading,
    ``chain_end`` is where the next range's first record starts (None: unknown after
    a corrupt region).

    Examples
    --------
    >>> import io, numpy as np
    >>> framed, _ = codec.encode_frames(b"aaaabbbbcccc", np.array([0, 4, 8, 12], dtype=np.int64))
    >>> reader = RangeReader(io.BytesIO(bytes(framed)), 10, 30, 60, path="mem")
    >>> [bytes(b.buf[int(o) : int(o) + 4]) for b in reader.blocks() for o in b.offsets]
    [b'bbbb']
    >>> reader.first, reader.chain_end
    (20, 40)
    """

    def __init__(
        self,
        raw: BinaryIO,
        start: int,
        stop: int,
        size: int,
        *,
        path: str,
        verify: bool = True,
        on_corrupt: Any = "raise",
        boundary: int | None = None,
        max_record_bytes: int = DEFAULT_MAX_RECORD_BYTES,
        buffers: BufferPool | None = None,
        chunk_bytes: int = DEFAULT_CHUNK_BYTES,
        label: str | None = None,
        defer_data_crc: bool = False,
    ) -> None:
        self._raw = raw
        self._defer_data_crc = defer_data_crc
        self._buffers = buffers
        self._chunk_bytes = chunk_bytes
        self._max_record_bytes = max_record_bytes
        self._stop = stop
        self._size = size
        self._path = range_label(path, start, stop) if label is None else label
        self._verify = verify
        self._on_corrupt = on_corrupt
        self._file = path
        self.first = (
            find_range_start(raw, start, stop, size, path=path, max_record_bytes=max_record_bytes)
            if boundary is None
            else boundary
        )
        if self.first is not None and self.first >= stop:
            self.first = None
        self.chain_end: int | None = None if self.first is None else self.first

    def blocks(
        self,
        max_records: int = DEFAULT_BATCH_SIZE,
        max_bytes: int = DEFAULT_BATCH_BYTES,
        *,
        check_end_from: int | None = -1,
    ) -> Iterator[RecordBlock]:
        """The range's records in blocks. Once they end at or past ``check_end_from``
        (-1: this range's ``stop``; None: never), the header that follows is checked to be
        one the next range's search accepts (else its record is read here too). A scan
        cuts a range into pieces and checks each piece against the end of the one before:
        only the piece that reaches the end of the whole range does that check."""
        check_from = self._stop if check_end_from == -1 else check_end_from
        if self.first is None:
            return
        pos: int | None = self.first
        stop, index = self._stop, 0
        while pos is not None:
            reader = FrameReader(
                self._raw,
                path=self._path,
                size=self._size,
                verify=self._verify,
                on_corrupt=self._on_corrupt,
                base_offset=pos,
                stop=stop,
                max_record_bytes=self._max_record_bytes,
                buffers=self._buffers,
                chunk_bytes=self._chunk_bytes,
            )
            reader.defer_data_crc = self._defer_data_crc
            for block in reader.blocks(max_records, max_bytes):
                block.first_index += index
                yield block
            index += reader.records_read + reader.skipped_records
            self.chain_end = pos = reader.chain_end
            if pos is None or pos >= self._size or check_from is None or pos < check_from:
                return
            if (
                find_range_start(
                    self._raw, pos, pos + 1, self._size, path=self._file, max_record_bytes=self._max_record_bytes
                )
                == pos
            ):
                return
            stop = pos + 1  # the next range will not start here: read this record too
