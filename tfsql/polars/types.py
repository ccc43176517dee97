"""Polars data types <-> Arrow types, for the TFRecord scan.

:func:`arrow_type` is the Arrow type tfsql decodes a column into when a user names a
Polars type (``schema=``, ``schema_overrides=``, ``hive_schema=``); :func:`polars_schema`
is the Polars schema a scan declares for the Arrow schema of a :class:`tfsql.Dataset`,
with the user's own Polars types (``pl.Categorical``, ``pl.Enum``...) winning;
:func:`to_frame` converts Arrow data to a DataFrame.

Examples
--------
>>> import polars as pl, pyarrow as pa
>>> arrow_schema({"id": pl.Int32, "emb": pl.Array(pl.Float32, 2)}, "schema")
id: int32
emb: fixed_size_list<item: float>[2]
  child 0, item: float
>>> polars_schema(pa.schema([("id", pa.int64()), ("s", pa.string())]), {"s": pl.Categorical()})
{'id': Int64, 's': Categorical}
"""

from __future__ import annotations

import functools
from typing import Any, Mapping, Union

import polars as pl
import pyarrow as pa

from tfsql.schema import decimal_to_float

__all__ = ["arrow_type", "arrow_schema", "frame_type", "polars_dtypes", "polars_schema", "to_frame", "SchemaLike"]

#: What ``schema=``, ``schema_overrides=`` and ``hive_schema=`` accept.
SchemaLike = Union[Mapping[str, Any], pl.Schema, pa.Schema]

_SIMPLE_TYPES: dict[Any, pa.DataType] = {
    pl.Boolean: pa.bool_(),
    pl.Int8: pa.int8(),
    pl.Int16: pa.int16(),
    pl.Int32: pa.int32(),
    pl.Int64: pa.int64(),
    pl.UInt8: pa.uint8(),
    pl.UInt16: pa.uint16(),
    pl.UInt32: pa.uint32(),
    pl.UInt64: pa.uint64(),
    pl.Float32: pa.float32(),
    pl.Float64: pa.float64(),
    pl.String: pa.string(),
    pl.Binary: pa.binary(),
    # read as strings; the batch is then cast to the Polars type
    pl.Categorical: pa.string(),
    pl.Enum: pa.string(),
}


def arrow_type(dtype: Any) -> pa.DataType:
    """The Arrow type tfsql decodes a column into for a Polars (or Arrow) type.

    ``pl.Array(inner, n)`` becomes a fixed-size list (the scanner checks that every
    record holds ``n`` values), ``pl.List`` a list, ``pl.String`` / ``pl.Categorical``
    / ``pl.Enum`` a string. Arrow types pass through.

    Examples
    --------
    >>> import polars as pl
    >>> arrow_type(pl.Array(pl.Float32, 3))
    FixedSizeListType(fixed_size_list<item: float>[3])
    >>> arrow_type(pl.List(pl.String))
    ListType(list<item: string>)
    """
    if isinstance(dtype, pa.DataType):
        return dtype
    if isinstance(dtype, type) and issubclass(dtype, pl.DataType):
        dtype = dtype()
    if not isinstance(dtype, pl.DataType):
        raise TypeError(f"expected a Polars or pyarrow data type, not {dtype!r}")
    if isinstance(dtype, pl.Array):
        return pa.list_(arrow_type(dtype.inner), dtype.size)
    if isinstance(dtype, pl.List):
        return pa.list_(arrow_type(dtype.inner))
    simple = _SIMPLE_TYPES.get(dtype.base_type())
    if simple is not None:
        return simple
    try:  # dates, times, durations, decimals: Polars' own Arrow export
        return pl.Series([], dtype=dtype).to_arrow().type
    except Exception:
        raise TypeError(f"Polars type {dtype} has no Arrow equivalent tfsql can read") from None


def arrow_schema(schema: Any, what: str) -> pa.Schema | None:
    """A pa.Schema from a Polars schema, a pa.Schema or a dict of Polars/Arrow types."""
    if schema is None or isinstance(schema, pa.Schema):
        return schema
    if isinstance(schema, (pl.Schema, Mapping)):
        return pa.schema([pa.field(name, arrow_type(dtype)) for name, dtype in schema.items()])
    raise TypeError(
        f"{what} must be a dict of name -> Polars or pyarrow type, a pl.Schema or a pa.Schema, "
        f"not {type(schema).__name__}"
    )


def polars_dtypes(schema: Any) -> dict[str, pl.DataType]:
    """The Polars types a user named in a schema (classes instantiated)."""
    if not isinstance(schema, (pl.Schema, Mapping)):
        return {}
    out = {}
    for name, dtype in schema.items():
        if isinstance(dtype, type) and issubclass(dtype, pl.DataType):
            dtype = dtype()
        if isinstance(dtype, pl.DataType):
            out[name] = dtype
    return out


def polars_schema(schema: pa.Schema, overrides: Mapping[str, pl.DataType]) -> dict[str, pl.DataType]:
    """The Polars types of Arrow ``schema``'s columns (user-given Polars types win), as
    the name -> type mapping ``register_io_source`` takes (no ``pl.Schema``: building one
    checks every column's type again); each distinct Arrow type converted once, by
    :func:`frame_type` (a record with a million features has a million columns of a few
    types).

    Examples
    --------
    >>> polars_schema(pa.schema({"a": pa.int64(), "b": pa.list_(pa.string()), "c": pa.int64()}), {"c": pl.UInt8})
    {'a': Int64, 'b': List(String), 'c': UInt8}
    """
    types = dict(zip(schema.names, map(frame_type, schema.types)))
    if overrides:
        types.update((name, dtype) for name, dtype in overrides.items() if name in types)
    return types


@functools.lru_cache(maxsize=1024)
def frame_type(arrow: pa.DataType) -> pl.DataType:
    """The Polars type of an Arrow column in a frame :func:`to_frame` makes (or Polars
    imports through the Arrow PyCapsule interface); one object per Arrow type (cached), so
    schemas made of them compare by identity.

    Examples
    --------
    >>> frame_type(pa.list_(pa.string())), frame_type(pa.int64()) is frame_type(pa.int64())
    (List(String), True)
    """
    return to_frame(pa.schema([("_", arrow)]).empty_table()).schema["_"]


def to_frame(data: pa.Table | pa.RecordBatch, *, rechunk: bool = True) -> pl.DataFrame:
    """``pl.from_arrow`` of a table or batch (always a DataFrame; typed as one); a decimal
    wider than Polars' 38 digits (a column description can give one) as the nearest
    Float64, as DuckDB and Spark read it (docs/format.md, section 10)."""
    wide = [i for i, t in enumerate(data.schema.types) if pa.types.is_decimal(t) and t.precision > 38]
    for i in wide:
        column = data.column(i)
        if isinstance(column, pa.ChunkedArray):
            column = column.combine_chunks()
        data = data.set_column(i, data.schema.field(i).with_type(pa.float64()), decimal_to_float(column, pa.float64()))
    frame = pl.from_arrow(data, rechunk=rechunk)
    assert isinstance(frame, pl.DataFrame)
    return frame
