"""Arrow arrays → the canonical buffers of the native encoder (docs/format.md section 5).

`column_arrays` turns one Arrow column, written as a `tfsql.encoding.FeatureColumn`
says, into the ``(validity, outer_offsets, inner_offsets, value_offsets, values)`` tuple
of ``Encoder.encode`` (see ``tfsql/_native.pyi``), with Arrow compute kernels (never per
value in Python): dictionaries decoded, tensors flattened, lists flattened level by
level, values converted to int64 / float32 / bytes. Every value that cannot be stored
as its feature kind is a `tfsql.errors.SchemaError` naming the column and the input row
(`RowLabel` maps batch rows to input rows): a null inside a list or tensor, a uint64
above 2**63-1, a decimal float32 cannot hold exactly.

Examples
--------
>>> import pyarrow as pa
>>> from tfsql._codec import codec
>>> from tfsql.encoding import FeatureColumn
>>> spec = FeatureColumn("x", codec.FEATURES, codec.INT64, codec.LIST)
>>> validity, outer, inner, value_offsets, values = column_arrays(pa.array([[1, 2], [3]]), spec, RowLabel(0, None))
>>> outer.tolist(), values.tolist()
([0, 2, 3], [1, 2, 3])
>>> column_arrays(pa.array([[1, None]]), spec, RowLabel(10, None))
Traceback (most recent call last):
tfsql.errors.SchemaError: column 'x' has a null element inside its list at row 10; a TFRecord feature cannot hold nulls inside a list: drop or fill them first (for example with pyarrow.compute.fill_null or polars' list.drop_nulls)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tfsql import schema as _schema
from tfsql._codec import codec
from tfsql.errors import SchemaError

if TYPE_CHECKING:
    from tfsql.encoding import FeatureColumn

__all__ = ["RowLabel", "column_arrays"]

_INT64_MAX = np.iinfo(np.int64).max


class RowLabel:
    """Turns a batch row index into the row number of the whole input, for messages."""

    def __init__(self, row_base: int, row_numbers: np.ndarray | None) -> None:
        self.row_base = row_base
        self.row_numbers = row_numbers

    def __call__(self, row: int) -> int:
        if self.row_numbers is not None:
            row = int(self.row_numbers[row])
        return self.row_base + row


@dataclass(frozen=True)
class _Rows:
    """Which rows of the input hold the values of a column's (flattened) level, for messages.

    ``levels`` are the offsets of the list levels above the values (none for a scalar
    column), ``validity`` the column's row validity bytes (None: no null rows).
    """

    spec: FeatureColumn
    levels: Sequence[np.ndarray]
    validity: np.ndarray | None
    label: RowLabel

    def of(self, positions: np.ndarray) -> np.ndarray:
        """The batch row holding each value position."""
        for offsets in reversed(self.levels):
            positions = np.searchsorted(offsets, positions, side="right") - 1
        return positions

    def first_bad(self, bad_positions: np.ndarray) -> int | None:
        """The first non-null batch row holding a bad position (None: only null rows do)."""
        rows = self.of(bad_positions)
        if self.validity is not None:
            rows = rows[self.validity[rows] != 0]
        return int(rows.min()) if len(rows) else None


# --------------------------------------------------------------------------------------
# Converting: Arrow arrays → canonical buffers
# --------------------------------------------------------------------------------------


def column_arrays(array: pa.Array, spec: FeatureColumn, label: RowLabel) -> tuple:
    """``(validity, outer_offsets, inner_offsets, value_offsets, values)`` for a column."""
    array = _flat_tensor(_decode_dictionary(array), spec, label)
    validity = _validity(array)
    outer_offsets = inner_offsets = None
    if spec.shape == codec.SCALAR:
        leaf = array
        levels: list[np.ndarray] = []
    elif spec.steps_from_list:
        leaf, outer_offsets = _flatten(array)
        inner_offsets = np.arange(len(leaf) + 1, dtype=np.int64)
        levels = [outer_offsets]
    elif spec.shape == codec.LIST:
        leaf, outer_offsets = _flatten(array)
        levels = [outer_offsets]
    else:  # LIST_OF_LIST
        inner_lists, outer_offsets = _flatten(array)
        inner_lists = _decode_dictionary(inner_lists)
        _reject_nulls(inner_lists, _Rows(spec, [outer_offsets], validity, label), "a null inner list")
        leaf, inner_offsets = _flatten(inner_lists)
        levels = [outer_offsets, inner_offsets]
    rows = _Rows(spec, levels, validity, label)
    if levels:
        leaf = _decode_dictionary(leaf)
        _reject_nulls(leaf, rows, "a null element inside its list")
    value_offsets, values = _leaf_buffers(leaf, rows)
    return (validity, outer_offsets, inner_offsets, value_offsets, values)


def _flat_tensor(array: pa.Array, spec: FeatureColumn, label: RowLabel) -> pa.Array:
    """A tensor column (fixed-shape tensor, or fixed_size_list of fixed_size_list) as one
    flat fixed_size_list per row, values in row-major (storage) order; other columns as
    they are."""
    layout = _schema.tensor_layout(array.type)
    if layout is None:
        return array
    if isinstance(array, pa.ExtensionArray):
        array = array.storage
    total = int(np.prod(layout[0], dtype=np.int64))
    valid = array.is_valid().to_numpy(zero_copy_only=False)
    values, per_row = array, 1
    while pa.types.is_fixed_size_list(values.type):
        if values is not array and values.null_count:
            rows = np.flatnonzero(values.is_null().to_numpy(zero_copy_only=False)) // per_row
            rows = rows[valid[rows]]
            if len(rows):
                row = label(int(rows[0]))
                raise SchemaError(
                    f"column {spec.name!r} has a null inside its tensor at row {row}; a "
                    "feature holds no nulls: fill them first",
                    feature=spec.name,
                    record_index=row,
                )
        size = values.type.list_size
        values = values.values.slice(values.offset * size, len(values) * size)
        per_row *= size
    mask = array.is_null() if array.null_count else None
    return pa.FixedSizeListArray.from_arrays(values, total, mask=mask)


def _decode_dictionary(array: pa.Array) -> pa.Array:
    if pa.types.is_dictionary(array.type):
        return array.dictionary_decode()
    return array


def _validity(array: pa.Array) -> np.ndarray | None:
    if array.null_count == 0:
        return None
    return np.ascontiguousarray(array.is_valid().to_numpy(zero_copy_only=False)).view(np.uint8)


def _flatten(array: pa.Array) -> tuple[pa.Array, np.ndarray]:
    """One list level → (values of the valid rows, int64 offsets into them).

    Works for list, large_list, fixed_size_list and the list views; null rows get an
    empty range.
    """
    lengths = pc.fill_null(pc.list_value_length(array), 0)
    offsets = np.zeros(len(array) + 1, dtype=np.int64)
    np.cumsum(lengths.to_numpy(zero_copy_only=False), out=offsets[1:])
    return array.flatten(), offsets


def _reject_nulls(values: pa.Array, rows: _Rows, what: str) -> None:
    if values.null_count == 0:
        return
    null_positions = np.flatnonzero(~values.is_valid().to_numpy(zero_copy_only=False))
    row = rows.first_bad(null_positions)
    if row is None:  # pragma: no cover - flatten() drops the ranges of null rows
        return
    spec, label = rows.spec, rows.label
    raise SchemaError(
        f"column {spec.name!r} has {what} at row {label(row)}; a TFRecord feature "
        f"cannot hold nulls inside a list: drop or fill them first (for example with "
        f"pyarrow.compute.fill_null or polars' list.drop_nulls)",
        feature=spec.name,
        record_index=label(row),
    )


def _leaf_buffers(leaf: pa.Array, rows: _Rows) -> tuple[np.ndarray | None, Any]:
    """``(value_offsets, values)`` of the innermost values, in the feature's kind."""
    if rows.spec.kind == codec.BYTES:
        return _bytes_buffers(leaf)
    if rows.spec.kind == codec.FLOAT:
        return None, _fixed_width_values(_to_float32(leaf, rows), np.float32)
    return None, _fixed_width_values(_to_int64(leaf, rows), np.int64)


