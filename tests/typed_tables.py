"""A table of every Arrow type the README's writing table lists (tests of the column
description, `tfsql.description`: tests/integration/test_round_trip_types.py and the
Spark tests)."""

from __future__ import annotations

import datetime
import decimal

import numpy as np
import pyarrow as pa

ROWS = 3


def full_table(rows: int = ROWS) -> pa.Table:
    """One column of each type the README's writing table lists, with a null in most;
    values every type stores exactly (float64 and decimals that float32 holds)."""
    tensor = pa.FixedShapeTensorArray.from_numpy_ndarray(np.arange(12, dtype=np.float32).reshape(3, 2, 2))
    day = datetime.date(2024, 2, 29)
    columns = {
        "b": pa.array([True, None, False], pa.bool_()),
        "i8": pa.array([-128, None, 127], pa.int8()),
        "i16": pa.array([-32768, 7, None], pa.int16()),
        "i32": pa.array([None, -(2**31), 2**31 - 1], pa.int32()),
        "i64": pa.array([-(2**63), 0, 2**63 - 1], pa.int64()),
        "u8": pa.array([0, 255, None], pa.uint8()),
        "u16": pa.array([65535, None, 1], pa.uint16()),
        "u32": pa.array([2**32 - 1, 0, None], pa.uint32()),
        "u64": pa.array([2**63 - 1, None, 5], pa.uint64()),
        "f16": pa.array([np.float16(0.5), None, np.float16(-2.0)], pa.float16()),
        "f32": pa.array([1.5, None, -0.25], pa.float32()),
        "f64": pa.array([0.125, -3.5, None], pa.float64()),
        "dec": pa.array([decimal.Decimal("12.25"), None, decimal.Decimal("-0.50")], pa.decimal128(10, 2)),
        "dec256": pa.array([decimal.Decimal("1.5"), decimal.Decimal("-2.0"), None], pa.decimal256(40, 1)),
        "s": pa.array(["a", None, "ünïcode"], pa.string()),
        "ls": pa.array(["x", "", None], pa.large_string()),
        "sv": pa.array([None, "view", "v"], pa.string_view()),
        "bin": pa.array([b"\x00\xff", None, b""], pa.binary()),
        "lbin": pa.array([b"L", b"", None], pa.large_binary()),
        "bv": pa.array([b"v", None, b"w"], pa.binary_view()),
        "fsb": pa.array([b"abc", None, b"xyz"], pa.binary(3)),
        "d32": pa.array([day, None, datetime.date(1969, 12, 31)], pa.date32()),
        "d64": pa.array([datetime.date(2000, 1, 1), datetime.date(1970, 1, 1), None], pa.date64()),
        "ts_s": pa.array([0, None, 1_700_000_000], pa.timestamp("s")),
        "ts_ms": pa.array([1_700_000_000_123, -1, None], pa.timestamp("ms")),
        "ts_us": pa.array([None, 1_700_000_000_123_456, 0], pa.timestamp("us")),
        "ts_ns": pa.array([1_700_000_000_123_456_789, None, -5], pa.timestamp("ns")),
        "ts_utc": pa.array([1_700_000_000_000_001, None, 2], pa.timestamp("us", tz="UTC")),
        "ts_tz": pa.array([None, 86_400_000, 3], pa.timestamp("ms", tz="Europe/Paris")),
        "t32": pa.array([1000, None, 86_399_999], pa.time32("ms")),
        "t64": pa.array([None, 1, 86_399_999_999], pa.time64("us")),
        "dur": pa.array([-7, None, 3_600_000_000], pa.duration("us")),
        "l64": pa.array([[1, 2], [], None], pa.list_(pa.int64())),
        "lf32": pa.array([None, [0.5], [1.0, -1.0]], pa.large_list(pa.float32())),
        "lstr": pa.array([["a", "b"], None, []], pa.list_(pa.string())),
        "lu8": pa.array([[255], [0, 1], None], pa.list_(pa.uint8())),
        "fsl": pa.array([[1, 2], None, [3, 4]], pa.list_(pa.int16(), 2)),
        "tensor": tensor,
        "fsl2": pa.array([[[1, 2], [3, 4]], [[5, 6], [7, 8]], None], pa.list_(pa.list_(pa.int64(), 2), 2)),
        "dict": pa.array(["red", None, "red"]).dictionary_encode(),
        "all_null": pa.nulls(ROWS, pa.int32()),
        "nothing": pa.nulls(ROWS),
    }
    table = pa.table(columns)
    return table.slice(0, rows)


