"""The reference codec's codes (record types, locations, kinds, shapes, frame statuses),
its ``DecodeError`` and the buffer helpers its modules share."""

from __future__ import annotations

from typing import Any, Sequence, Tuple

import numpy as np


# --------------------------------------------------------------------------- codes

EXAMPLE = 0
SEQUENCE_EXAMPLE = 1
RAW = 2

FEATURES = 0
FEATURE_LISTS = 1

KIND_NONE = 0
BYTES = 1
FLOAT = 2
INT64 = 3

SCALAR = 0
LIST = 1
LIST_OF_LIST = 2

FRAME_OK = 0
FRAME_TRUNCATED = 1
FRAME_BAD_LENGTH_CRC = 2
FRAME_BAD_DATA_CRC = 3
FRAME_TOO_LONG = 4
BOUNDARY_FOUND = 0
BOUNDARY_NONE = 1
BOUNDARY_MORE = 2
#: find_boundary's lookahead after lost framing (the core's READER_RESYNC_LOOKAHEAD).
RESYNC_LOOKAHEAD = 256 << 10

_KIND_BY_ONEOF = {None: KIND_NONE, "bytes_list": BYTES, "float_list": FLOAT, "int64_list": INT64}
_KIND_NAMES = {KIND_NONE: "no kind", BYTES: "bytes_list", FLOAT: "float_list", INT64: "int64_list"}
_NUMPY_DTYPE: dict[int, np.dtype] = {FLOAT: np.dtype("<f4"), INT64: np.dtype("<i8")}
_INT32_MAX = 2**31 - 1
_MASK_DELTA = 0xA282EAD8


class DecodeError(ValueError):
    """A record does not decode for the requested columns.

    Attributes
    ----------
    reason : str
        ``"malformed"``, ``"kind_mismatch"``, ``"not_scalar"``, ``"overflow"`` or
        ``"data_crc"`` (decoding with ``verify``).
    record : int
        Index of the record within the decoded batch (0-based).
    column : int
        Index of the column (into the Decoder's columns), or -1.
    found_kind : int
        For ``kind_mismatch``: the kind found; else 0.
    """

    def __init__(self, reason: str, *, record: int, column: int = -1, found_kind: int = 0, detail: str = "") -> None:
        where = f"record {record}" + (f", column {column}" if column >= 0 else "")
        super().__init__(f"{reason} at {where}" + (f": {detail}" if detail else ""))
        self.reason = reason
        self.record = record
        self.column = column
        self.found_kind = found_kind

    def __reduce__(self):
        return (_rebuild_decode_error, (self.args[0], self.reason, self.record, self.column, self.found_kind))


def _rebuild_decode_error(message: str, reason: str, record: int, column: int, found_kind: int) -> DecodeError:
    error = DecodeError(reason, record=record, column=column, found_kind=found_kind)
    error.args = (message,)
    return error


# --------------------------------------------------------------------------- buffers


def _byte_view(buf: Any) -> memoryview:
    """A flat, read-only byte view of any C-contiguous buffer."""
    view = memoryview(buf)
    if not view.c_contiguous:
        raise ValueError("buffer must be C-contiguous")
    return view.cast("B") if view.format != "B" or view.ndim != 1 else view


def _array(buf: Any, dtype: str, what: str) -> np.ndarray:
    """``buf`` viewed as a 1-d numpy array of ``dtype`` (no copy)."""
    view = _byte_view(buf)
    itemsize = np.dtype(dtype).itemsize
    if len(view) % itemsize:
        raise ValueError(f"{what}: {len(view)} bytes is not a whole number of {dtype} items")
    return np.frombuffer(view, dtype=dtype)


def _bitmap(valid: np.ndarray) -> bytes:
    """An Arrow validity bitmap (LSB first, padding bits zero) of a bool array."""
    return np.packbits(valid.astype(np.bool_), bitorder="little").tobytes()


def _int32_offsets(counts: Sequence[int]) -> bytes:
    """Offsets ``[0, c0, c0+c1, ...]`` as int32 bytes (callers checked the total)."""
    offsets = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(np.asarray(counts, dtype=np.int64), out=offsets[1:])
    return offsets.astype("<i4").tobytes()


def _read_varint(data: bytes, pos: int) -> Tuple[int, int]:
    """The varint at ``data[pos:]`` and the position after it."""
    result = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, pos
        shift += 7


class InferenceError(ValueError):
    """The inference sample does not resolve to columns.

    Attributes
    ----------
    reason : str
        ``"kind_conflict"`` (a feature seen with two kinds), ``"name_taken"`` (a renamed
        feature list's column name is taken) or ``"name_not_utf8"``.
    feature : str
        The feature (non-UTF-8 bytes shown escaped).
    path : str
        The file, when one is known ("" otherwise).
    record, offset : int
        The file-wide record index and its byte offset, or -1.
    """

    def __init__(
        self, reason: str, message: str, *, feature: str = "", path: str = "", record: int = -1, offset: int = -1
    ) -> None:
        super().__init__(message)
        self.reason = reason
        self.feature = feature
        self.path = path
        self.record = record
        self.offset = offset

    def __reduce__(self):
        return (
            _rebuild_inference_error,
            (self.args[0], self.reason, self.feature, self.path, self.record, self.offset),
        )


def _rebuild_inference_error(
    message: str, reason: str, feature: str, path: str, record: int, offset: int
) -> InferenceError:
    return InferenceError(reason, message, feature=feature, path=path, record=record, offset=offset)
