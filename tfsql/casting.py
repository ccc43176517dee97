"""Read casts: a decoded column (canonical Arrow type) to the type the user asked for,
exactly or a :class:`~tfsql.errors.SchemaError` naming the feature, file and record.

Integers are range-checked, bytes UTF-8-checked, booleans must be 0 or 1, a float
read as a decimal (or float16) must convert back to the same float32, a fixed-size
list or tensor must hold exactly its size, a non-nullable column must have a value in
every record.

Examples
--------
>>> import pyarrow as pa
>>> from tfsql._codec import codec
>>> spec = ColumnSpec("x", codec.FEATURES, codec.INT64, codec.SCALAR, pa.int8())
>>> cast_to_target(pa.array([1, 2]), spec, where="f", first_record=0).type
DataType(int8)
"""

from __future__ import annotations

from typing import Callable

import pyarrow as pa
import pyarrow.compute as pc

from tfsql._codec import codec
from tfsql.errors import SchemaError
from tfsql.schema import ColumnSpec, decimal_to_float, is_list_type, tensor_layout

__all__ = ["cast_to_target"]


def _first_failing_row(decoded: pa.Array, target: pa.DataType) -> int | None:
    """Locate the first row whose cast fails, for error messages (slow path only)."""
    lo, hi = 0, len(decoded)
    if hi == 0:
        return None
    # Binary search on prefixes: the smallest prefix that fails to cast.
    while lo < hi:
        mid = (lo + hi) // 2
        try:
            _safe_cast(decoded.slice(0, mid + 1), target)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            hi = mid
        else:
            lo = mid + 1
    return lo if lo < len(decoded) else None


def _is_binary(t: pa.DataType) -> bool:
    return pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_binary_view(t)


def _is_string(t: pa.DataType) -> bool:
    return pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t)


def _check_utf8(
    decoded: pa.Array, spec: ColumnSpec, *, where: str, first_record: int, offset_of: Callable[[int], int] | None
) -> None:
    """Every bytes value read into a string column must be valid UTF-8 (called when the
    cast failed): the first that is not is found by casting prefixes of the flat values
    (pyarrow has no per-value UTF-8 check), and reported from its fields
    (:data:`tfsql.messages.SCHEMA`)."""
    flat = _flat_values(decoded)
    bad = _first_failing_row(flat, pa.string())
    if bad is None:
        return
    row = _flat_rows(decoded)[bad].as_py()
    raise SchemaError.from_reason(
        "not_utf8",
        feature=spec.name,
        path=where,
        record_index=first_record + row,
        offset=None if offset_of is None else offset_of(row),
    )


def _check_bool(decoded: pa.Array, spec: ColumnSpec, *, where: str, first_record: int) -> None:
    """Every int64 value (possibly nested) read as bool must be 0 or 1."""
    flat = _flat_values(decoded)
    if len(flat) == 0:
        return
    bad = pc.fill_null(pc.and_(pc.not_equal(flat, 0), pc.not_equal(flat, 1)), False)
    if not pc.any(bad).as_py():
        return
    i = pc.index(bad, True).as_py()
    row = first_record + _flat_rows(decoded)[i].as_py()
    raise SchemaError(
        f"feature {spec.feature_name!r} in {where}, record {row} holds {flat[i].as_py()}, which "
        f"does not fit the requested type {spec.arrow_type} (only 0 and 1 do); read it as an "
        "integer type",
        feature=spec.name,
        path=where,
        record_index=row,
    )


def _leaf_type(t: pa.DataType) -> pa.DataType:
    while is_list_type(t):
        t = t.value_type
    return t


def _with_leaf(t: pa.DataType, leaf: pa.DataType) -> pa.DataType:
    """``t`` with its innermost value type replaced by ``leaf`` (list nesting kept)."""
    if pa.types.is_fixed_size_list(t):
        return pa.list_(_with_leaf(t.value_type, leaf), t.list_size)
    if pa.types.is_large_list(t):
        return pa.large_list(_with_leaf(t.value_type, leaf))
    if pa.types.is_list_view(t):
        return pa.list_view(_with_leaf(t.value_type, leaf))
    if pa.types.is_large_list_view(t):
        return pa.large_list_view(_with_leaf(t.value_type, leaf))
    if pa.types.is_list(t):
        return pa.list_(_with_leaf(t.value_type, leaf))
    return leaf


def _safe_cast(decoded: pa.Array, target: pa.DataType) -> pa.Array:
    """``pc.cast(decoded, target, safe=True)``; 32-bit temporal targets (``date32``,
    ``time32``), which Arrow casts only from int32, go through int32 (range-checked),
    so a column written from ``date32`` reads back with its schema."""
    leaf = _leaf_type(target)
    if pa.types.is_date32(leaf) or pa.types.is_time32(leaf):
        decoded = pc.cast(decoded, _with_leaf(target, pa.int32()), safe=True)
    return pc.cast(decoded, target, safe=True)


