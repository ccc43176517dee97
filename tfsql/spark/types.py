"""Spark <-> Arrow types of the Spark data source: which Arrow type a Spark read schema
column decodes into, and which Spark type an inferred (or partition) Arrow column gets.

The feature-level rules (what a float_list may be read as, exact decimals, feature
lists) are tfsql's (docs/format.md); this module only names each Spark type's Arrow
counterpart and the other way round.

Examples
--------
>>> import pyarrow as pa
>>> from pyspark.sql.types import ArrayType, LongType
>>> spark_to_arrow(ArrayType(LongType()))
ListType(list<item: int64>)
>>> spark_schema(pa.schema([("id", pa.int64())])).simpleString()
'struct<id:bigint>'
"""

from __future__ import annotations

import pyarrow as pa
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    ByteType,
    DataType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    ShortType,
    StringType,
    StructField,
    StructType,
    TimestampNTZType,
    TimestampType,
)

__all__ = ["spark_to_arrow", "arrow_to_spark", "spark_schema"]

_SPARK_TO_ARROW = {
    LongType: pa.int64(),
    IntegerType: pa.int32(),
    ShortType: pa.int16(),
    ByteType: pa.int8(),
    BooleanType: pa.bool_(),
    FloatType: pa.float32(),
    DoubleType: pa.float64(),
    StringType: pa.string(),
    BinaryType: pa.binary(),
    DateType: pa.date32(),  # the stored integer, as tfsql writes them (docs/format.md)
    TimestampType: pa.timestamp("us", tz="UTC"),
    TimestampNTZType: pa.timestamp("us"),
}

_READABLE = (
    "long, int, short, byte, boolean, float, double, decimal, string, binary, date, timestamp, "
    "timestamp_ntz, or arrays of them"
)


def spark_to_arrow(data_type: DataType, *, column: str = "?") -> pa.DataType:
    """The Arrow type tfsql decodes a feature into for a Spark column type.

    ``ArrayType(ArrayType(T))`` reads a SequenceExample feature list; ``DecimalType``
    reads a float_list when every value converts exactly (else a clear error).

    Examples
    --------
    >>> from pyspark.sql.types import ArrayType, FloatType
    >>> spark_to_arrow(ArrayType(FloatType()))
    ListType(list<item: float>)
    """
    if isinstance(data_type, ArrayType):
        return pa.list_(spark_to_arrow(data_type.elementType, column=column))
    if isinstance(data_type, DecimalType):  # from float_list, exact or an error (docs/format.md)
        return pa.decimal128(data_type.precision, data_type.scale)
    for spark_type, arrow_type in _SPARK_TO_ARROW.items():
        if isinstance(data_type, spark_type):
            return arrow_type
    raise ValueError(
        f"column {column!r} has Spark type {data_type.simpleString()}, which TFRecord features "
        f"cannot be read as; use {_READABLE}"
    )


def arrow_to_spark(arrow_type: pa.DataType, *, column: str = "?") -> DataType:
    """The Spark type of an Arrow column tfsql reads (inferred or partition columns).

    Examples
    --------
    >>> import pyarrow as pa
    >>> arrow_to_spark(pa.list_(pa.list_(pa.float32())))
    ArrayType(ArrayType(FloatType(), True), True)
    """
    t = arrow_type
    if isinstance(t, pa.FixedShapeTensorType):  # a described tensor: its values, flat
        return ArrayType(arrow_to_spark(t.value_type, column=column), containsNull=True)
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return ArrayType(arrow_to_spark(t.value_type, column=column), containsNull=True)
    nearest = _nearest_spark_type(t)
    if nearest is not None:
        return nearest
    simple = {
        pa.uint8(): ShortType(),  # a described unsigned column: the next wider signed type
        pa.uint16(): IntegerType(),
        pa.uint32(): LongType(),
        pa.uint64(): LongType(),  # tfsql writes uint64 values up to 2^63-1
        pa.float16(): FloatType(),
        pa.int64(): LongType(),
        pa.int32(): IntegerType(),
        pa.int16(): ShortType(),
        pa.int8(): ByteType(),
        pa.bool_(): BooleanType(),
        pa.float32(): FloatType(),
        pa.float64(): DoubleType(),
        pa.string(): StringType(),
        pa.large_string(): StringType(),
        pa.binary(): BinaryType(),
        pa.large_binary(): BinaryType(),
    }
    if t in simple:
        return simple[t]
    from pyspark.sql.pandas.types import from_arrow_type

    try:
        return from_arrow_type(t)
    except Exception as exc:
        raise ValueError(f"column {column!r} has Arrow type {t}, which Spark cannot hold: {exc}") from None


def _nearest_spark_type(t: pa.DataType) -> DataType | None:
    """The Spark type a described type Spark lacks reads as, exactly (docs/format.md,
    section 10): date64 as a date (whole days), a nanosecond timestamp as its bigint
    nanoseconds (Spark's timestamps hold microseconds; its Parquet reader's
    ``nanosAsLong``), a time as Spark's TIME where PySpark has it, a decimal wider than
    Spark's 38 digits as a double (as DuckDB reads one). None for the other types."""
    if pa.types.is_date64(t):
        return DateType()
    if pa.types.is_timestamp(t) and t.unit == "ns":
        return LongType()
    if pa.types.is_decimal(t) and t.precision > 38:
        return DoubleType()
    if pa.types.is_time(t):
        try:
            from pyspark.sql.types import TimeType  # PySpark 4.1+
        except ImportError:
            return None
        return TimeType(6)
    return None


def spark_schema(schema: pa.Schema) -> StructType:
    """The Spark schema of an Arrow schema tfsql reads (every column nullable)."""
    return StructType([StructField(f.name, arrow_to_spark(f.type, column=f.name), True) for f in schema])
