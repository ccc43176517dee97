"""The reference decoder: records parsed by ``protobuf`` (map entries mirrored as
plain messages) into the Arrow buffers of the requested columns (``Decoder``)."""

from __future__ import annotations

from typing import Any, Iterator, Optional, Sequence, Tuple

import struct

import numpy as np
from google.protobuf.message import DecodeError as _ProtobufDecodeError

from google.protobuf import descriptor_pb2, message_factory

from tfsql._proto import _POOL
from tfsql._reference.framing import masked_crc32c
from tfsql._reference.common import (
    _read_varint,
    EXAMPLE,
    SEQUENCE_EXAMPLE,
    RAW,
    FEATURES,
    FEATURE_LISTS,
    KIND_NONE,
    BYTES,
    FLOAT,
    INT64,
    SCALAR,
    LIST,
    LIST_OF_LIST,
    _KIND_BY_ONEOF,
    _KIND_NAMES,
    _NUMPY_DTYPE,
    _INT32_MAX,
    DecodeError,
    _byte_view,
    _array,
    _bitmap,
    _int32_offsets,
)


def _records(buf: Any, offsets: Any, lengths: Any, verify: bool = False) -> Iterator[bytes]:
    """The payloads ``buf[offsets[i]:offsets[i]+lengths[i]]`` as bytes; with ``verify``,
    each payload's data CRC is checked against the 4 bytes after it (``data_crc``)."""
    data = _byte_view(buf)
    starts = _array(offsets, "<u8", "offsets")
    sizes = _array(lengths, "<u8", "lengths")
    if len(starts) != len(sizes):
        raise ValueError(f"{len(starts)} offsets but {len(sizes)} lengths")
    for record, (start, size) in enumerate(zip(starts.tolist(), sizes.tolist())):
        if start + size > len(data):
            raise ValueError(f"record span [{start}, {start + size}) is outside the buffer of {len(data)} bytes")
        payload = bytes(data[start : start + size])
        if verify and bytes(data[start + size : start + size + 4]) != struct.pack("<I", masked_crc32c(payload)):
            raise DecodeError("data_crc", record=record)
        yield payload


# Mirrors of Example and SequenceExample whose maps are declared as what they are on
# the wire, ``repeated Entry`` (an Entry being ``string key = 1; V value = 2``). Python
# protobuf (upb) parses a real map entry that carries unknown fields into the unknown
# fields of the map's message, dropping the feature, where C++ protobuf (TensorFlow)
# keeps it; parsing the entries as plain messages keeps them, and the map rule
# (the last entry of a key wins) is applied in ``_feature_maps``.


def _build_mirror_file() -> descriptor_pb2.FileDescriptorProto:
    F = descriptor_pb2.FieldDescriptorProto
    fd = descriptor_pb2.FileDescriptorProto(
        name="tfsql/_reference_mirror.proto",
        package="tfsql_reference",
        syntax="proto3",
        dependency=["tfsql/tensorflow_example.proto"],
    )

    def message(name: str, fields: list) -> None:
        msg = fd.message_type.add(name=name)
        for field_name, number, ftype, label, type_name in fields:
            field = msg.field.add(name=field_name, number=number, type=ftype, label=label)
            if type_name:
                field.type_name = type_name

    optional, repeated = F.LABEL_OPTIONAL, F.LABEL_REPEATED
    message(
        "FeatureEntry",
        [("key", 1, F.TYPE_STRING, optional, ""), ("value", 2, F.TYPE_MESSAGE, optional, ".tensorflow.Feature")],
    )
    message(
        "FeatureListEntry",
        [("key", 1, F.TYPE_STRING, optional, ""), ("value", 2, F.TYPE_MESSAGE, optional, ".tensorflow.FeatureList")],
    )
    message("Features", [("feature", 1, F.TYPE_MESSAGE, repeated, ".tfsql_reference.FeatureEntry")])
    message("FeatureLists", [("feature_list", 1, F.TYPE_MESSAGE, repeated, ".tfsql_reference.FeatureListEntry")])
    message("Example", [("features", 1, F.TYPE_MESSAGE, optional, ".tfsql_reference.Features")])
    message(
        "SequenceExample",
        [
            ("context", 1, F.TYPE_MESSAGE, optional, ".tfsql_reference.Features"),
            ("feature_lists", 2, F.TYPE_MESSAGE, optional, ".tfsql_reference.FeatureLists"),
        ],
    )
    return fd