def _check_fixed_size(
    decoded: pa.Array, spec: ColumnSpec, *, where: str, first_record: int, tensor_shape: tuple | None = None
) -> None:
    """A fixed-size list type needs every non-null list to hold exactly its size (a
    tensor: the product of its shape)."""
    target = spec.arrow_type
    if not pa.types.is_fixed_size_list(target) or not (
        pa.types.is_list(decoded.type) or pa.types.is_large_list(decoded.type)
    ):
        return
    lengths = pc.list_value_length(decoded)
    wrong = pc.and_kleene(pc.is_valid(lengths), pc.not_equal(lengths, target.list_size))
    if not pc.any(wrong).as_py():
        return
    row = pc.index(wrong, True).as_py()
    count = lengths[row].as_py()
    if tensor_shape is not None:
        shape = " x ".join(map(str, tensor_shape))
        needs = (
            f"the requested tensor shape ({shape}) needs exactly {target.list_size}; "
            "check the shape in schema=, or read it as a variable-length list (pa.list_(...))"
        )
    else:
        needs = (
            f"the requested type {target} needs exactly {target.list_size}; read it as a "
            "variable-length list (pa.list_(...)) instead"
        )
    raise SchemaError(
        f"feature {spec.feature_name!r} in {where}, record {first_record + row} holds "
        f"{count} value{'' if count == 1 else 's'}, but {needs}",
        feature=spec.name,
        path=where,
        record_index=first_record + row,
    )


def _flat_rows(array: pa.Array) -> pa.Array:
    """For each innermost value of ``array`` (lists flattened), the row holding it."""
    rows = None
    while is_list_type(array.type):
        parents = pc.list_parent_indices(array)
        rows = parents if rows is None else pc.take(rows, parents)
        array = array.flatten()
    return rows if rows is not None else pa.array(range(len(array)), pa.int64())


def _flat_values(array: pa.Array) -> pa.Array:
    while is_list_type(array.type):
        array = array.flatten()
    return array


def _check_exact(decoded: pa.Array, cast: pa.Array, spec: ColumnSpec, *, where: str, first_record: int) -> None:
    """Casts that Arrow may round (float to decimal or float16) must give back the
    decoded value exactly: the cast value converted back is compared with the original."""
    leaf = _leaf_type(spec.arrow_type)
    if not (pa.types.is_decimal(leaf) or pa.types.is_float16(leaf)):
        return
    original = _flat_values(decoded)
    back = pc.cast(_flat_values(cast), original.type, safe=False)
    if pa.types.is_decimal(leaf):
        back = decimal_to_float(_flat_values(cast), original.type)
    differs = pc.fill_null(pc.not_equal(back, original), False)
    if pa.types.is_float16(leaf):  # a NaN reads back as NaN, which compares unequal
        differs = pc.and_(differs, pc.invert(pc.fill_null(pc.and_(pc.is_nan(back), pc.is_nan(original)), False)))
    if not pc.any(differs).as_py():
        return
    i = pc.index(differs, True).as_py()
    row = _flat_rows(decoded)[i].as_py()
    if pa.types.is_decimal(leaf):
        how = (
            f"decimals read exactly: the float32 value must survive {leaf} and back; raise "
            "the scale, or read it as float32/float64"
        )
    else:
        how = "read it as float32 or float64"
    raise SchemaError(
        f"feature {spec.feature_name!r} in {where}, record {first_record + row} holds "
        f"{original[i].as_py()!r}, which {leaf} cannot hold exactly (it would read as "
        f"{_flat_values(cast)[i].as_py()}); {how}",
        feature=spec.name,
        path=where,
        record_index=first_record + row,
    )


def _as_null(decoded: pa.Array, spec: ColumnSpec, *, where: str, first_record: int) -> pa.Array:
    """A column of Arrow's ``null`` type: no record may hold the feature."""
    if decoded.null_count == len(decoded):
        return pa.nulls(len(decoded))
    row = pc.index(pc.is_valid(decoded), True).as_py()
    raise SchemaError(
        f"feature {spec.feature_name!r} in {where}, record {first_record + row} holds a value, but column "
        f"{spec.name!r} is of Arrow's null type (no record holds it); pass schema= with a type for it",
        feature=spec.name,
        path=where,
        record_index=first_record + row,
    )


def _check_not_null(array: pa.Array, spec: ColumnSpec, *, where: str, first_record: int) -> None:
    if spec.nullable or array.null_count == 0:
        return
    row = pc.index(pc.is_null(array), True).as_py()
    what = "feature list" if spec.location == codec.FEATURE_LISTS else "feature"
    raise SchemaError(
        f"{what} {spec.feature_name!r} has no value in {where}, record {first_record + row} "
        f"(missing, no kind set, or an empty list for a scalar), but column {spec.name!r} is "
        "not nullable in schema=; make the column nullable there (pa.field(..., nullable=True), "
        "no NOT NULL) or filter such records out of the files",
        feature=spec.name,
        path=where,
        record_index=first_record + row,
    )


