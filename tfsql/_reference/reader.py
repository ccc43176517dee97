"""The reference record reader: ``RecordReader`` of ``tfsql/_native.pyi`` in Python, the
twin of the core's ``tfsql/core/reader.c`` (same windows, limits, damage and resync).

A file's (decompressed) bytes are read through fresh windows: each refill asks
``window(n)`` (or numpy) for a new buffer, copies the unread bytes there and reads on, so
the records handed out stay where they are. ``next`` frames a chunk (``scan_frames``),
``skip`` steps over damage (``find_boundary`` where framing is lost).

Examples
--------
>>> import numpy as np
>>> from tfsql._reference.framing import encode_frames
>>> framed, _ = encode_frames(b"abc", np.array([0, 1, 3], dtype=np.int64))
>>> data = bytes(framed)
>>> def read(view, offset):
...     view[:] = data[offset : offset + len(view)]
...     return len(view)
>>> reader = RecordReader(len(data), READER_PLAIN, "mem", read=read)
>>> window, offsets, lengths, first, base = reader.next()
>>> np.frombuffer(lengths, np.uint64).tolist(), first, base, reader.next(), reader.chain_end
([1, 2], 0, 0, None, 35)
"""

from __future__ import annotations

import os
import struct
import zlib
from typing import Any, Callable, Optional, Tuple

import numpy as np

from tfsql._reference.common import (
    BOUNDARY_FOUND,
    BOUNDARY_MORE,
    BOUNDARY_NONE,
    FRAME_BAD_DATA_CRC,
    FRAME_BAD_LENGTH_CRC,
    FRAME_OK,
    FRAME_TOO_LONG,
    FRAME_TRUNCATED,
    RESYNC_LOOKAHEAD,
)
from tfsql._reference.framing import find_boundary, masked_crc32c, scan_frames

READER_PLAIN, READER_GZIP, READER_ZLIB = 0, 1, 2
READER_DAMAGE = 2
FRAME_PAST_END, READER_STREAM_CORRUPT, READER_STREAM_TRUNCATED = 16, 17, 18
READER_WINDOW_READ = 256 << 10
_COMPRESSED_CHUNK = 1 << 20
_MIN_READ = 64 << 10
_WINDOW_LOW = READER_WINDOW_READ // 4
_NO_LIMIT = (1 << 64) - 1