def _to_float32(leaf: pa.Array, rows: _Rows) -> pa.Array:
    if pa.types.is_decimal(leaf.type):
        values = _schema.decimal_to_float(leaf)
        _check_decimal_exact(leaf, values, rows)
        return values
    return pc.cast(leaf, pa.float32(), safe=False)


def _check_decimal_exact(leaf: pa.Array, values: pa.Array, rows: _Rows) -> None:
    """Decimals are written as float32 only when reading the float back as the same
    decimal type gives the same value; anything else is an error, never rounding."""
    try:
        back = pc.cast(values, leaf.type, safe=False)
        differs = pc.fill_null(pc.not_equal(back, leaf), False)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):  # beyond the decimal's range
        differs = pc.is_valid(leaf)
    bad = np.flatnonzero(differs.to_numpy(zero_copy_only=False))
    row = rows.first_bad(bad) if len(bad) else None
    if row is None:
        return
    spec, label = rows.spec, rows.label
    at = int(bad[np.flatnonzero(rows.of(bad) == row)[0]])
    value = leaf[at].as_py()
    raise SchemaError(
        f"column {spec.name!r} row {label(row)} holds the decimal {value}, which a "
        f"float_list (float32) cannot store exactly (it would read back as "
        f"{values[at].as_py()}); decimals "
        f"are written only when exact: cast the column to string to keep every digit "
        f"(a bytes_list), or to float64 to accept float32 rounding",
        feature=spec.name,
        record_index=label(row),
    )


