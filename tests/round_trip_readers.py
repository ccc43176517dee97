"""The readers of the round-trip tests (tests/integration/test_round_trip_matrix.py and
the Spark writer's in test_spark.py): each reads a written directory and compares it
with what its engine makes of the Python reader's table (`tfsql.read_tfrecord`)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import duckdb
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

import tfsql
from tfsql.polars.types import to_frame
from tfsql.schema import decimal_to_float


def tensorflow_python() -> str | None:
    """An interpreter that imports tensorflow, for the tests that let TensorFlow parse
    what tfsql wrote: ``$TFSQL_TENSORFLOW_PYTHON`` (a TensorFlow venv's python; tfsql
    need not be installed there), else this interpreter when it has tensorflow, else
    None (those tests skip)."""
    given = os.environ.get("TFSQL_TENSORFLOW_PYTHON")
    if given:
        return given
    return sys.executable if importlib.util.find_spec("tensorflow") is not None else None


TF_PYTHON = tensorflow_python()
NEEDS_TF_PYTHON = "no interpreter with tensorflow (set TFSQL_TENSORFLOW_PYTHON to one)"


def assert_same(got: pa.Table, want: pa.Table) -> None:
    """Same schema (names, order, types) and the same values, exactly."""
    assert got.schema.names == want.schema.names
    for name in want.schema.names:
        assert got.schema.field(name).type == want.schema.field(name).type, name
        assert got.column(name).combine_chunks().equals(want.column(name).combine_chunks()), name


def plain_duckdb() -> duckdb.DuckDBPyConnection:
    """Plain DuckDB with the extension loaded (the build TFSQL_DUCKDB_API names)."""
    return tfsql.load_extension(duckdb.connect(config={"allow_unsigned_extensions": "true"}))


def check_polars(target: Path, table: pa.Table) -> None:
    want = to_frame(table)
    for got in (pl.read_tfrecord(target), pl.scan_tfrecord(target).collect()):
        assert got.schema == want.schema
        assert got.equals(want)


#: What plain DuckDB gives the Arrow types it takes from no Arrow stream (or, for a
#: nanosecond time before DuckDB 1.5, which has no TIME_NS, takes only by truncating).
DUCKDB_NEAREST = {
    "float16": "FLOAT",
    "decimal > 38 digits": "DOUBLE (the value's nearest)",
    "time64[ns] before DuckDB 1.5": "BIGINT (the stored nanoseconds)",
}
_HAS_TIME_NS = tuple(int(p) for p in duckdb.__version__.split(".")[:2]) >= (1, 5)


def duckdb_reference(table: pa.Table) -> pa.Table:
    """`table` with the columns DuckDB's Arrow scan does not take as DUCKDB_NEAREST says."""
    for i, field in enumerate(table.schema):
        t = field.type
        if pa.types.is_float16(t):
            table = table.set_column(i, field.name, table.column(i).cast(pa.float32()))
        elif pa.types.is_decimal(t) and t.precision > 38:
            table = table.set_column(i, field.name, decimal_to_float(table.column(i).combine_chunks(), pa.float64()))
        elif t == pa.time64("ns") and not _HAS_TIME_NS:
            table = table.set_column(i, field.name, table.column(i).cast(pa.int64()))
    return table


def sql_result(rel: duckdb.DuckDBPyRelation) -> tuple[list[str], pa.Table]:
    """A query's DuckDB types and its rows as DuckDB exports them to Arrow (fetching
    TIMESTAMPTZ values as Python objects needs pytz in duckdb 1.4)."""
    types = [str(t) for t in rel.types]
    result = rel.arrow()
    return types, result.read_all() if isinstance(result, pa.RecordBatchReader) else result


def check_duckdb(target: Path, table: pa.Table) -> None:
    plain = duckdb.connect()
    plain.register("src", duckdb_reference(table))
    want = sql_result(plain.sql("SELECT * FROM src"))
    con = plain_duckdb()  # kept open: duckdb 1.4 closes a dropped connection
    got = sql_result(con.sql(f"SELECT * FROM tfrecord_scan('{target}')"))
    assert got[0] == want[0]
    assert got[1] == want[1]


def check_cli(target: Path, table: pa.Table, tmp_path: Path) -> None:
    back = tmp_path / "back.parquet"
    done = subprocess.run(
        [sys.executable, "-m", "tfsql", "convert", str(target), str(back)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    pq.write_table(table, tmp_path / "want.parquet")
    assert_same(pq.read_table(back), pq.read_table(tmp_path / "want.parquet"))
