"""The pure-Python reference codec: the API of ``tfsql/_native.pyi`` on ``protobuf``.

This module is written independently of the C core and serves two purposes:

1. the oracle of the differential tests (``tests/unit/test_differential.py``), so it
   leaves every protobuf decision (packed or unpacked values, unknown fields, repeated
   map keys, oneof merging) to the ``protobuf`` package itself, and
2. the fallback codec when ``TFSQL_PURE_PYTHON=1`` is set (see ``tfsql._codec``).

It favours clarity over speed, but builds its output buffers with numpy and keeps
float32 values as raw bits end to end (Python floats would quiet signalling NaNs).

Decisions the stub leaves open, made here (the C core is expected to agree):

- Returned "buffers" are ``bytes``; ``len()`` is their size in bytes.
- ``inner_null_count`` is ``0`` (not ``None``) for SCALAR and LIST columns.
- ``Decoder`` columns: ``FEATURES`` takes ``SCALAR`` or ``LIST``; ``FEATURE_LISTS``
  takes only ``LIST_OF_LIST`` and only with ``SEQUENCE_EXAMPLE``; anything else, or
  the same (location, name) twice, is a ``ValueError``.
- When a record breaks several columns, the error names the lowest column index.
- A feature holding another kind is a ``kind_mismatch`` even when its list is empty.
- ``Encoder`` always writes ``Example.features`` and both ``SequenceExample.context``
  and ``.feature_lists`` (possibly empty), map entries in column order, packed
  numeric values; a null row of a ``RAW`` column is a ``ValueError``.
- ``summarize`` on ``RAW`` records returns ``{}``.

Examples
--------
>>> from tfsql import _reference as ref
>>> from tfsql._proto import Example
>>> ex = Example()
>>> ex.features.feature["label"].int64_list.value.append(7)
>>> payload = ex.SerializeToString()
>>> framed, ends = ref.encode_frames(payload, np.array([0, len(payload)], np.int64))
>>> offsets, lengths, end, status = ref.scan_frames(framed)
>>> status == ref.FRAME_OK and end == len(framed)
True
>>> columns = [(b"label", ref.FEATURES, ref.INT64, ref.SCALAR)]
>>> (validity, nulls, *_, values), = ref.Decoder(ref.EXAMPLE, columns).decode(
...     framed, offsets, lengths)
>>> validity is None, nulls, np.frombuffer(values, np.int64).tolist()
(True, 0, [7])
"""

from __future__ import annotations

import os
import struct
from typing import Any, Iterator, List, Optional, Sequence, Tuple

import crc32c as _crc32c
import numpy as np
from google.protobuf.message import DecodeError as _ProtobufDecodeError

from google.protobuf import descriptor_pb2, message_factory

