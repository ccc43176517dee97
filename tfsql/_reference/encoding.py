"""The reference encoder: Arrow-style column buffers to serialized Example /
SequenceExample / raw records (``Encoder``)."""

from __future__ import annotations

from typing import Any, Sequence, Tuple

from tfsql._proto import Int64List
from tfsql._reference.common import (
    EXAMPLE,
    RAW,
    FEATURES,
    FEATURE_LISTS,
    BYTES,
    FLOAT,
    SCALAR,
    LIST,
    LIST_OF_LIST,
    _NUMPY_DTYPE,
    _byte_view,
    _array,
)
from tfsql._reference.framing import _frame_all, _check_offsets
from tfsql._reference.decoding import _check_columns


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
            raise ValueError(
                f"{where}: expected (validity, outer_offsets, inner_offsets, "
                f"value_offsets, values), got {len(arrays)} items"
            )
        validity, outer, inner, value_offsets, values = arrays
        self.validity = None if validity is None else _array(validity, "u1", f"{where} validity")
        if self.validity is not None and len(self.validity) < n_rows:
            raise ValueError(f"{where}: validity has {len(self.validity)} bytes for {n_rows} rows")
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
                raise ValueError(f"{where}: {('LIST', 'LIST_OF_LIST')[self.shape - 1]} needs outer_offsets")
            self.outer = _array(outer, "<i8", f"{where} outer_offsets")
            if len(self.outer) < n_rows + 1:
                raise ValueError(f"{where}: outer_offsets has {len(self.outer)} items for {n_rows} rows")
            _check_offsets(self.outer, item_count, f"{where} outer_offsets")
        elif item_count < n_rows:
            raise ValueError(f"{where}: {item_count} values for {n_rows} rows")

    def is_valid(self, row: int) -> bool:
        return self.validity is None or bool(self.validity[row])

    def _items(self, start: int, stop: int):
        """Values ``start:stop`` (bytes values by index, or a numpy slice)."""
        if self.kind == BYTES:
            offs = self.value_offsets
            return [bytes(self.data[offs[i] : offs[i + 1]]) for i in range(start, stop)]
        return self.values[start:stop]

    def feature(self, row: int) -> bytes:
        """The serialized Feature (or FeatureList) of a valid row."""
        if self.shape == SCALAR:
            return _encode_feature(self.kind, self._items(row, row + 1))
        start, stop = int(self.outer[row]), int(self.outer[row + 1])
        if self.shape == LIST:
            return _encode_feature(self.kind, self._items(start, stop))
        return b"".join(
            _field(1, _encode_feature(self.kind, self._items(int(self.inner[j]), int(self.inner[j + 1]))))
            for j in range(start, stop)
        )


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
        inputs = [_ColumnInput(i, column, tuple(a), n_rows) for i, (column, a) in enumerate(zip(self._columns, arrays))]
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
