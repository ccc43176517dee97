"""Every writer's output read by every reader (issue 33, "Done when": one table holding
every Arrow type the README lists, plus 0-row and all-null cases, through each writer
and each reader with identical schema and values).

Writers: `tfsql.write_tfrecord`, Polars (``df.tfrecord.write``), the ``tfsql`` command
(``convert`` from Parquet) and DuckDB's native ``COPY ... (FORMAT tfrecord)`` on both
extension builds (Spark's writer and reader: tests/integration/test_spark.py,
``test_spark_*``). Readers: `tfsql.read_tfrecord` (the writer's Arrow types, exactly),
``pl.read_tfrecord`` / ``pl.scan_tfrecord``, plain DuckDB with the extension loaded
(both builds) and ``tfsql convert`` to Parquet. A reader whose engine lacks a type gives
what that engine itself makes of the Arrow column (Polars: ``pl.from_arrow``; DuckDB:
its Arrow scan), except where DuckDB takes no such Arrow column, stated in
`DUCKDB_NEAREST`: float16 as FLOAT and a decimal over 38 digits as the DOUBLE nearest
its value (as DuckDB reads such a Parquet column).
"""

from __future__ import annotations

import decimal
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import duckdb
import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

import tfsql
from tfsql import description
from tfsql.duckdb.extension import extension_available
from tfsql.encoding import RecordEncoder
from tfsql.schema import decimal_to_float
from round_trip_readers import (
    NEEDS_TF_PYTHON,
    TF_PYTHON,
    assert_same,
    check_cli,
    check_duckdb,
    check_polars,
    plain_duckdb,
    sql_result,
)
from typed_tables import DUCKDB_COLUMNS, ROWS, as_read, full_table

needs_extension = pytest.mark.skipif(not extension_available(), reason="the DuckDB extension is not built")


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.lstrip("v").split("-")[0].split(".")[:3])


needs_copy = pytest.mark.skipif(
    not extension_available() or _version(duckdb.__version__) < (1, 5, 6), reason="native COPY needs DuckDB >= 1.5.6"
)


# --------------------------------------------------------------------------------------
# writers: each returns what it wrote, as the Python reader must give it back
# --------------------------------------------------------------------------------------


def write_python(rows: int, target: Path) -> pa.Table:
    table = full_table(rows)
    tfsql.write_tfrecord(table, target)
    return as_read(table)


#: Polars has no float16, decimal256, time32, fixed-size binary, fixed-shape tensor,
#: view or date64 type of its own, nor seconds / milliseconds timestamps.
POLARS_LACKS = ["f16", "dec256", "fsb", "t32", "tensor", "sv", "bv", "ts_s", "ts_ms", "d64", "lf32"]


def write_polars(rows: int, target: Path) -> pa.Table:
    df = pl.from_arrow(full_table(rows).drop_columns(POLARS_LACKS))
    assert isinstance(df, pl.DataFrame)
    df.tfrecord.write(target)
    return as_read(df.to_arrow())


