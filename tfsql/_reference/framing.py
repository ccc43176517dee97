"""The reference framing: CRC32C, scanning and counting frames, finding a record
boundary, framing payloads (``scan_frames``, ``count_headers``, ``find_boundary``,
``encode_frames`` of ``tfsql/_native.pyi``)."""

from __future__ import annotations

import os
import struct
from typing import Any, List, Sequence, Tuple

import crc32c as _crc32c
import numpy as np


from tfsql._reference.common import (
    FRAME_OK,
    FRAME_TRUNCATED,
    FRAME_BAD_LENGTH_CRC,
    FRAME_BAD_DATA_CRC,
    FRAME_TOO_LONG,
    BOUNDARY_FOUND,
    BOUNDARY_NONE,
    BOUNDARY_MORE,
    _MASK_DELTA,
    _byte_view,
    _array,
)


def crc32c(data: Any, crc: int = 0) -> int:
    """Unmasked CRC-32C of ``data``, continuing from ``crc``."""
    return _crc32c.crc32c(_byte_view(data), crc)


def masked_crc32c(data: Any) -> int:
    """TensorFlow's masked CRC-32C: ``((c >> 15 | c << 17) + 0xa282ead8) & 0xffffffff``."""
    c = crc32c(data)
    return (((c >> 15) | (c << 17)) + _MASK_DELTA) & 0xFFFFFFFF


def hardware_crc() -> bool:
    """Always False: the reference leaves the CRC to the ``crc32c`` package."""
    return False


# --------------------------------------------------------------------------- framing


def scan_frames(
    buf: Any, start: int = 0, max_records: int = -1, max_bytes: int = -1, verify: bool = True
) -> Tuple[bytes, bytes, int, int]:
    """Index the TFRecord frames in ``buf`` from byte ``start``; see ``_native.pyi``."""
    data = _byte_view(buf)
    size = len(data)
    if not 0 <= start <= size:
        raise ValueError(f"start={start} is outside the buffer of {size} bytes")
    offsets: list[int] = []
    lengths: list[int] = []
    payload_total = 0
    pos = start
    status = FRAME_OK
    while pos < size:
        if 0 <= max_records <= len(offsets):
            break
        if size - pos < 12:
            status = FRAME_TRUNCATED
            break
        length_bytes = data[pos : pos + 8]
        (stored_length_crc,) = struct.unpack_from("<I", data, pos + 8)
        if masked_crc32c(length_bytes) != stored_length_crc:
            status = FRAME_BAD_LENGTH_CRC
            break
        (length,) = struct.unpack_from("<Q", data, pos)
        if max_bytes >= 0 and offsets and payload_total + length > max_bytes:
            break
        if size - pos - 12 < length + 4:
            status = FRAME_TRUNCATED
            break
        if verify:
            (stored_data_crc,) = struct.unpack_from("<I", data, pos + 12 + length)
            if masked_crc32c(data[pos + 12 : pos + 12 + length]) != stored_data_crc:
                status = FRAME_BAD_DATA_CRC
                break
        offsets.append(pos + 12)
        lengths.append(length)
        payload_total += length
        pos += 12 + length + 4
    return (np.array(offsets, dtype=np.uint64).tobytes(), np.array(lengths, dtype=np.uint64).tobytes(), pos, status)


def count_headers(fd: int, start: int, size: int, max_length: int) -> Tuple[int, int, int, int]:
    """Count frames of a plain file reading only their headers; see ``_native.pyi``."""
    offsets, pos, status, length = _walk_headers(fd, start, size, max_length)
    return len(offsets), pos, status, length


def header_offsets(fd: int, start: int, size: int, max_length: int) -> Tuple[bytes, int, int, int]:
    """The header offsets of the frames of a plain file; see ``_native.pyi``."""
    offsets, pos, status, length = _walk_headers(fd, start, size, max_length)
    return np.array(offsets, dtype=np.uint64).tobytes(), pos, status, length


def _walk_headers(fd: int, start: int, size: int, max_length: int) -> Tuple[List[int], int, int, int]:
    offsets: List[int] = []
    pos, status, length = start, FRAME_OK, 0
    while pos < size:
        head = os.pread(fd, 12, pos) if size - pos >= 12 else b""
        if len(head) < 12:
            status = FRAME_TRUNCATED
            break
        if masked_crc32c(head[:8]) != struct.unpack_from("<I", head, 8)[0]:
            status = FRAME_BAD_LENGTH_CRC
            break
        (length,) = struct.unpack_from("<Q", head)
        if length > max_length:
            status = FRAME_TOO_LONG
            break
        if length + 16 > size - pos:
            status = FRAME_TRUNCATED
            break
        offsets.append(pos)
        pos += 16 + length
    return offsets, pos, status, length