def as_read(table: pa.Table) -> pa.Table:
    """`table` as it reads back: views as the offset types the writer stores (large),
    dictionaries as their values (a column of Arrow's ``null`` type is in no record and
    described as ``null``: it reads back as written)."""
    fields, arrays = [], []
    for field, column in zip(table.schema, table.columns):
        t = field.type
        if isinstance(t, pa.DictionaryType):
            t = t.value_type
        t = {pa.string_view(): pa.large_string(), pa.binary_view(): pa.large_binary()}.get(t, t)
        fields.append(pa.field(field.name, t))
        arrays.append(column.cast(t) if t != field.type else column)
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields))


#: The DuckDB columns of a native COPY (the row STRUCT's fields): every DuckDB type the
#: extension writes, with the Arrow type the description gives it.
DUCKDB_COLUMNS = {
    "b": ("BOOLEAN", "[true, NULL, false]"),
    "i8": ("TINYINT", "[-128, NULL, 127]"),
    "i16": ("SMALLINT", "[-32768, 7, NULL]"),
    "i32": ("INTEGER", "[NULL, -2147483648, 2147483647]"),
    "i64": ("BIGINT", "[-9223372036854775808, 0, 9223372036854775807]"),
    "u8": ("UTINYINT", "[0, 255, NULL]"),
    "u16": ("USMALLINT", "[65535, NULL, 1]"),
    "u32": ("UINTEGER", "[4294967295, 0, NULL]"),
    "u64": ("UBIGINT", "[9223372036854775807, NULL, 5]"),
    "f32": ("FLOAT", "[1.5, NULL, -0.25]"),
    "f64": ("DOUBLE", "[0.125, -3.5, NULL]"),
    "s": ("VARCHAR", "['a', NULL, 'ünïcode']"),
    "bin": ("BLOB", "['\\x00\\xFF'::BLOB, NULL, ''::BLOB]"),
    "d": ("DATE", "[DATE '2024-02-29', NULL, DATE '1969-12-31']"),
    "ts": ("TIMESTAMP", "[TIMESTAMP '2023-11-14 22:13:20.123456', NULL, TIMESTAMP '1970-01-01']"),
    "ts_s": ("TIMESTAMP_S", "[TIMESTAMP_S '2023-11-14 22:13:20', NULL, TIMESTAMP_S '1970-01-01']"),
    "ts_ms": ("TIMESTAMP_MS", "[NULL, TIMESTAMP_MS '2023-11-14 22:13:20.123', TIMESTAMP_MS '1970-01-01']"),
    "ts_ns": ("TIMESTAMP_NS", "[TIMESTAMP_NS '2023-11-14 22:13:20.123456789', NULL, TIMESTAMP_NS '1970-01-01']"),
    "tstz": (
        "TIMESTAMPTZ",
        "[TIMESTAMPTZ '2023-11-14 22:13:20.000001+00', NULL, TIMESTAMPTZ '1970-01-01 00:00:00+00']",
    ),
    "t": ("TIME", "[TIME '00:00:01', NULL, TIME '23:59:59.999999']"),
    "l": ("BIGINT[]", "[[1, 2], [], NULL]"),
    "ls": ("VARCHAR[]", "[['a', 'b'], NULL, []]"),
    "arr": ("INTEGER[2]", "[[1, 2], NULL, [3, 4]]"),
    # decimals: each storage width (int16, int32, int64, hugeint), 38 digits, negatives,
    # lists; values float32 holds exactly (docs/format.md, section 8)
    "dec4": ("DECIMAL(4,2)", "[-0.05, 99.99, NULL]"),
    "dec": ("DECIMAL(9,2)", "[12.34, NULL, -1234.5]"),
    "dec18": ("DECIMAL(18,6)", "[NULL, 0.000001, -123456.5]"),
    "dec38": ("DECIMAL(38,0)", "['-1329227995784915872903807060280344576', '0', NULL]"),
    "dec38s": ("DECIMAL(38,37)", "[0.5, NULL, -0.25]"),
    "ldec": ("DECIMAL(6,2)[]", "[[1.5, -2.25], [], NULL]"),
    "all_null": ("INTEGER", "[NULL, NULL, NULL]"),
}