def _read_tensor(
    decoded: pa.Array,
    spec: ColumnSpec,
    layout: tuple,
    *,
    where: str,
    first_record: int,
    offset_of: Callable[[int], int] | None = None,
) -> pa.Array:
    """A flat list column reshaped to the tensor type ``spec.arrow_type`` (row-major)."""
    shape, value_type = layout
    total = 1
    for size in shape:
        total *= size
    flat = spec._replace(arrow_type=pa.list_(value_type, total), nullable=True)
    _check_fixed_size(decoded, flat, where=where, first_record=first_record, tensor_shape=shape)
    storage = _cast(decoded, flat, where=where, first_record=first_record, offset_of=offset_of)
    target = spec.arrow_type
    if isinstance(target, pa.BaseExtensionType):
        return pa.ExtensionArray.from_storage(target, storage)
    values = storage.values.slice(storage.offset * total, len(storage) * total)
    for size in reversed(shape[1:]):
        values = pa.FixedSizeListArray.from_arrays(values, size)
    mask = storage.is_null() if storage.null_count else None
    return pa.FixedSizeListArray.from_arrays(values, shape[0], mask=mask).cast(target)


def cast_to_target(
    decoded: pa.Array,
    spec: ColumnSpec,
    *,
    where: str,
    first_record: int,
    offset_of: Callable[[int], int] | None = None,
) -> pa.Array:
    """Cast a decoded column to ``spec.arrow_type``: exact or a :class:`SchemaError`.

    Integers are range-checked, bytes UTF-8-checked; a float read as a decimal (or
    float16) must convert back to the same float32; a tensor type reshapes a flat list
    (row-major) after checking its value count; a non-nullable column must have a value
    in every record. ``where`` names the file for messages and ``first_record`` is the
    record index of row 0 in that file; ``offset_of`` gives the byte offset of a row's
    record, when known.

    Examples
    --------
    >>> import pyarrow as pa
    >>> from tfsql._codec import codec
    >>> spec = ColumnSpec("price", codec.FEATURES, codec.FLOAT, codec.SCALAR, pa.decimal128(10, 2))
    >>> cast_to_target(pa.array([2.5], pa.float32()), spec, where="f", first_record=0).to_pylist()
    [Decimal('2.50')]
    >>> spec = ColumnSpec("price", codec.FEATURES, codec.FLOAT, codec.SCALAR, pa.decimal128(10, 0))
    >>> cast_to_target(pa.array([2.5], pa.float32()), spec, where="f", first_record=0)
    Traceback (most recent call last):
    ...
    tfsql.errors.SchemaError: feature 'price' in f, record 0 holds 2.5, which decimal128(10, 0) cannot hold exactly (it would read as 2); decimals read exactly: the float32 value must survive decimal128(10, 0) and back; raise the scale, or read it as float32/float64
    """
    tensor = tensor_layout(spec.arrow_type)
    if tensor is not None:
        result = _read_tensor(decoded, spec, tensor, where=where, first_record=first_record, offset_of=offset_of)
    else:
        result = _cast(decoded, spec, where=where, first_record=first_record, offset_of=offset_of)
    _check_not_null(result, spec, where=where, first_record=first_record)
    return result


def _cast(
    decoded: pa.Array, spec: ColumnSpec, *, where: str, first_record: int, offset_of: Callable[[int], int] | None
) -> pa.Array:
    target = spec.arrow_type
    if decoded.type == target:
        return decoded
    if pa.types.is_null(target):
        return _as_null(decoded, spec, where=where, first_record=first_record)
    if pa.types.is_boolean(_leaf_type(target)):
        _check_bool(decoded, spec, where=where, first_record=first_record)
    _check_fixed_size(decoded, spec, where=where, first_record=first_record)
    try:
        cast = _safe_cast(decoded, target)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        if _is_binary(_leaf_type(decoded.type)) and _is_string(_leaf_type(target)):
            _check_utf8(decoded, spec, where=where, first_record=first_record, offset_of=offset_of)
        row = _first_failing_row(decoded, target)
        at = f", record {first_record + row}" if row is not None else ""
        raise SchemaError(
            f"feature {spec.name!r} in {where}{at} does not fit the requested type {target}: "
            f"{exc}; widen the type in schema= (decoded as {decoded.type})",
            feature=spec.name,
            path=where,
            record_index=None if row is None else first_record + row,
        ) from None
    _check_exact(decoded, cast, spec, where=where, first_record=first_record)
    return cast