_POOL.Add(_build_mirror_file())
_MIRROR = {
    record_type: message_factory.GetMessageClass(_POOL.FindMessageTypeByName(f"tfsql_reference.{name}"))
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
        sections = {FEATURES: message.context.feature, FEATURE_LISTS: message.feature_lists.feature_list}
    return {location: {entry.key: entry.value for entry in entries} for location, entries in sections.items()}


def _kind(feature) -> int:
    return _KIND_BY_ONEOF[feature.WhichOneof("kind")]


def looks_like_sequence_example(record: Any) -> bool:
    """Whether a record read as an Example is really a SequenceExample: it parses as one
    and a step of one of its feature lists (the last entry of a repeated key) has a kind.

    >>> looks_like_sequence_example(b"")
    False
    """
    try:
        message = _parse(bytes(_byte_view(record)), SEQUENCE_EXAMPLE, 0)
    except DecodeError:
        return False  # not a SequenceExample either: decoding says what is wrong
    lists = _feature_maps(message, SEQUENCE_EXAMPLE)[FEATURE_LISTS]
    return any(step.WhichOneof("kind") for feature_list in lists.values() for step in feature_list.feature)


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
        self.key = key  # None: a name protobuf can never hold (not UTF-8)
        self.location = location
        self.kind = kind
        self.shape = shape
        self.valid: list[bool] = []
        self.outer_counts: list[int] = []  # LIST: values per row; LIST_OF_LIST: steps per row
        self.inner_valid: list[bool] = []
        self.inner_counts: list[int] = []  # LIST_OF_LIST: values per step
        self.chunks: list = []  # numpy arrays, or lists of bytes
        self.value_count = 0
        self.byte_count = 0

    # -- reading one record

    def _checked_values(self, feature, record: int):
        """Values of ``feature``, or None when it has no kind; checks its kind."""
        found = _kind(feature)
        if found == KIND_NONE:
            return None
        if found != self.kind:
            raise DecodeError(
                "kind_mismatch",
                record=record,
                column=self.index,
                found_kind=found,
                detail=f"found {_KIND_NAMES[found]}, expected {_KIND_NAMES[self.kind]}",
            )
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
                raise DecodeError("not_scalar", record=record, column=self.index, detail=f"{len(values)} values")
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
            raise DecodeError(
                "overflow", record=record, column=self.index, detail="the batch exceeds 32-bit Arrow offsets"
            )

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
        return (
            validity,
            null_count,
            outer_offsets,
            inner_validity,
            inner_null_count,
            inner_offsets,
            value_offsets,
            values,
        )


def _check_columns(record_type: int, columns: Sequence[Tuple[bytes, int, int, int]], for_what: str) -> list:
    """Validate ``(name, location, kind, shape)`` columns; return them as tuples."""
    if record_type not in (EXAMPLE, SEQUENCE_EXAMPLE, RAW):
        raise ValueError(f"unknown record type {record_type!r}")
    checked = []
    seen = set()
    for index, column in enumerate(columns):
        name, location, kind, shape = column
        if not isinstance(name, bytes):
            raise TypeError(f"{for_what} column {index}: name must be bytes, got {type(name).__name__}")
        if kind not in (BYTES, FLOAT, INT64):
            raise ValueError(f"{for_what} column {index} ({name!r}): unknown kind {kind!r}")
        if location == FEATURES:
            if shape not in (SCALAR, LIST):
                raise ValueError(
                    f"{for_what} column {index} ({name!r}): a FEATURES column is SCALAR or LIST, got shape {shape!r}"
                )
        elif location == FEATURE_LISTS:
            if record_type != SEQUENCE_EXAMPLE or shape != LIST_OF_LIST:
                raise ValueError(
                    f"{for_what} column {index} ({name!r}): a FEATURE_LISTS "
                    f"column needs SEQUENCE_EXAMPLE and shape LIST_OF_LIST"
                )
        else:
            raise ValueError(f"{for_what} column {index} ({name!r}): unknown location {location!r}")
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

    def decode(self, buf: Any, offsets: Any, lengths: Any, unknown: Optional[set] = None, verify: bool = False) -> list:
        """Decode the records ``buf[offsets[i]:offsets[i]+lengths[i]]``.

        When ``unknown`` is a set, add to it the ``(location, name_bytes)`` of every
        feature the records hold that is not among the columns. With ``verify``, each
        record's data CRC (the 4 bytes after it) is checked before it is decoded.
        """
        builder = self.builder()
        builder.feed(buf, offsets, lengths, unknown, verify)
        return builder.finish()

    def builder(self, rows: int = 0, payload: int = 0) -> "Builder":
        """A :class:`Builder` decoding several buffers into one set of columns (``rows`` and
        ``payload`` are the native codec's reservation hints; unused here)."""
        if rows < 0 or payload < 0:
            raise ValueError("builder: rows and payload must be >= 0")
        return Builder(self._record_type, self._columns)


class Builder:
    """Columns decoded from several buffers of records (``Decoder.builder()``): ``feed``
    decodes more records, ``finish`` returns the columns as ``Decoder.decode`` does. A
    ``DecodeError`` counts records from the failing call's first and ends the Builder."""

    def __init__(self, record_type: int, columns: list) -> None:
        self._record_type = record_type
        self._columns = [
            _Column(i, _utf8_key(name), location, kind, shape)
            for i, (name, location, kind, shape) in enumerate(columns)
        ]
        self._wanted = {(location, name) for name, location, _, _ in columns}
        self._payloads: list[bytes] = []  # RAW
        self._raw_bytes = 0
        self._done = False
        self.rows = 0

    def feed(self, buf: Any, offsets: Any, lengths: Any, unknown: Optional[set] = None, verify: bool = False) -> None:
        if self._done:
            raise ValueError("this Builder is finished (or failed): start another")
        try:
            count = 0
            for record, payload in enumerate(_records(buf, offsets, lengths, verify)):
                self._read(payload, record, unknown)
                count += 1
        except BaseException:
            self._done = True
            raise
        self.rows += count

    def _read(self, payload: bytes, record: int, unknown: Optional[set]) -> None:
        if self._record_type == RAW:
            self._raw_bytes += len(payload)
            if self._raw_bytes > _INT32_MAX:
                raise DecodeError("overflow", record=record, column=0)
            self._payloads.append(payload)
            return
        maps = _feature_maps(_parse(payload, self._record_type, record), self._record_type)
        if unknown is not None:
            unknown.update(
                key
                for key in ((location, name.encode("utf-8")) for location, entries in maps.items() for name in entries)
                if key not in self._wanted
            )
        for column in self._columns:
            column.read(maps, record)

    def finish(self) -> list:
        if self._done:
            raise ValueError("this Builder is finished (or failed): start another")
        self._done = True
        if self._record_type == RAW:
            payloads = self._payloads
            return [(None, 0, None, None, 0, None, _int32_offsets([len(p) for p in payloads]), b"".join(payloads))]
        return [column.finish() for column in self._columns]