def _to_int64(leaf: pa.Array, rows: _Rows) -> pa.Array:
    t = leaf.type
    if pa.types.is_temporal(t):
        leaf = leaf.view(pa.int32() if t.bit_width == 32 else pa.int64())
    elif pa.types.is_uint64(t):
        _check_uint64_range(leaf, rows)
        return leaf.view(pa.int64())
    return pc.cast(leaf, pa.int64())


def _check_uint64_range(leaf: pa.Array, rows: _Rows) -> None:
    values = _fixed_width_values(leaf, np.uint64)
    too_big = np.flatnonzero(values > _INT64_MAX)
    if len(too_big) == 0:
        return
    row = rows.first_bad(too_big)
    if row is None:
        return  # only null slots hold garbage
    value = int(values[too_big[np.flatnonzero(rows.of(too_big) == row)[0]]])
    spec, label = rows.spec, rows.label
    raise SchemaError(
        f"column {spec.name!r} row {label(row)} holds the uint64 value {value}, "
        f"above the int64 maximum {_INT64_MAX} that an int64_list can store; cast the "
        f"column (to float64 or string, say) or filter those rows first",
        feature=spec.name,
        record_index=label(row),
    )


def _fixed_width_values(array: pa.Array, dtype: type) -> np.ndarray:
    """The value slots of a fixed-width array without copying (null slots included)."""
    buffer = array.buffers()[1]
    if buffer is None or len(array) == 0:
        return np.zeros(0, dtype=dtype)
    return np.frombuffer(buffer, dtype=dtype)[array.offset : array.offset + len(array)]


def _bytes_buffers(leaf: pa.Array) -> tuple[np.ndarray, Any]:
    """int64 value offsets and the data buffer of a string/binary array."""
    t = leaf.type
    if pa.types.is_fixed_size_binary(t):
        width = t.byte_width
        data = leaf.buffers()[1]
        offsets = (np.arange(len(leaf) + 1, dtype=np.int64) + leaf.offset) * width
        return offsets, data if data is not None else b""
    if not pa.types.is_large_binary(t):
        leaf = pc.cast(leaf, pa.large_binary())
    _, offsets_buf, data = leaf.buffers()
    if offsets_buf is None:
        offsets = np.zeros(len(leaf) + 1, dtype=np.int64)
    else:
        offsets = np.frombuffer(offsets_buf, dtype=np.int64)[leaf.offset : leaf.offset + len(leaf) + 1]
    return offsets, data if data is not None else b""