def _whole_record_at(data: Any, p: int, size: int) -> int:
    """The end of the record whose header is at ``p`` when its length CRC matches:
    ``-1`` when it does not, ``-2`` when the record runs past ``size``."""
    if size - p < 12:
        return -2
    (stored,) = struct.unpack_from("<I", data, p + 8)
    if masked_crc32c(data[p : p + 8]) != stored:
        return -1
    (length,) = struct.unpack_from("<Q", data, p)
    if size - p - 12 < length + 4:
        return -2
    return p + 12 + length + 4


def plan_pieces(start: int, stop: int, piece: int) -> List[Tuple[int, int]]:
    """The byte ranges ``[start, stop)`` is cut into; see ``_native.pyi``."""
    if piece <= 0:
        raise ValueError("plan_pieces: the piece size must be positive")
    return [(p, min(p + piece, stop)) for p in range(start, stop, piece)]


def find_boundary(
    buf: Any,
    start: int = 0,
    stop: int = -1,
    at_eof: bool = True,
    lookahead: int = 256 << 10,
    max_length: int = -1,
) -> Tuple[int, int]:
    """The first TFRecord boundary in ``buf[start:stop]``; see ``_native.pyi``."""
    data = _byte_view(buf)
    size = len(data)
    stop = size if stop < 0 else stop
    if not 0 <= start <= size or stop < start or lookahead < 0:
        raise ValueError(
            f"find_boundary: start={start}, stop={stop}, lookahead={lookahead} do not fit a buffer of {size} bytes"
        )
    if at_eof:
        stop = min(stop, size)
    for p in range(start, stop):
        if 0 <= max_length and size - p >= 12 and struct.unpack_from("<Q", data, p)[0] > max_length:
            continue  # a length no record has
        end = _whole_record_at(data, p, size)
        if end == -1 or (end == -2 and at_eof):
            continue
        if end == -2:
            return BOUNDARY_MORE, p
        (stored,) = struct.unpack_from("<I", data, end - 4)
        if masked_crc32c(data[p + 12 : end - 4]) != stored:
            continue
        at, chain = end, BOUNDARY_FOUND
        while at < p + lookahead and at != size:
            following = _whole_record_at(data, at, size)
            if following == -1 or (following == -2 and at_eof):
                chain = -1  # not framed, or cut short by the end of the file
                break
            if following == -2:
                break
            (stored,) = struct.unpack_from("<I", data, following - 4)
            if masked_crc32c(data[at + 12 : following - 4]) != stored:
                chain = -1
                break
            at = following
        if chain == -1:
            continue
        whole = at >= p + lookahead or at_eof
        return (BOUNDARY_FOUND if whole else BOUNDARY_MORE), p
    return BOUNDARY_NONE, stop


def _frame(payload: bytes) -> bytes:
    """One TFRecord frame around ``payload``."""
    length = struct.pack("<Q", len(payload))
    return b"".join(
        (length, struct.pack("<I", masked_crc32c(length)), payload, struct.pack("<I", masked_crc32c(payload)))
    )


def _frame_all(payloads: Sequence[bytes]) -> Tuple[bytes, bytes]:
    frames = [_frame(p) for p in payloads]
    ends = np.cumsum([len(f) for f in frames], dtype=np.uint64)
    return b"".join(frames), ends.astype(np.uint64).tobytes()


def _check_offsets(offsets: np.ndarray, limit: int, what: str) -> None:
    """Offsets must be non-decreasing and within ``[0, limit]``."""
    if len(offsets) and (offsets.min() < 0 or offsets.max() > limit):
        raise ValueError(f"{what} point outside their target of {limit} items")
    if len(offsets) > 1 and np.any(np.diff(offsets) < 0):
        raise ValueError(f"{what} are not non-decreasing")


def encode_frames(data: Any, value_offsets: Any) -> Tuple[bytes, bytes]:
    """Frame the payloads ``data[value_offsets[i]:value_offsets[i+1]]``; see ``_native.pyi``."""
    view = _byte_view(data)
    offsets = _array(value_offsets, "<i8", "value_offsets")
    _check_offsets(offsets, len(view), "value_offsets")
    payloads = [bytes(view[offsets[i] : offsets[i + 1]]) for i in range(len(offsets) - 1)]
    return _frame_all(payloads)