class RecordReader:
    """One file's records over a read callback (see the module docstring and
    ``tfsql/_native.pyi``)."""

    def __init__(
        self,
        size: int,
        compression: int,
        path: str,
        *,
        read: Optional[Callable[[memoryview, int], int]] = None,
        fd: int = -1,
        window: Optional[Callable[[int], Any]] = None,
        start: int = 0,
        first_index: int = 0,
        stop: int = -1,
        read_size: int = READER_WINDOW_READ,
        read_max: int = -1,
        budget: int = -1,
        check: Optional[Callable[[], object]] = None,
    ) -> None:
        if compression not in (READER_PLAIN, READER_GZIP, READER_ZLIB):
            raise ValueError(f"unknown compression {compression}")
        if (read is None) == (fd < 0):
            raise ValueError("RecordReader needs one of read= and fd=")
        if start > size or read_size <= 0 or first_index < 0 or (start and compression != READER_PLAIN):
            raise ValueError("RecordReader: start, first_index or read_size out of range (start: plain files only)")
        self._read = read
        self._check = check
        self._fd = fd
        self._window = window
        self._size = size
        self._comp = compression
        self._path = path
        self._file_pos = start
        self._eof = False
        self._in = b""  # compressed input not yet inflated
        self._z: Any = None
        self._members = 0
        self._buf: Any = memoryview(b"")  # the window: stream bytes [base, base + len)
        self._base = self._next = start
        self._index = first_index
        self._n = 0
        self._read_size = read_size
        self._read_max = max(read_max, read_size)
        self._budget = None if budget < 0 else budget
        self._stop = None if stop < 0 else stop
        self.chain_end: Optional[int] = None
        self.consumed = 0
        self._done = self._searching = False
        self.damage: Tuple[int, int, int, int, int, int, int, str] = (0, 0, 0, 0, 0, 0, 0, "")

    def limit_reads(self, budget: int) -> None:
        """Before the first read: reads stop growing past about ``budget`` bytes (a schema
        sample), unless a budget was given already."""
        if self._budget is None:
            self._budget = budget

    # -- the (decompressed) stream
    def _pread(self, offset: int, n: int) -> bytes:
        view = memoryview(bytearray(n))
        have = 0
        if self._check is not None:
            self._check()
        while have < n:
            if self._read is not None:
                got = self._read(view[have:], offset + have)
            else:
                got = os.preadv(self._fd, [view[have:]], offset + have)
            if got <= 0:
                raise OSError(f"short read: {self._path} ended at byte {offset + have}")
            have += got
        return bytes(view)

    def _plain_read(self, want: int) -> bytes:
        n = min(self._size - self._file_pos, want)
        if n == 0:
            self._eof = True
            return b""
        data = self._pread(self._file_pos, n)
        self._file_pos += n
        self._eof = self._file_pos == self._size
        return data

    def _refill_input(self) -> None:
        n = min(self._size - self._file_pos, _COMPRESSED_CHUNK)
        self._in = self._pread(self._file_pos, n) if n else b""
        self._file_pos += n

    def _only_padding_left(self) -> bool:
        while True:
            self._in = self._in.lstrip(b"\x00")
            if self._in:
                return False
            if self._file_pos == self._size:
                return True
            self._refill_input()

    def _stream_damage(self, status: int, detail: str) -> int:
        self.damage = (status, self._index, self._next, 0, 0, 0, 0, detail)
        return READER_DAMAGE

    def _inflate_read(self, want: int) -> Any:
        out = []
        have = 0
        while not self._eof and have < want:
            if not self._in:
                self._refill_input()
            if self._z is None:
                if self._members > 0 and (self._comp == READER_ZLIB or self._only_padding_left()):
                    self._eof = True
                    break
                self._z = zlib.decompressobj(31 if self._comp == READER_GZIP else 15)
            try:
                piece = self._z.decompress(self._in, want - have)
            except zlib.error as exc:
                return self._stream_damage(READER_STREAM_CORRUPT, str(exc))
            out.append(piece)
            have += len(piece)
            if self._z.eof:
                self._in = self._z.unused_data
                self._z = None
                self._members += 1
                continue
            self._in = self._z.unconsumed_tail
            if not self._in and self._file_pos == self._size and have < want:
                return self._stream_damage(READER_STREAM_TRUNCATED, "")
        return b"".join(out)

    # -- the window
    def _refill_bytes(self, have: int, need: int) -> int:
        want = self._read_size
        self._read_size = min(self._read_max, 2 * self._read_size)
        if self._budget is not None:
            want = max(min(want, max(self._budget - self.consumed, 0)), _MIN_READ)
        if self._stop is not None and not self._searching and self._comp == READER_PLAIN:
            left = max(self._stop - self._file_pos, 0)
            rest = 12 - min(have, 12)
            if have >= 12:
                at = len(self._buf) - have
                framed = struct.unpack_from("<Q", self._buf, at)[0] + 16
                rest = max(framed - have, 0)
            if need > have:
                rest = min(rest, need - have)
            want = max(min(want, left), rest, 1)
        return want

    def fill(self, start: int, need: int) -> int:
        """Stream bytes [start, start + need) in the window (fewer at the end): 0, or
        READER_DAMAGE (the compressed stream is damaged)."""
        if not self._base <= start <= self._base + len(self._buf):
            raise RuntimeError(f"internal error: window position {start} outside the window")
        at = start - self._base
        have = len(self._buf) - at
        if have >= need or self._eof:
            return 0
        want = self._refill_bytes(have, need)
        goal = have + want
        if need > goal:
            step = need - have
            if self._comp != READER_PLAIN:
                step = min(step, have)
            goal = have + max(step, want)
        fresh = memoryview(self._window(goal) if self._window is not None else bytearray(goal)).cast("B")
        fresh[:have] = self._buf[at:]
        length = have
        while length < goal and not self._eof:
            if self._comp == READER_PLAIN:
                data = self._plain_read(goal - length)
            else:
                data = self._inflate_read(goal - length)
                if isinstance(data, int):
                    return data
            fresh[length : length + len(data)] = data
            length += len(data)
            self.consumed += len(data)
        self._buf = fresh[:length]
        self._base = start
        return 0

    # -- framing
    def _frame_damage(self, status: int, length: int = 0, limit: int = 0) -> int:
        self.damage = (status, self._index, self._next, length, limit, int(status != FRAME_BAD_DATA_CRC), 0, "")
        return READER_DAMAGE

    def _pending(self, max_record_bytes: int) -> Tuple[int, int, int]:
        off = self._next - self._base
        have = len(self._buf) - off
        if have < 12:
            return (FRAME_TRUNCATED if self._eof else FRAME_OK), 0, have
        head = bytes(self._buf[off : off + 12])
        if masked_crc32c(head[:8]) != struct.unpack_from("<I", head, 8)[0]:
            return FRAME_BAD_LENGTH_CRC, 0, 0
        (length,) = struct.unpack_from("<Q", head)
        if length > max_record_bytes:
            return FRAME_TOO_LONG, length, max_record_bytes
        if self._comp == READER_PLAIN and length + 16 > self._size - self._next:
            return FRAME_PAST_END, length, self._size - self._next
        if have < length + 16 and self._eof:
            return FRAME_TRUNCATED, length, have
        return FRAME_OK, length, 0

    def _range_end(self) -> None:
        self.chain_end = self._next
        self._done = True

    def next(
        self, max_records: int = -1, max_bytes: int = -1, max_record_bytes: int = _NO_LIMIT, verify: bool = True
    ) -> Any:
        """The next chunk ``(window, offsets, lengths, first_index, base)``, None at the
        end, or READER_DAMAGE (``damage`` says what and where)."""
        while True:
            self._index += self._n
            self._n = 0
            if self._done:
                return None
            rc = self.fill(self._next, 1)  # fresh windows: refill once framing reaches the end
            if rc:
                return rc
            at = self._next - self._base
            if at == len(self._buf) and self._eof:
                self._range_end()
                return None
            offs, lens, end, status = scan_frames(self._buf, at, max_records, max_bytes, verify)
            offsets = np.frombuffer(offs, np.uint64)
            lengths = np.frombuffer(lens, np.uint64)
            n = len(offsets)
            cut = False
            over = np.flatnonzero(lengths > max_record_bytes)
            if len(over):
                n, end, cut = int(over[0]), int(offsets[over[0]]) - 12, True
            if self._stop is not None and self._base + end > self._stop:
                heads = offsets[:n].astype(np.int64) + (self._base - 12)
                keep = int(np.searchsorted(heads, self._stop))
                if keep < n:
                    n, end, cut, status = keep, int(heads[keep]) - self._base, True, FRAME_OK
            self._next = self._base + end
            if n:
                self._n = n
                first = self._index
                return self._buf, offsets[:n].tobytes(), lengths[:n].tobytes(), first, self._base
            if self._stop is not None and self._next >= self._stop and (cut or status == FRAME_OK):
                self._range_end()
                return None
            if status == FRAME_BAD_DATA_CRC:
                return self._frame_damage(FRAME_BAD_DATA_CRC, struct.unpack_from("<Q", self._buf, end)[0])
            pending, length, limit = self._pending(max_record_bytes)
            if pending != FRAME_OK:
                return self._frame_damage(pending, length, limit)
            need = 12 if len(self._buf) - end < 12 else length + 16
            rc = self.fill(self._next, need)
            if rc:
                return rc

    def _resync(self, max_record_bytes: int) -> int:
        """Move to the next boundary after the damaged header (1), or to the end (0);
        READER_DAMAGE when the compressed stream is damaged on the way (-2)."""
        start = self._next + 1
        need = RESYNC_LOOKAHEAD + _WINDOW_LOW
        max_length = -1 if max_record_bytes >= _NO_LIMIT else max_record_bytes
        while True:
            if self.fill(start, need):
                return -2
            at = start - self._base
            stop = len(self._buf)
            if self._stop is not None:
                stop = max(at, self._stop - self._base)
            status, found = find_boundary(self._buf, at, stop, self._eof, RESYNC_LOOKAHEAD, max_length)
            if status == BOUNDARY_FOUND:
                self._next = self._base + found
                return 1
            if status == BOUNDARY_NONE and (self._eof or (self._stop is not None and self._base + found >= self._stop)):
                self._next = self._base + len(self._buf)
                self._done = True
                return 0
            if status == BOUNDARY_NONE:
                found = len(self._buf)
            assert status in (BOUNDARY_MORE, BOUNDARY_NONE)
            start = self._base + found
            have = len(self._buf) - found
            length = struct.unpack_from("<Q", self._buf, found)[0] if have >= 12 else 0
            need = max(length + 16 + RESYNC_LOOKAHEAD, 2 * have)

    def skip(self, max_record_bytes: int = _NO_LIMIT) -> int:
        """Go past ``damage``: 0, or READER_DAMAGE (the compressed stream's own damage)."""
        status, index, offset, length, limit, rest, _, detail = self.damage
        if status == FRAME_BAD_DATA_CRC:
            self._next += 16 + length
            self._index += 1
            return 0
        if status == FRAME_TRUNCATED:
            self._next = self._base + len(self._buf)
            self._eof = self._done = True
            return 0
        self._searching = True
        found = self._resync(max_record_bytes)
        self._searching = False
        if found == -2:
            return READER_DAMAGE
        skipped_to = 0
        if found:
            rest, skipped_to = 0, self._next
            if self._stop is not None and self._next >= self._stop:
                self._range_end()
        self.damage = (status, index, offset, length, limit, rest, skipped_to, detail)
        self._index += 1
        return 0