from tfsql._proto import Int64List, _POOL

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
        ``"malformed"``, ``"kind_mismatch"``, ``"not_scalar"`` or ``"overflow"``.
    record : int
        Index of the record within the decoded batch (0-based).
    column : int
        Index of the column (into the Decoder's columns), or -1.
    found_kind : int
        For ``kind_mismatch``: the kind found; else 0.
    """

    def __init__(self, reason: str, *, record: int, column: int = -1, found_kind: int = 0,
                 detail: str = "") -> None:
        where = f"record {record}" + (f", column {column}" if column >= 0 else "")
        super().__init__(f"{reason} at {where}" + (f": {detail}" if detail else ""))
        self.reason = reason
        self.record = record
        self.column = column
        self.found_kind = found_kind

    def __reduce__(self):
        return (_rebuild_decode_error, (self.args[0], self.reason, self.record, self.column,
                                        self.found_kind))


def _rebuild_decode_error(message: str, reason: str, record: int, column: int,
                          found_kind: int) -> DecodeError:
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


# --------------------------------------------------------------------------- CRC


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


def scan_frames(buf: Any, start: int = 0, max_records: int = -1, max_bytes: int = -1,
                verify: bool = True) -> Tuple[bytes, bytes, int, int]:
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
        length_bytes = data[pos:pos + 8]
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
            if masked_crc32c(data[pos + 12:pos + 12 + length]) != stored_data_crc:
                status = FRAME_BAD_DATA_CRC
                break
        offsets.append(pos + 12)
        lengths.append(length)
        payload_total += length
        pos += 12 + length + 4
    return (np.array(offsets, dtype=np.uint64).tobytes(),
            np.array(lengths, dtype=np.uint64).tobytes(), pos, status)


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
    if masked_crc32c(data[p:p + 8]) != stored:
        return -1
    (length,) = struct.unpack_from("<Q", data, p)
    if size - p - 12 < length + 4:
        return -2
    return p + 12 + length + 4


def find_boundary(buf: Any, start: int = 0, stop: int = -1, at_eof: bool = True,
                  lookahead: int = 256 << 10) -> Tuple[int, int]:
    """The first TFRecord boundary in ``buf[start:stop]``; see ``_native.pyi``."""
    data = _byte_view(buf)
    size = len(data)
    stop = size if stop < 0 else stop
    if not 0 <= start <= size or stop < start or lookahead < 0:
        raise ValueError(f"find_boundary: start={start}, stop={stop}, lookahead={lookahead} "
                         f"do not fit a buffer of {size} bytes")
    if at_eof:
        stop = min(stop, size)
    for p in range(start, stop):
        end = _whole_record_at(data, p, size)
        if end == -1 or (end == -2 and at_eof):
            continue
        if end == -2:
            return BOUNDARY_MORE, p
        (stored,) = struct.unpack_from("<I", data, end - 4)
        if masked_crc32c(data[p + 12:end - 4]) != stored:
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
            if masked_crc32c(data[at + 12:following - 4]) != stored:
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
    return b"".join((length, struct.pack("<I", masked_crc32c(length)), payload,
                     struct.pack("<I", masked_crc32c(payload))))


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
    payloads = [bytes(view[offsets[i]:offsets[i + 1]]) for i in range(len(offsets) - 1)]
    return _frame_all(payloads)


# --------------------------------------------------------------------------- records


def _records(buf: Any, offsets: Any, lengths: Any) -> Iterator[bytes]:
    """The payloads ``buf[offsets[i]:offsets[i]+lengths[i]]`` as bytes."""
    data = _byte_view(buf)
    starts = _array(offsets, "<u8", "offsets")
    sizes = _array(lengths, "<u8", "lengths")
    if len(starts) != len(sizes):
        raise ValueError(f"{len(starts)} offsets but {len(sizes)} lengths")
    for start, size in zip(starts.tolist(), sizes.tolist()):
        if start + size > len(data):
            raise ValueError(f"record span [{start}, {start + size}) is outside the buffer "
                             f"of {len(data)} bytes")
        yield bytes(data[start:start + size])


# Mirrors of Example and SequenceExample whose maps are declared as what they are on
# the wire, ``repeated Entry`` (an Entry being ``string key = 1; V value = 2``). Python
# protobuf (upb) parses a real map entry that carries unknown fields into the unknown
# fields of the map's message, dropping the feature, where C++ protobuf (TensorFlow)
# keeps it; parsing the entries as plain messages keeps them, and the map rule
# (the last entry of a key wins) is applied in ``_feature_maps``.


def _build_mirror_file() -> descriptor_pb2.FileDescriptorProto:
    F = descriptor_pb2.FieldDescriptorProto
    fd = descriptor_pb2.FileDescriptorProto(name="tfsql/_reference_mirror.proto",
                                            package="tfsql_reference", syntax="proto3",
                                            dependency=["tfsql/tensorflow_example.proto"])

    def message(name: str, fields: list) -> None:
        msg = fd.message_type.add(name=name)
        for field_name, number, ftype, label, type_name in fields:
            field = msg.field.add(name=field_name, number=number, type=ftype, label=label)
            if type_name:
                field.type_name = type_name

    optional, repeated = F.LABEL_OPTIONAL, F.LABEL_REPEATED
    message("FeatureEntry", [("key", 1, F.TYPE_STRING, optional, ""),
                             ("value", 2, F.TYPE_MESSAGE, optional, ".tensorflow.Feature")])
    message("FeatureListEntry", [("key", 1, F.TYPE_STRING, optional, ""),
                                 ("value", 2, F.TYPE_MESSAGE, optional,
                                  ".tensorflow.FeatureList")])
    message("Features", [("feature", 1, F.TYPE_MESSAGE, repeated,
                          ".tfsql_reference.FeatureEntry")])
    message("FeatureLists", [("feature_list", 1, F.TYPE_MESSAGE, repeated,
                              ".tfsql_reference.FeatureListEntry")])
    message("Example", [("features", 1, F.TYPE_MESSAGE, optional, ".tfsql_reference.Features")])
    message("SequenceExample", [
        ("context", 1, F.TYPE_MESSAGE, optional, ".tfsql_reference.Features"),
        ("feature_lists", 2, F.TYPE_MESSAGE, optional, ".tfsql_reference.FeatureLists")])
    return fd


_POOL.Add(_build_mirror_file())
_MIRROR = {
    record_type: message_factory.GetMessageClass(
        _POOL.FindMessageTypeByName(f"tfsql_reference.{name}"))
    for record_type, name in ((EXAMPLE, "Example"), (SEQUENCE_EXAMPLE, "SequenceExample"))
}


def _parse(payload: bytes, record_type: int, record: int):
    """Parse one record with protobuf; a failure is a ``malformed`` DecodeError."""
    try:
        return _MIRROR[record_type].FromString(payload)
    except _ProtobufDecodeError as exc:
        raise DecodeError("malformed", record=record, detail=str(exc)) from None


def _feature_maps(message, record_type: int) -> dict:
    """``{location: {key: Feature or FeatureList}}``; a repeated key keeps its last
    entry, and each dict lists its keys in first-seen wire order."""
    if record_type == EXAMPLE:
        sections = {FEATURES: message.features.feature}
    else:
        sections = {FEATURES: message.context.feature,
                    FEATURE_LISTS: message.feature_lists.feature_list}
    return {location: {entry.key: entry.value for entry in entries}
            for location, entries in sections.items()}


def _kind(feature) -> int:
    return _KIND_BY_ONEOF[feature.WhichOneof("kind")]


def _float_values(float_list) -> np.ndarray:
    """The exact float32 values of a FloatList, read back from protobuf's own packed
    serialization (``value[i]`` would go through a Python float and quiet sNaNs)."""
    known = type(float_list)()
    known.CopyFrom(float_list)
    known.DiscardUnknownFields()
    wire = known.SerializeToString()
    if not wire:
        return np.zeros(0, dtype="<f4")
    length, pos = _read_varint(wire, 1)
    assert wire[0] == 0x0A and pos + length == len(wire), "FloatList serializes packed"
    return np.frombuffer(wire, dtype="<f4", offset=pos)


def _values(feature, kind: int):
    """The values of a feature of ``kind``: a list of bytes or a numpy array."""
    if kind == BYTES:
        return list(feature.bytes_list.value)
    if kind == FLOAT:
        return _float_values(feature.float_list)
    if kind == INT64:
        return np.array(feature.int64_list.value, dtype="<i8")
    return []


# --------------------------------------------------------------------------- decoding


class _Column:
    """Collects one output column record by record, then lays out its buffers."""

    def __init__(self, index: int, key: Optional[str], location: int, kind: int, shape: int):
        self.index = index
        self.key = key          # None: a name protobuf can never hold (not UTF-8)
        self.location = location
        self.kind = kind
        self.shape = shape
        self.valid: list[bool] = []
        self.outer_counts: list[int] = []   # LIST: values per row; LIST_OF_LIST: steps per row
        self.inner_valid: list[bool] = []
        self.inner_counts: list[int] = []   # LIST_OF_LIST: values per step
        self.chunks: list = []              # numpy arrays, or lists of bytes
        self.value_count = 0
        self.byte_count = 0

    # -- reading one record

    def _checked_values(self, feature, record: int):
        """Values of ``feature``, or None when it has no kind; checks its kind."""
        found = _kind(feature)
        if found == KIND_NONE:
            return None
        if found != self.kind:
            raise DecodeError("kind_mismatch", record=record, column=self.index,
                              found_kind=found,
                              detail=f"found {_KIND_NAMES[found]}, expected "
                                     f"{_KIND_NAMES[self.kind]}")
        return _values(feature, found)

    def read(self, maps: dict, record: int) -> None:
        """Append this record's cell (called once per record, in record order)."""
        feature_map = maps.get(self.location)
        entry = None
        if feature_map is not None and self.key is not None and self.key in feature_map:
            entry = feature_map[self.key]
        if self.shape == LIST_OF_LIST:
            self._read_steps(entry, record)
            return
        values = None if entry is None else self._checked_values(entry, record)
        if self.shape == SCALAR:
            if values is not None and len(values) > 1:
                raise DecodeError("not_scalar", record=record, column=self.index,
                                  detail=f"{len(values)} values")
            if values is None or len(values) == 0:
                self.valid.append(False)  # one empty / zero slot
                values = [b""] if self.kind == BYTES else np.zeros(1, _NUMPY_DTYPE[self.kind])
            else:
                self.valid.append(True)
            self._append_values(values, record)
        else:
            self.valid.append(values is not None)
            values = [] if values is None else values
            self.outer_counts.append(len(values))
            self._append_values(values, record)

    def _read_steps(self, feature_list, record: int) -> None:
        if feature_list is None:
            self.valid.append(False)
            self.outer_counts.append(0)
            return
        self.valid.append(True)
        steps = [self._checked_values(step, record) for step in feature_list.feature]
        self.outer_counts.append(len(steps))
        for values in steps:
            self.inner_valid.append(values is not None)
            values = [] if values is None else values
            self.inner_counts.append(len(values))
            self._append_values(values, record)
        if len(self.inner_counts) > _INT32_MAX:
            raise DecodeError("overflow", record=record, column=self.index)

    def _append_values(self, values, record: int) -> None:
        if self.kind != BYTES:  # an empty Python list would turn the concatenation float64
            values = np.asarray(values, dtype=_NUMPY_DTYPE[self.kind])
        self.chunks.append(values)
        self.value_count += len(values)
        if self.kind == BYTES:
            self.byte_count += sum(len(v) for v in values)
        if self.value_count > _INT32_MAX or self.byte_count > _INT32_MAX:
            raise DecodeError("overflow", record=record, column=self.index,
                              detail="the batch exceeds 32-bit Arrow offsets")

    # -- laying out the buffers

    def finish(self) -> tuple:
        valid = np.array(self.valid, dtype=np.bool_)
        null_count = int(len(valid) - valid.sum())
        validity = _bitmap(valid) if null_count else None
        outer_offsets = None if self.shape == SCALAR else _int32_offsets(self.outer_counts)
        inner_validity, inner_null_count, inner_offsets = None, 0, None
        if self.shape == LIST_OF_LIST:
            inner_valid = np.array(self.inner_valid, dtype=np.bool_)
            inner_null_count = int(len(inner_valid) - inner_valid.sum())
            inner_validity = _bitmap(inner_valid) if inner_null_count else None
            inner_offsets = _int32_offsets(self.inner_counts)
        if self.kind == BYTES:
            flat = [v for chunk in self.chunks for v in chunk]
            value_offsets = _int32_offsets([len(v) for v in flat])
            values = b"".join(flat)
        else:
            value_offsets = None
            dtype = _NUMPY_DTYPE[self.kind]
            values = np.concatenate([np.zeros(0, dtype)] + self.chunks).tobytes()
        return (validity, null_count, outer_offsets, inner_validity, inner_null_count,
                inner_offsets, value_offsets, values)


def _check_columns(record_type: int, columns: Sequence[Tuple[bytes, int, int, int]],
                   for_what: str) -> list:
    """Validate ``(name, location, kind, shape)`` columns; return them as tuples."""
    if record_type not in (EXAMPLE, SEQUENCE_EXAMPLE, RAW):
        raise ValueError(f"unknown record type {record_type!r}")
    checked = []
    seen = set()
    for index, column in enumerate(columns):
        name, location, kind, shape = column
        if not isinstance(name, bytes):
            raise TypeError(f"{for_what} column {index}: name must be bytes, got "
                            f"{type(name).__name__}")
        if kind not in (BYTES, FLOAT, INT64):
            raise ValueError(f"{for_what} column {index} ({name!r}): unknown kind {kind!r}")
        if location == FEATURES:
            if shape not in (SCALAR, LIST):
                raise ValueError(f"{for_what} column {index} ({name!r}): a FEATURES column "
                                 f"is SCALAR or LIST, got shape {shape!r}")
        elif location == FEATURE_LISTS:
            if record_type != SEQUENCE_EXAMPLE or shape != LIST_OF_LIST:
                raise ValueError(f"{for_what} column {index} ({name!r}): a FEATURE_LISTS "
                                 f"column needs SEQUENCE_EXAMPLE and shape LIST_OF_LIST")
        else:
            raise ValueError(f"{for_what} column {index} ({name!r}): unknown location "
                             f"{location!r}")
        if (location, name) in seen:
            raise ValueError(f"{for_what} column {index} ({name!r}) is listed twice")
        seen.add((location, name))
        checked.append((name, location, kind, shape))
    return checked


def _utf8_key(name: bytes) -> Optional[str]:
    try:
        return name.decode("utf-8")
    except UnicodeDecodeError:
        return None


class Decoder:
    """A decoder for a record type and ``(name, location, kind, shape)`` columns.

    See ``tfsql/_native.pyi`` for the output layout.
    """

    def __init__(self, record_type: int, columns: Sequence[Tuple[bytes, int, int, int]]) -> None:
        if record_type == RAW:
            _check_columns(RAW, [], "Decoder")
            self._columns: list = []
        else:
            self._columns = _check_columns(record_type, columns, "Decoder")
        self._record_type = record_type

    def decode(self, buf: Any, offsets: Any, lengths: Any, unknown: Optional[set] = None) -> list:
        """Decode the records ``buf[offsets[i]:offsets[i]+lengths[i]]``.

        When ``unknown`` is a set, add to it the ``(location, name_bytes)`` of every
        feature the records hold that is not among the columns.
        """
        payloads = _records(buf, offsets, lengths)
        if self._record_type == RAW:
            return [self._decode_raw(list(payloads))]
        builders = [_Column(i, _utf8_key(name), location, kind, shape)
                    for i, (name, location, kind, shape) in enumerate(self._columns)]
        wanted = {(location, name) for name, location, _, _ in self._columns}
        for record, payload in enumerate(payloads):
            maps = _feature_maps(_parse(payload, self._record_type, record), self._record_type)
            if unknown is not None:
                unknown.update(key for key in ((location, name.encode("utf-8"))
                                               for location, entries in maps.items()
                                               for name in entries) if key not in wanted)
            for builder in builders:
                builder.read(maps, record)
        return [builder.finish() for builder in builders]

    @staticmethod
    def _decode_raw(payloads: list) -> tuple:
        total = 0
        for record, payload in enumerate(payloads):
            total += len(payload)
            if total > _INT32_MAX:
                raise DecodeError("overflow", record=record, column=0)
        return (None, 0, None, None, 0, None, _int32_offsets([len(p) for p in payloads]),
                b"".join(payloads))


# --------------------------------------------------------------------------- encoding


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _field(number: int, payload: bytes) -> bytes:
    """A length-delimited field."""
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _encode_feature(kind: int, values) -> bytes:
    """A serialized Feature of ``kind`` holding ``values`` (list of bytes, or an array)."""
    if kind == BYTES:
        inner = b"".join(_field(1, v) for v in values)
    elif kind == FLOAT:
        inner = _field(1, values.astype("<f4").tobytes()) if len(values) else b""
    else:  # protobuf writes the varints (packed)
        inner = Int64List(value=values.tolist()).SerializeToString()
    return _field(kind, inner)


class _ColumnInput:
    """One Encoder input column, checked, with a per-row accessor."""

    def __init__(self, index: int, column: tuple, arrays: tuple, n_rows: int) -> None:
        self.name, self.location, self.kind, self.shape = column
        where = f"Encoder column {index} ({self.name!r})"
        if len(arrays) != 5:
            raise ValueError(f"{where}: expected (validity, outer_offsets, inner_offsets, "
                             f"value_offsets, values), got {len(arrays)} items")
        validity, outer, inner, value_offsets, values = arrays
        self.validity = None if validity is None else _array(validity, "u1", f"{where} validity")
        if self.validity is not None and len(self.validity) < n_rows:
            raise ValueError(f"{where}: validity has {len(self.validity)} bytes for "
                             f"{n_rows} rows")
        if values is None:
            raise ValueError(f"{where}: values is None")
        if self.kind == BYTES:
            self.data = _byte_view(values)
            if value_offsets is None:
                raise ValueError(f"{where}: BYTES needs value_offsets")
            self.value_offsets = _array(value_offsets, "<i8", f"{where} value_offsets")
            _check_offsets(self.value_offsets, len(self.data), f"{where} value_offsets")
            item_count = max(len(self.value_offsets) - 1, 0)
        else:
            self.values = _array(values, _NUMPY_DTYPE[self.kind].str, f"{where} values")
            item_count = len(self.values)
        # offsets arrays, set for the shapes that have them (Any: indexed only then)
        self.outer: Any = None
        self.inner: Any = None
        if self.shape == LIST_OF_LIST:
            if inner is None:
                raise ValueError(f"{where}: LIST_OF_LIST needs inner_offsets")
            self.inner = _array(inner, "<i8", f"{where} inner_offsets")
            _check_offsets(self.inner, item_count, f"{where} inner_offsets")
            item_count = max(len(self.inner) - 1, 0)
        if self.shape in (LIST, LIST_OF_LIST):
            if outer is None:
                raise ValueError(f"{where}: {('LIST', 'LIST_OF_LIST')[self.shape - 1]} "
                                 f"needs outer_offsets")
            self.outer = _array(outer, "<i8", f"{where} outer_offsets")
            if len(self.outer) < n_rows + 1:
                raise ValueError(f"{where}: outer_offsets has {len(self.outer)} items for "
                                 f"{n_rows} rows")
            _check_offsets(self.outer, item_count, f"{where} outer_offsets")
        elif item_count < n_rows:
            raise ValueError(f"{where}: {item_count} values for {n_rows} rows")

    def is_valid(self, row: int) -> bool:
        return self.validity is None or bool(self.validity[row])

    def _items(self, start: int, stop: int):
        """Values ``start:stop`` (bytes values by index, or a numpy slice)."""
        if self.kind == BYTES:
            offs = self.value_offsets
            return [bytes(self.data[offs[i]:offs[i + 1]]) for i in range(start, stop)]
        return self.values[start:stop]

    def feature(self, row: int) -> bytes:
        """The serialized Feature (or FeatureList) of a valid row."""
        if self.shape == SCALAR:
            return _encode_feature(self.kind, self._items(row, row + 1))
        start, stop = int(self.outer[row]), int(self.outer[row + 1])
        if self.shape == LIST:
            return _encode_feature(self.kind, self._items(start, stop))
        return b"".join(
            _field(1, _encode_feature(self.kind,
                                      self._items(int(self.inner[j]), int(self.inner[j + 1]))))
            for j in range(start, stop))


class Encoder:
    """An encoder for a record type and ``(name, location, kind, shape)`` columns."""

    def __init__(self, record_type: int, columns: Sequence[Tuple[bytes, int, int, int]]) -> None:
        self._columns = _check_columns(record_type, columns, "Encoder")
        if record_type == RAW and [c[2:] for c in self._columns] != [(BYTES, SCALAR)]:
            raise ValueError("a RAW Encoder takes exactly one SCALAR BYTES column")
        self._record_type = record_type

    def encode(self, arrays: Sequence[tuple], n_rows: int) -> Tuple[bytes, bytes]:
        """Encode ``n_rows`` records and frame them; see ``tfsql/_native.pyi``."""
        if len(arrays) != len(self._columns):
            raise ValueError(f"expected {len(self._columns)} column arrays, got {len(arrays)}")
        if n_rows < 0:
            raise ValueError(f"n_rows must be >= 0, got {n_rows}")
        inputs = [_ColumnInput(i, column, tuple(a), n_rows)
                  for i, (column, a) in enumerate(zip(self._columns, arrays))]
        return _frame_all([self._record(inputs, row) for row in range(n_rows)])

    def _record(self, inputs: list, row: int) -> bytes:
        if self._record_type == RAW:
            (column,) = inputs
            if not column.is_valid(row):
                raise ValueError(f"RAW record {row} is null; a record cannot be null")
            return column._items(row, row + 1)[0]
        parts: dict[int, list[bytes]] = {FEATURES: [], FEATURE_LISTS: []}
        for column in inputs:
            if column.is_valid(row):
                entry = _field(1, column.name) + _field(2, column.feature(row))
                parts[column.location].append(_field(1, entry))
        features = _field(1, b"".join(parts[FEATURES]))
        if self._record_type == EXAMPLE:
            return features
        return features + _field(2, b"".join(parts[FEATURE_LISTS]))


# --------------------------------------------------------------------------- summaries


def _read_varint(data: bytes, pos: int) -> Tuple[int, int]:
    result = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, pos
        shift += 7


def _length_delimited(data: bytes, number: int) -> Iterator[bytes]:
    """The payloads of every length-delimited field ``number`` in a message, in wire order.

    Only called on bytes protobuf has already parsed, so the wire is well formed;
    a field with another wire type is an unknown field to protobuf and skipped here.
    """
    pos = 0
    while pos < len(data):
        tag, pos = _read_varint(data, pos)
        field_number, wire_type = tag >> 3, tag & 7
        if wire_type == 0:
            _, pos = _read_varint(data, pos)
        elif wire_type == 1:
            pos += 8
        elif wire_type == 5:
            pos += 4
        elif wire_type == 2:
            length, pos = _read_varint(data, pos)
            if field_number == number:
                yield data[pos:pos + length]
            pos += length
        elif wire_type == 3:
            pos = _skip_group(data, pos, field_number)


def _skip_group(data: bytes, pos: int, group_number: int) -> int:
    """Skip a (deprecated) group whose start tag ended at ``pos``."""
    while True:
        tag, pos = _read_varint(data, pos)
        field_number, wire_type = tag >> 3, tag & 7
        if wire_type == 4 and field_number == group_number:
            return pos
        if wire_type == 0:
            _, pos = _read_varint(data, pos)
        elif wire_type == 1:
            pos += 8
        elif wire_type == 5:
            pos += 4
        elif wire_type == 2:
            length, pos = _read_varint(data, pos)
            pos += length
        elif wire_type == 3:
            pos = _skip_group(data, pos, field_number)


def _keys_in_wire_order(payload: bytes, record_type: int) -> Iterator[Tuple[int, str]]:
    """``(location, key)`` of each map entry in wire order (a key may repeat).

    The top-level fields are scanned in wire order too, so a SequenceExample whose
    feature_lists come before its context lists those keys first.
    """
    sections = {1: FEATURES} if record_type == EXAMPLE else {1: FEATURES, 2: FEATURE_LISTS}
    pos = 0
    while pos < len(payload):
        # Walk the top level by hand (wire order across fields 1 and 2).
        tag, after_tag = _read_varint(payload, pos)
        field_number, wire_type = tag >> 3, tag & 7
        if wire_type != 2:
            pos = _skip_one(payload, after_tag, field_number, wire_type)
            continue
        length, start = _read_varint(payload, after_tag)
        pos = start + length
        location = sections.get(field_number)
        if location is None:
            continue
        for entry in _length_delimited(payload[start:pos], 1):
            key = b""
            for key in _length_delimited(entry, 1):
                pass  # the last key field of an entry wins
            yield location, key.decode("utf-8")


def _skip_one(data: bytes, pos: int, field_number: int, wire_type: int) -> int:
    """Skip a non-length-delimited field whose tag ended at ``pos``."""
    if wire_type == 0:
        return _read_varint(data, pos)[1]
    if wire_type == 1:
        return pos + 8
    if wire_type == 5:
        return pos + 4
    return _skip_group(data, pos, field_number)


def _is_utf8(value: bytes) -> bool:
    try:
        value.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _feature_stats(feature) -> Tuple[int, int, bool]:
    """``(kind, value count, all bytes values are UTF-8)`` of one Feature."""
    kind = _kind(feature)
    if kind == BYTES:
        values = feature.bytes_list.value
        return kind, len(values), all(_is_utf8(v) for v in values)
    if kind == FLOAT:
        return kind, len(feature.float_list.value), True
    if kind == INT64:
        return kind, len(feature.int64_list.value), True
    return kind, 0, True


def summarize(buf: Any, offsets: Any, lengths: Any, record_type: int) -> dict:
    """Statistics for schema inference over the given records; see ``_native.pyi``.

    Returns ``{(location, name_bytes): [kinds_mask, present, min_len, max_len, utf8,
    max_inner_len]}`` in first-seen (record, then wire) order.
    """
    if record_type not in (EXAMPLE, SEQUENCE_EXAMPLE, RAW):
        raise ValueError(f"unknown record type {record_type!r}")
    stats: dict = {}
    for record, payload in enumerate(_records(buf, offsets, lengths)):
        if record_type == RAW:
            continue
        maps = _feature_maps(_parse(payload, record_type, record), record_type)
        seen_here = set()
        for location, key in _keys_in_wire_order(payload, record_type):
            if (location, key) in seen_here:
                continue
            seen_here.add((location, key))
            entry = maps[location][key]
            if location == FEATURES:
                kind, count, utf8 = _feature_stats(entry)
                kinds_mask, inner_max = 1 << kind, count
            else:
                kinds_mask, inner_max, utf8 = 0, 0, True
                for step in entry.feature:
                    kind, step_count, step_utf8 = _feature_stats(step)
                    kinds_mask |= 1 << kind
                    inner_max = max(inner_max, step_count)
                    utf8 = utf8 and step_utf8
                count = len(entry.feature)
            name = key.encode("utf-8")
            current = stats.get((location, name))
            if current is None:
                stats[(location, name)] = [kinds_mask, 1, count, count, utf8, inner_max]
            else:
                current[0] |= kinds_mask
                current[1] += 1
                current[2] = min(current[2], count)
                current[3] = max(current[3], count)
                current[4] = current[4] and utf8
                current[5] = max(current[5], inner_max)
    return stats


__all__ = [
    "EXAMPLE", "SEQUENCE_EXAMPLE", "RAW", "FEATURES", "FEATURE_LISTS", "KIND_NONE",
    "BYTES", "FLOAT", "INT64", "SCALAR", "LIST", "LIST_OF_LIST", "FRAME_OK",
    "FRAME_TRUNCATED", "FRAME_BAD_LENGTH_CRC", "FRAME_BAD_DATA_CRC", "BOUNDARY_FOUND",
    "BOUNDARY_NONE", "BOUNDARY_MORE", "DecodeError", "crc32c", "masked_crc32c",
    "hardware_crc", "scan_frames", "count_headers", "header_offsets", "find_boundary", "encode_frames",
    "Decoder", "Encoder", "summarize",
]