def write_cli(rows: int, target: Path) -> pa.Table:
    """``tfsql convert`` from Parquet: what it reads back from the Parquet file (Parquet
    stores date64 as date32 and has no view type) is what the command was given."""
    source = target.parent / (target.name + ".parquet")
    pq.write_table(full_table(rows), source)
    done = subprocess.run(
        [sys.executable, "-m", "tfsql", "convert", str(source), str(target) + "/"], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return as_read(pq.read_table(source))


WRITERS = {"write_tfrecord": write_python, "polars": write_polars, "cli": write_cli}


@pytest.mark.parametrize("rows", [ROWS, 0], ids=["rows", "empty"])
@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_every_writer_reads_back_through_every_reader(tmp_path, writer, rows, duckdb_api):
    target = tmp_path / "out"
    want = WRITERS[writer](rows, target)
    table = tfsql.read_tfrecord(target)
    assert_same(table, want)
    assert tfsql.dataset(target).count_rows() == rows
    check_polars(target, table)
    check_cli(target, table, tmp_path)
    if extension_available():
        check_duckdb(target, table)


def test_the_full_table_holds_every_listed_type_and_the_null_cases():
    """The table the matrix writes: a column of each type the README's writing table
    lists, an all-null column of a type and a column of Arrow's null type."""
    table = full_table()
    assert table.column("all_null").null_count == ROWS and table.schema.field("all_null").type == pa.int32()
    assert table.schema.field("nothing").type == pa.null()
    types = set(table.schema.types)
    assert {pa.float16(), pa.decimal256(40, 1), pa.date64(), pa.binary_view(), pa.time32("ms")} <= types


# --------------------------------------------------------------------------------------
# DuckDB's native COPY, both builds
# --------------------------------------------------------------------------------------

ROW = "{" + ", ".join(f"'{name}': {name}" for name in DUCKDB_COLUMNS) + "}"


@needs_copy
@pytest.mark.parametrize("rows", [ROWS, 0], ids=["rows", "empty"])
def test_a_native_copy_reads_back_through_every_reader(tmp_path, rows, duckdb_api):
    con = plain_duckdb()
    selects = ", ".join(f"CAST(({values})[i + 1] AS {t}) AS {name}" for name, (t, values) in DUCKDB_COLUMNS.items())
    con.execute(f"CREATE TABLE src AS SELECT {selects}, i % 2 AS part FROM range({rows}) r(i)")
    target = tmp_path / "out"
    con.execute(f"COPY (SELECT {ROW} AS row, part FROM src) TO '{target}' (FORMAT tfrecord, PARTITION_BY (part))")
    if rows == 0:
        # DuckDB calls a COPY function for no file when no row comes (as its Parquet COPY
        # leaves an empty directory): no file, no description (docs/format.md, section 10)
        assert target.is_dir() and list(target.iterdir()) == []
        return
    want = sql_result(con.sql("SELECT * FROM src ORDER BY part, i64"))
    reader = plain_duckdb()
    assert sql_result(reader.sql(f"SELECT * FROM tfrecord_scan('{target}') ORDER BY part, i64")) == want
    table = tfsql.read_tfrecord(target).sort_by([("part", "ascending"), ("i64", "ascending")])
    assert table.schema.names == [*DUCKDB_COLUMNS, "part"]
    exported = con.sql("SELECT * FROM src ORDER BY part, i64").arrow()
    exported = exported.read_all() if isinstance(exported, pa.RecordBatchReader) else exported
    for name in table.schema.names:  # DuckDB's Arrow export: its types, and the same values
        got, given = table.column(name).combine_chunks(), exported.column(name).combine_chunks()
        assert got.cast(given.type).equals(given), name
    assert table.schema.field("u16").type == pa.uint16() and table.schema.field("arr").type == pa.list_(pa.int32(), 2)
    check_polars(target, table)
    check_cli(target, table, tmp_path)


@needs_copy
def test_a_native_copy_of_no_rows_to_one_file_reads_back_as_no_rows(tmp_path, duckdb_api):
    """A single-file target (no PARTITION_BY): DuckDB opens it for no row too, so it holds
    an empty TFRecord file, which reads as 0 rows (a file has no description)."""
    con = plain_duckdb()
    target = tmp_path / "none.tfrecord"
    con.execute(f"COPY (SELECT {{'x': 1}} AS row WHERE false) TO '{target}' (FORMAT tfrecord)")
    assert target.stat().st_size == 0
    assert tfsql.dataset(target).count_rows() == 0
    assert con.sql(f"SELECT count(*) FROM tfrecord_scan('{target}')").fetchall() == [(0,)]


# --------------------------------------------------------------------------------------
# decimals in plain DuckDB: exactly the Python reader's values, or its refusal
# --------------------------------------------------------------------------------------


def _python_writes(values: pa.Array) -> tuple[pa.Array, np.ndarray]:
    """The float32 write_tfrecord writes for each decimal, and which it writes (the
    others it refuses): docs/format.md section 8, as tfsql.feature_buffers applies it."""
    encoder = RecordEncoder(pa.schema([("x", values.type)]))
    ok = []
    for i in range(len(values)):
        try:
            encoder.encode(pa.record_batch([values.slice(i, 1)], names=["x"]))
            ok.append(True)
        except tfsql.SchemaError:
            ok.append(False)
    return decimal_to_float(values), np.array(ok)


@needs_copy
@pytest.mark.parametrize("precision,scale", [(38, 37), (38, 0), (20, 3), (18, 9), (9, 4), (4, 2)])
def test_a_native_copy_writes_a_decimal_as_write_tfrecord_does(tmp_path, precision, scale, duckdb_api):
    """Decimals from random float32 bit patterns and few-digit ones, in each storage width
    DuckDB gives DECIMAL(p, s): the native COPY writes the float32 write_tfrecord writes
    for every value it writes, and refuses the values it refuses."""
    rng = np.random.default_rng(precision * 100 + scale)
    t = pa.decimal128(precision, scale)
    floats = rng.integers(0, 2**32, 300, dtype=np.uint64).astype(np.uint32).view(np.float32)
    floats = floats[np.isfinite(floats) & (np.abs(floats) < 10.0 ** (precision - scale) / 2)]
    units = rng.integers(-(10 ** min(precision, 9)), 10 ** min(precision, 9), 200)
    few = [decimal.Decimal(int(u)).scaleb(-scale) for u in units]
    values = pa.concat_arrays([pc.cast(pa.array(floats, pa.float32()), t, safe=False), pa.array(few, t)])
    want, ok = _python_writes(values)
    assert ok.sum() > 100 and (~ok).sum() > 0 or precision == 4
    con = plain_duckdb()
    con.register("src", pa.table({"x": values.filter(pa.array(ok))}))
    con.execute(f"COPY (SELECT {{'x': x}} AS row FROM src) TO '{tmp_path / 'ok.tfrecord'}' (FORMAT tfrecord)")
    got = tfsql.read_tfrecord(tmp_path / "ok.tfrecord").column("x").combine_chunks()  # a file: no description
    assert got.type == pa.float32() and got.equals(want.filter(pa.array(ok)))
    refused = values.filter(pa.array(~ok))
    for i in range(min(len(refused), 10)):
        con.register("one", pa.table({"x": refused.slice(i, 1)}))
        text = format(refused[i].as_py(), "f")
        with pytest.raises(duckdb.InvalidInputException, match=rf"holds the decimal {text}, which a float_list"):
            con.execute(f"COPY (SELECT {{'x': x}} AS row FROM one) TO '{tmp_path / 'bad.tfrecord'}' (FORMAT tfrecord)")
    assert not (tmp_path / "bad.tfrecord").exists()


@needs_copy
def test_a_native_copy_of_decimal_lists_of_lists_reads_back_as_those_decimals(tmp_path, duckdb_api):
    con = plain_duckdb()
    con.execute(
        "CREATE TABLE src AS SELECT * FROM (VALUES (0, [[0.1, -2.5], []]::DECIMAL(3,1)[][]), (1, NULL), (2, []))"
        " t(k, ll)"
    )
    target = tmp_path / "out"
    con.execute(
        f"COPY (SELECT {{'k': k, 'll': ll}} AS row, k % 2 AS part FROM src) TO '{target}' "
        "(FORMAT tfrecord, PARTITION_BY (part), RECORD_TYPE sequence_example)"
    )
    table = tfsql.read_tfrecord(target, record_type="sequence_example").sort_by("k")
    assert table.schema.field("ll").type == pa.list_(pa.list_(pa.decimal128(3, 1)))
    d = decimal.Decimal
    # a NULL stays missing, an empty list of lists empty
    assert table.column("ll").to_pylist() == [[[d("0.1"), d("-2.5")], []], None, []]
    query = f"SELECT k, ll FROM tfrecord_scan('{target}', record_type := 'sequence_example') ORDER BY k"
    assert con.sql(query).fetchall() == [(0, [[d("0.1"), d("-2.5")], []]), (1, None), (2, [])]


@needs_copy
def test_a_table_with_decimals_round_trips_through_native_copy_to_and_from(tmp_path, duckdb_api):
    """COPY ... TO writes the decimals and their types; COPY ... FROM takes each column the
    scan gives in the table's very type as it is, and refuses another width, scale or
    unit (copied as it lies, it would misread every value) at bind."""
    con = plain_duckdb()
    con.execute(
        "CREATE TABLE t AS SELECT * FROM (VALUES (12.34::DECIMAL(10,2), -0.05::DECIMAL(4,2), "
        "'-1329227995784915872903807060280344576'::DECIMAL(38,0), [1.5, -2.25]::DECIMAL(6,2)[], "
        "TIMESTAMP_S '2023-11-14 22:13:20', 0), (NULL, 99.99, 0, [], NULL, 1)) v(d, small, huge, l, ts, part)"
    )
    target = tmp_path / "out"
    con.execute(
        f"COPY (SELECT {{'d': d, 'small': small, 'huge': huge, 'l': l, 'ts': ts}} AS row, part FROM t) "
        f"TO '{target}' (FORMAT tfrecord, PARTITION_BY (part))"
    )
    con.execute("CREATE TABLE back AS SELECT * FROM t LIMIT 0")
    con.execute(f"COPY back FROM '{target}' (FORMAT tfrecord)")
    assert con.sql("SELECT * FROM back ORDER BY part").fetchall() == con.sql("SELECT * FROM t ORDER BY part").fetchall()
    for column, other in [("d", "DECIMAL(12,3)"), ("ts", "TIMESTAMP")]:
        con.execute(f"CREATE OR REPLACE TABLE wider AS SELECT * REPLACE ({column}::{other} AS {column}) FROM t LIMIT 0")
        with pytest.raises(
            duckdb.BinderException, match=rf'column \d "{column}" is .*, which does not cast to {re.escape(other)}'
        ):
            con.execute(f"COPY wider FROM '{target}' (FORMAT tfrecord)")
    assert con.sql("SELECT count(*) FROM back").fetchall() == [(2,)]  # the connection still works


@needs_copy
def test_a_native_copy_refuses_a_decimal_float32_cannot_hold(tmp_path, duckdb_api):
    """The refusal names the column, the row, the value, what it would read back as and
    the fix in SQL's words, as write_tfrecord's does in Python's; nothing is left."""
    con = plain_duckdb()
    target = tmp_path / "bad.tfrecord"
    rows = "SELECT {'price': price} AS row FROM (VALUES (12.34), (NULL), (123456789.12)) t(price)"
    with pytest.raises(duckdb.InvalidInputException) as refused:
        con.execute(f"COPY (SELECT row::STRUCT(price DECIMAL(11,2)) FROM ({rows})) TO '{target}' (FORMAT tfrecord)")
    assert str(refused.value) == (
        'Invalid Input Error: column "price" row 2 of this chunk holds the decimal 123456789.12, which a '
        "float_list (float32) cannot store exactly (it would read back as 123456792); decimals are written "
        "only when exact: CAST the column to VARCHAR in the query to keep every digit (a bytes_list), or to "
        "DOUBLE to accept float32 rounding"
    )
    assert list(tmp_path.iterdir()) == []
    python = pa.table({"price": pa.array([decimal.Decimal("123456789.12")], pa.decimal128(11, 2))})
    with pytest.raises(tfsql.SchemaError, match=r"holds the decimal 123456789\.12, which a float_list \(float32\)"):
        tfsql.write_tfrecord(python, tmp_path / "py")
    # the fixes the message names
    con.execute(f"COPY (SELECT {{'price': 123456789.12::DECIMAL(11,2)::VARCHAR}}) TO '{target}' (FORMAT tfrecord)")
    assert tfsql.read_tfrecord(target).column(0).to_pylist() == ["123456789.12"]


def _described(tmp_path: Path, floats: np.ndarray, t: pa.DataType) -> Path:
    """A directory of float32 values whose description says `t`."""
    target = tmp_path / f"d{len(list(tmp_path.iterdir()))}"
    tfsql.write_tfrecord(pa.table({"x": pa.array(floats, pa.float32())}), target)
    (target / description.NAME).write_bytes(description.render(pa.schema([("x", t)])))
    return target


def _arrow_decimals(floats: np.ndarray, t: pa.DataType) -> tuple[np.ndarray, list]:
    """Which floats the Python reader reads as `t` (Arrow's cast, then back to the same
    float32), and their decimals."""
    values = pa.array(floats, pa.float32())
    cast = pc.cast(values, t, safe=False)
    back = decimal_to_float(cast, pa.float32())
    ok = pc.fill_null(pc.equal(back, values), False).to_numpy(zero_copy_only=False)
    return ok, cast.filter(pa.array(ok)).to_pylist()


@needs_extension
@pytest.mark.parametrize("precision,scale", [(38, 38), (38, 20), (38, 0), (18, 9), (9, 4), (4, 2), (10, 2)])
def test_duckdb_reads_a_described_decimal_as_the_python_reader_does(tmp_path, precision, scale, duckdb_api):
    """Random float32 bit patterns and few-digit decimals: plain DuckDB gives the
    DECIMAL(p, s) value Arrow's cast gives wherever it converts back exactly, and refuses
    the others (out_of_range, naming the float and the column's type)."""
    rng = np.random.default_rng(precision * 100 + scale)
    t = pa.decimal128(precision, scale)
    floats = rng.integers(0, 2**32, 4000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    floats = floats[np.isfinite(floats) & (np.abs(floats) < 10.0 ** (precision - scale) / 2)]
    units = rng.integers(-(10 ** min(precision, 7)), 10 ** min(precision, 7), 1000)
    few = pa.array([decimal.Decimal(int(u)).scaleb(-scale) for u in units], t)
    floats = np.concatenate([floats, decimal_to_float(few).to_numpy()]).astype(np.float32)
    ok, decimals = _arrow_decimals(floats, t)
    assert len(decimals) > 500
    target = _described(tmp_path, floats[ok], t)
    con = plain_duckdb()  # kept open: duckdb 1.4 closes a dropped connection
    rel = con.sql(f"SELECT x FROM tfrecord_scan('{target}')")
    assert [str(x) for x in rel.types] == [f"DECIMAL({precision},{scale})"]
    assert [x for (x,) in rel.fetchall()] == decimals == tfsql.read_tfrecord(target).column("x").to_pylist()
    for value in floats[~ok][:5]:
        refused = _described(tmp_path, np.array([value]), t)
        with pytest.raises(duckdb.Error, match=rf"holds the float32 .* \(DECIMAL\({precision},{scale}\), as"):
            con = plain_duckdb()  # kept open: duckdb 1.4 closes a dropped connection
            con.sql(f"SELECT x FROM tfrecord_scan('{refused}')").fetchall()
        with pytest.raises(tfsql.SchemaError, match="cannot hold exactly"):
            tfsql.read_tfrecord(refused)


@needs_extension
def test_duckdb_reads_a_decimal_over_38_digits_as_the_double_nearest_its_value(tmp_path, duckdb_api):
    t = pa.decimal256(50, 2)
    decimals = [decimal.Decimal("0.10"), decimal.Decimal(-1234567), decimal.Decimal(2**100), None]
    target = tmp_path / "wide"
    tfsql.write_tfrecord(pa.table({"x": pa.array(decimals, t)}), target)
    con = plain_duckdb()  # kept open: duckdb 1.4 closes a dropped connection
    rel = con.sql(f"SELECT x FROM tfrecord_scan('{target}')")
    assert [str(x) for x in rel.types] == ["DOUBLE"]
    assert [x for (x,) in rel.fetchall()] == [0.1, -1234567.0, float(2**100), None]
    if _version(duckdb.__version__) >= (2, 0):  # as DuckDB reads Parquet's (1.4 and 1.5.6 misread it)
        pq.write_table(tfsql.read_tfrecord(target), tmp_path / "wide.parquet")
        assert duckdb.sql(f"SELECT x FROM '{tmp_path / 'wide.parquet'}'").fetchall() == rel.fetchall()


@needs_extension
def test_duckdb_refuses_a_value_in_a_null_type_column(tmp_path, duckdb_api):
    target = tmp_path / "out"
    tfsql.write_tfrecord(pa.table({"x": [1], "n": pa.nulls(1)}), target)
    con = plain_duckdb()  # kept open: duckdb 1.4 closes a dropped connection
    rel = con.sql(f"SELECT * FROM tfrecord_scan('{target}')")
    arrow_scan = duckdb.connect().sql("SELECT NULL AS n").types  # NULL ("INTEGER" in duckdb 1.4)
    assert ([str(t) for t in rel.types], rel.fetchall()) == (["BIGINT", str(arrow_scan[0])], [(1, None)])
    tfsql.write_tfrecord(pa.table({"x": [2], "n": [5]}), tmp_path / "other.tfrecord")
    (tmp_path / "other.tfrecord").rename(target / "added.tfrecord")
    with pytest.raises(duckdb.Error, match=r"feature 'n' holds 5 in .*added\.tfrecord, record 0 at byte 0, .*\(NULL,"):
        con = plain_duckdb()  # kept open: duckdb 1.4 closes a dropped connection
        con.sql(f"SELECT * FROM tfrecord_scan('{target}')").fetchall()
    with pytest.raises(tfsql.SchemaError, match="record 0 holds a value, but column 'n' is of Arrow's null type"):
        tfsql.read_tfrecord(target)


# --------------------------------------------------------------------------------------
# TensorFlow still parses what every writer wrote
# --------------------------------------------------------------------------------------

TF_SCRIPT = """
import glob, json, sys
import tensorflow as tf
files = sorted(glob.glob(sys.argv[1] + "/**/*.tfrecord*", recursive=True))
out = []
for record in tf.data.TFRecordDataset(files):
    example = tf.train.Example.FromString(record.numpy())
    out.append(sorted(example.features.feature.keys()))
print(json.dumps(sorted(out)))
"""


@pytest.mark.skipif(TF_PYTHON is None, reason=NEEDS_TF_PYTHON)
@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_tensorflow_parses_every_writers_records(tmp_path, writer):
    """Each record of each writer's files is an Example TensorFlow parses, holding the
    features of the row's non-null values (the description beside them is no record)."""
    target = tmp_path / "out"
    WRITERS[writer](ROWS, target)
    done = subprocess.run(
        [TF_PYTHON, "-c", TF_SCRIPT, str(target)],
        capture_output=True,
        text=True,
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    parsed = json.loads(done.stdout.strip().splitlines()[-1])
    table = tfsql.read_tfrecord(target)
    valid = {name: pc.is_valid(table.column(name)).to_pylist() for name in table.schema.names}
    rows = [sorted(name for name in valid if valid[name][r]) for r in range(table.num_rows)]
    assert parsed == sorted(rows)
